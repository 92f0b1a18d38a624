#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# pylib.sh: the full CPython stdlib source tree matching $BUILD/images/python,
# for running CPython's regression tests (the `test` package is kept) natively
# and in the guest: Lib/ of the python.sh build tree (Debian patches applied)
# plus the generated _sysconfigdata, no __pycache__, to $BUILD/images/python-lib.
# Use it as <prefix>/lib/python3.11 with PYTHONHOME=<prefix>.  Checked natively
# with a staging prefix and a short regrtest run.
# Environment: BUILD (absolute).  Called by images/Makefile.
set -eu
die() { echo "pylib.sh: $*" >&2; exit 1; }
: "${BUILD:?pylib.sh: BUILD is not set}"
work=$BUILD/src/work/python
out=$BUILD/images
py=$out/python
lib=$out/python-lib
tmp=$out/python-lib.tmp
for v in $(env | sed -n 's/^\(PYTHON[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

[ -x "$py" ] || die "$py missing (run python.sh first)"
[ -f "$work/Lib/os.py" ] && [ -f "$work/pybuilddir.txt" ] ||
	die "no CPython build tree in $work (run python.sh again)"
sysconfigdata=$(ls "$work/$(cat "$work/pybuilddir.txt")"/_sysconfigdata_*.py 2>/dev/null) ||
	die "no _sysconfigdata_*.py in $work (run python.sh again)"

rm -rf "$tmp"
cp -a "$work/Lib" "$tmp"
find "$tmp" -name __pycache__ -prune -exec rm -rf {} +
cp $sysconfigdata "$tmp/"

# --- check natively: <stage>/bin/python3 with <stage>/lib/python3.11 ---
stage=$BUILD/src/work/pylib-stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/run"
cp "$py" "$stage/bin/python3"
ln -s "$tmp" "$stage/lib/python3.11"
r=$(PYTHONHOME=$stage "$stage/bin/python3" -B -c '
import sys, json, sysconfig, test.support, unittest
assert json.__file__.startswith(sys.prefix + "/lib/python3.11/json/"), json.__file__
print(sysconfig.get_config_var("MULTIARCH"))') || die "the static python cannot use $tmp natively"
[ "$r" = x86_64-linux-musl ] || die "sysconfig reports MULTIARCH '$r', expected x86_64-linux-musl"
# The run directory holds regrtest's files; its subprocesses write __pycache__
# into the tree despite -B, hence the second clean-up below.
(cd "$stage/run" && PYTHONHOME=$stage "$stage/bin/python3" -B -m test -q test_bisect test_json test_csv test_sqlite3) \
	>"$stage/regrtest.log" 2>&1 || { tail -n 20 "$stage/regrtest.log" >&2; die "regrtest failed natively (see $stage/regrtest.log)"; }
rm -rf "$stage"
find "$tmp" -name __pycache__ -prune -exec rm -rf {} +

rm -rf "$lib"
mv "$tmp" "$lib"
touch "$lib/.stamp"
echo "pylib.sh: $lib ready ($(du -sk "$lib" | cut -f1) KiB, $(find "$lib" -name '*.py' | wc -l) .py files)"
