#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A Debian image with numpy, pandas, matplotlib and scipy (the issue's
# "sci"): tests/python/pandas_job.py (a CSV dataset attached with --ro,
# groupby and resample, OpenBLAS's Cholesky, scipy's curve_fit, a figure
# saved as PNG into the workdir) prints in husk what it prints under this
# host's python3 with the same Debian packages, and writes the same PNG;
# and numpy's own linalg and fft tests, as Debian ships them, pass in husk
# with the host's counts (tests/suites/debian-suites runs the other groups).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 9
debian_image t-sci python3-numpy python3-pandas python3-matplotlib python3-scipy python3-pytest python3-hypothesis
mkdir -p "$TMP/data" "$TMP/native" "$TMP/husk"
/usr/bin/python3 "$ROOT/tests/python/make_csv.py" "$TMP/data/m.csv" 20000
cp "$ROOT/tests/python/pandas_job.py" "$TMP/data/"
/usr/bin/python3 "$TMP/data/pandas_job.py" "$TMP/data/m.csv" "$TMP/native" >"$TMP/want" 2>&1
"$HUSK" run -m 1G -t 120 --image t-sci --ro data="$TMP/data" -w "$TMP/husk" \
	python3 /data/data/pandas_job.py /data/data/m.csv /workdir >"$TMP/got" 2>&1
is "$?" 0 "the job ran"
is "$(sed -n '1,7p' "$TMP/got")" "$(sed -n '1,7p' "$TMP/want")" "pandas groupby over the --ro dataset: as natively"
is "$(grep -A11 '^time' "$TMP/got")" "$(grep -A11 '^time' "$TMP/want")" "pandas resample: as natively"
is "$(grep '^cholesky' "$TMP/got")" "$(grep '^cholesky' "$TMP/want")" "numpy's Cholesky (OpenBLAS, LAPACK): as natively"
is "$(grep '^fit' "$TMP/got")" "$(grep '^fit' "$TMP/want")" "scipy's curve_fit: as natively"
is "$(cat "$TMP/got")" "$(cat "$TMP/want")" "the whole output as natively"
got=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
w, h = struct.unpack(">II", b[16:24])
print(b[:8] == b"\x89PNG\r\n\x1a\n", w, h, len(b) > 5000)' "$TMP/husk/daily.png" 2>&1)
is "$got" "True 600 300 True" "matplotlib's figure: a 600x300 PNG in the workdir"
is "$(cmp "$TMP/husk/daily.png" "$TMP/native/daily.png" 2>&1)" "" "the same bytes as the native run's PNG"
summary() { grep -E '^=*[ 0-9a-z,]*(passed|failed|error|skipped|warning)' "$1" | tail -1 | sed 's/=//g; s/^ *//; s/ in [0-9.]*s.*//'; }
(cd "$TMP" && /usr/bin/python3 -m pytest -q -p no:cacheprovider --pyargs numpy.linalg numpy.fft >"$TMP/suite.native" 2>&1)
"$HUSK" run -m 2G -t 900 --image t-sci python3 -m pytest -q -p no:cacheprovider --pyargs numpy.linalg numpy.fft \
	>"$TMP/suite.husk" 2>&1
is "$(summary "$TMP/suite.husk")" "$(summary "$TMP/suite.native")" "numpy's linalg and fft test suites: the host's counts ($(summary "$TMP/suite.native"))"
done_testing
