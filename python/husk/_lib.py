# SPDX-License-Identifier: GPL-2.0-only
"""libhusk through cffi's ABI mode: the declarations of include/husk.h, and
the library loaded from $HUSK_LIBRARY or the system's library path
(libhusk.so.0, from make install)."""
import os
import re

from cffi import FFI


def _declarations() -> str:
    """include/husk.h, the one statement of the API, as cffi's cdef takes
    it: the C++ guards and the preprocessor lines left out.  Installed
    beside this file (make install); in a checkout, the tree's."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "husk.h"), os.path.join(here, "..", "..", "include", "husk.h")):
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            break
    else:
        raise ImportError("husk: husk.h is neither beside the package nor in its source tree")
    text = re.sub(r"#ifdef __cplusplus.*?#endif", "", text, flags=re.S)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


ffi = FFI()
ffi.cdef(_declarations())

_path = os.environ.get("HUSK_LIBRARY") or "libhusk.so.0"
try:
    lib = ffi.dlopen(_path)
except OSError as e:
    raise ImportError(f"husk: cannot load libhusk ({_path}): {e}; install it (make install) or set HUSK_LIBRARY") from e
