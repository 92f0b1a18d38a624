#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# pyzip.sh: the CPython stdlib for the guest as $BUILD/images/python-stdlib.zip,
# to be installed as /usr/lib/python311.zip (PYTHONHOME=/usr, or next to
# /usr/bin/python3): sourceless .pyc (unchecked-hash, compiled by the
# python.sh build-tree interpreter itself, so the magic number matches),
# STORED (zipimport then reads without inflating), fixed timestamps, without
# test/ (nor any nested test dirs), idlelib, tkinter, turtledemo, ensurepip,
# lib2to3, pydoc_data, distutils, venv.  The sources of exactly those modules
# go to $BUILD/images/python-src, installed as /usr/lib/python3.11 on the
# system disk: each .pyc names its source there (co_filename), so tracebacks,
# linecache and inspect show source lines, while imports still come from the
# zip (earlier on sys.path) and never compile anything.  Checked natively with
# the final $BUILD/images/python in a staging prefix, with and without -I -S.
# Environment: BUILD (absolute).  Called by images/Makefile.
set -eu
die() { echo "pyzip.sh: $*" >&2; exit 1; }
: "${BUILD:?pyzip.sh: BUILD is not set}"
work=$BUILD/src/work/python
out=$BUILD/images
py=$out/python
zip=$out/python-stdlib.zip
srcdir=$out/python-src
tmp=$BUILD/src/work/pyzip
for v in $(env | sed -n 's/^\(PYTHON[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

[ -x "$py" ] || die "$py missing (run python.sh first)"
[ -x "$work/python" ] && [ -f "$work/Lib/os.py" ] && [ -f "$work/pybuilddir.txt" ] ||
	die "no CPython build tree in $work (run python.sh again)"
sysconfigdata=$(ls "$work/$(cat "$work/pybuilddir.txt")"/_sysconfigdata_*.py 2>/dev/null) ||
	die "no _sysconfigdata_*.py in $work (run python.sh again)"
rm -rf "$tmp"
mkdir -p "$tmp/tree"
cp $sysconfigdata "$tmp/tree/"

# The build-tree interpreter finds its Lib/ from the build directory.
"$work/python" -I - "$work/Lib" "$tmp/tree" "$tmp/stdlib.zip" >"$tmp/pyzip.log" 2>&1 <<'EOF' ||
import compileall, os, py_compile, shutil, sys, zipfile
lib, tree, dest = sys.argv[1:]
SKIP_TOP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3",
            "pydoc_data", "distutils", "venv", "site-packages"}
SKIP_ANY = {"__pycache__", "test", "tests", "idle_test"}
for root, dirs, files in os.walk(lib):
    rel = os.path.relpath(root, lib)
    dirs[:] = [d for d in dirs if d not in SKIP_ANY and not (rel == "." and d in SKIP_TOP)]
    os.makedirs(os.path.join(tree, rel), exist_ok=True)
    for f in files:
        if f.endswith(".py"):
            shutil.copy(os.path.join(root, f), os.path.join(tree, rel, f))
# Legacy layout (mod.pyc beside mod.py) so the .pyc works without its source;
# the code objects name the source files where the system disk has them.
if not compileall.compile_dir(tree, quiet=1, legacy=True, workers=0,
        ddir="/usr/lib/python3.11",
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH):
    sys.exit("compileall failed")
names = []
for root, dirs, files in os.walk(tree):
    dirs.sort()
    rel = os.path.relpath(root, tree)
    prefix = "" if rel == "." else rel + "/"
    if prefix:
        names.append(prefix)
    names += [prefix + f for f in sorted(files) if f.endswith(".pyc")]
with zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as z:
    for n in names:
        zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
        if n.endswith("/"):
            zi.external_attr = (0o40755 << 16) | 0x10
            z.writestr(zi, b"")
        else:
            zi.external_attr = 0o100644 << 16
            with open(os.path.join(tree, n), "rb") as f:
                z.writestr(zi, f.read())
print(len([n for n in names if n.endswith(".pyc")]), "modules")
EOF
	{ tail -n 20 "$tmp/pyzip.log" >&2; die "compiling or zipping the stdlib failed (see $tmp/pyzip.log)"; }

