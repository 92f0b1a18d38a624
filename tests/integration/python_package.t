#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Python package (python/husk over build/lib/libhusk.so.0) with Debian's
# python3 and pytest: tests/pylib (results, errors, limits, streaming,
# asyncio, husk.map over 200 inputs, the README's examples, Dask on a
# LocalCluster with hostile tasks), reported as TAP.
. "$(dirname "$0")/../lib.sh"
need_kvm
export HUSK_BIN=$HUSK HUSK_LIBRARY=$ROOT/build/lib/libhusk.so.0 PYTHONPATH=$ROOT/python HUSK_CACHE=$TMP/cache
mkdir -m 700 "$HUSK_CACHE"
cd "$TMP"
/usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml="$TMP/report.xml" "$ROOT/tests/pylib" >"$TMP/log" 2>&1
exec /usr/bin/python3 "$ROOT/tests/pylib/junit_tap.py" "$TMP/report.xml" "$TMP/log"
