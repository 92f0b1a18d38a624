#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# pytest in husk: Debian's python3-pytest and its pure-Python dependencies
# attached read-only, a suite with parametrize, tmp_path, capsys, capfd and
# a failing test, reported as natively (pytest starts only with signals:
# faulthandler.enable() needs sigaltstack).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 5
DIST=/usr/lib/python3/dist-packages
if [ ! -d "$DIST/_pytest" ]; then
	echo "Bail out! Debian's python3-pytest is missing (scripts/install-deps installs it)"
	exit 1
fi
mkdir -p "$TMP/pkgs" "$TMP/w"
for p in pytest _pytest pluggy iniconfig packaging attr attrs exceptiongroup tomli py.py; do
	[ -e "$DIST/$p" ] && cp -r "$DIST/$p" "$TMP/pkgs/"
done
cp "$ROOT/tests/python/test_pytest_demo.py" "$TMP/w/"
"$HUSK" run -m 512M --ro pkgs="$TMP/pkgs" -w "$TMP/w" -e PYTHONPATH=/data/pkgs \
	python -m pytest -q -p no:cacheprovider test_pytest_demo.py > "$TMP/husk.out" 2> "$TMP/husk.err"
is "$?" 1 "pytest in husk exits 1: one test fails"
(cd "$TMP/w" && /usr/bin/python3 -m pytest -q -p no:cacheprovider test_pytest_demo.py > "$TMP/native.out" 2>&1)
summary() { grep -E '^(FAILED|[0-9]+ (failed|passed))' "$1" | sed 's/ in [0-9.]*s.*//'; }
is "$(summary "$TMP/husk.out")" "$(summary "$TMP/native.out")" "the same summary as natively"
is "$(summary "$TMP/husk.out" | tail -1)" "1 failed, 6 passed" "6 passed (parametrize x3, tmp_path, capsys, capfd), 1 failed"
grep -q 'assert (1 + 1) == 3' "$TMP/husk.out"; ok $? "the failure shows the assertion rewritten, with its source line"
# CPython's own runner, with the standard library's tests attached read-only.
out=$("$HUSK" run -m 1G -t 120 --ro pylib="$ROOT/build/images/python-lib" -e PYTHONPATH=/data/pylib \
	python -m test -q test_bisect 2>&1)
echo "$out" | grep -q '^Tests result: SUCCESS'; ok $? "python -m test -q test_bisect (CPython's regrtest) succeeds"
done_testing