# --- checks, natively, in a clean environment: <stage>/bin/python3 and
# <stage>/lib/python311.zip, as /usr/bin/python3 + /usr/lib/python311.zip ---
stage=$tmp/stage
mkdir -p "$stage/bin" "$stage/lib"
cp "$py" "$stage/bin/python3"
cp "$tmp/stdlib.zip" "$stage/lib/python311.zip"
# The sources, as on the system disk: imports must still all come from the zip.
rm -rf "$tmp/src"
mkdir "$tmp/src"
(cd "$tmp/tree" && find . -name '*.py' | tar cf - -T -) | (cd "$tmp/src" && tar xf -) || die "cannot copy the sources"
cp -a "$tmp/src" "$stage/lib/python3.11"
cd "$tmp"
run() { # run [ENV=VAL...] -- ARGS...: the staged python; stdout, and stderr must stay empty
	e=
	while [ "$1" != -- ]; do e="$e $1"; shift; done
	shift
	env -i $e "$stage/bin/python3" "$@" 2>err.log || { cat err.log >&2; return 1; }
	[ ! -s err.log ] || { cat err.log >&2; echo "(unexpected output on stderr)" >&2; return 1; }
}
check='
import sys, json, csv, sqlite3, statistics, decimal, zlib, datetime, re, pathlib, tempfile
zip = sys.prefix + "/lib/python311.zip"
for name, m in sorted(sys.modules.items()):
    origin = getattr(getattr(m, "__spec__", None), "origin", None)
    assert origin in (None, "built-in", "frozen") or origin.startswith(zip + "/"), (name, origin)
assert json.__file__ == zip + "/json/__init__.pyc", json.__file__
print(sum([statistics.mean([1, 2, 3]), int(decimal.Decimal("40")),
           len(json.loads("[1, 2]")) - 2, zlib.crc32(b"") ]))'
for flags in "" "-I -S"; do
	r=$(run PYTHONHOME="$stage" -- $flags -c "$check") ||
		die "python${flags:+ $flags} with PYTHONHOME and the zip fails natively"
	[ "$r" = 42 ] || die "python${flags:+ $flags} with the zip printed '$r', expected 42"
done
# Without PYTHONHOME, the prefix comes from the executable's location; the
# exec_prefix would fall back to the built-in /usr (the host's here, with its
# dist-packages) unless lib-dynload exists.
mkdir -p "$stage/lib/python3.11/lib-dynload"
r=$(run -- -c "$check") || die "python without PYTHONHOME does not find $stage/lib/python311.zip"
[ "$r" = 42 ] || die "python without PYTHONHOME printed '$r', expected 42"
r=$(run PYTHONHOME="$stage" -- -c 'import sqlite3,zlib,lzma,bz2,decimal,json,csv,unicodedata; print(1+1)') ||
	die "importing sqlite3,zlib,lzma,bz2,decimal,json,csv,unicodedata from the zip fails"
[ "$r" = 2 ] || die "print(1+1) printed '$r'"
r=$(run PYTHONHOME="$stage" -- -c 'import zipfile, sys
z = zipfile.ZipFile(sys.argv[1])
bad = [i.filename for i in z.infolist() if i.compress_type != zipfile.ZIP_STORED or i.filename.endswith(".py")
       or i.filename.split("/")[0] in ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3",
                                       "pydoc_data", "distutils", "venv")]
print(len(bad), *bad[:5])' "$stage/lib/python311.zip") || die "cannot list the zip"
[ "$r" = 0 ] || die "unexpected entries in the zip: $r"
# Each .pyc names its source under /usr/lib/python3.11, and the line it names
# is the one in the source tree (what a traceback prints in the guest).
r=$(run PYTHONHOME="$stage" -- -c 'import json.decoder, sys
c = json.decoder.JSONDecoder.raw_decode.__code__
assert c.co_filename == "/usr/lib/python3.11/json/decoder.py", c.co_filename
line = open(sys.argv[1] + "/json/decoder.py").read().splitlines()[c.co_firstlineno - 1]
print(line.strip())' "$tmp/src") || die "the .pyc do not name their sources in /usr/lib/python3.11"
[ "$r" = "def raw_decode(self, s, idx=0):" ] || die "json/decoder.py: the .pyc's line is '$r'"
nz=$(unzip -Z1 "$tmp/stdlib.zip" | grep -c '\.pyc$') ns=$(cd "$tmp/src" && find . -name '*.py' | wc -l)
[ "$nz" = "$ns" ] || die "$nz .pyc in the zip but $ns sources"
cd /
rm -rf "$stage" "$tmp/tree"

rm -rf "$srcdir"
mv "$tmp/src" "$srcdir"
mv -f "$tmp/stdlib.zip" "$zip"
echo "pyzip.sh: $zip ready ($(wc -c <"$zip") bytes, $(tail -n 1 "$tmp/pyzip.log"))"
