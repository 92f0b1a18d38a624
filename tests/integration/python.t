#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# CPython in the microVM: the three ways to run it, the stdlib, and a data job
# over a read-only dataset whose report comes back in the workdir.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 13
export HUSK_CACHE="$TMP/cache"

is "$("$HUSK" run python -c 'print(1+1)')" "2" "husk run python -c"
printf 'import sys\nprint("script from stdin", sys.argv[1:])\n' > "$TMP/s.py"
is "$("$HUSK" run python - a b < "$TMP/s.py")" "script from stdin ['a', 'b']" "husk run python - < script.py"
got=$("$HUSK" run python -c 'import json, csv, sqlite3, statistics, decimal, zlib, datetime, re, pathlib, tempfile
con = sqlite3.connect(":memory:"); con.execute("create table t(x)"); con.executemany("insert into t values (?)", [(i,) for i in range(10)])
print(con.execute("select sum(x) from t").fetchone()[0], decimal.Decimal("0.1") * 3, statistics.mean([1, 2, 4]))')
is "$got" "45 0.3 2.3333333333333335" "the stdlib imports and works (sqlite3, decimal, statistics)"

# A 50 MB dataset: id,group,value rows.
DS=$TMP/dataset JOB=$TMP/job
mkdir -p "$DS" "$JOB"
awk 'BEGIN { print "id,group,value"; s = 12345
	for (i = 0; i < 1300000; i++) { s = (s * 1103515245 + 12345) % 2147483648
		printf "%d,g%d,%d\n", i, s % 7, s % 100000 } }' > "$DS/measurements.csv"
find "$DS" -type f -exec sha256sum {} + | sort > "$TMP/ds.before"
cp "$ROOT/tests/python/analyze.py" "$JOB/"
"$HUSK" run -m 1G --ro data="$DS" -w "$JOB" python analyze.py > "$TMP/out"
is "$?" 0 "the data job runs: husk run --ro data=DIR -w DIR python analyze.py"
[ -f "$JOB/report.json" ]; ok $? "report.json arrives in the workdir on the host"
expected=$(awk -F, 'NR > 1 { c[$2]++; s[$2] += $3; n++ } END { printf "%.0f", n; for (g = 0; g < 7; g++) printf " g%d:%.0f:%.0f", g, c["g" g], s["g" g] }' "$DS/measurements.csv")
got=$("$ROOT/build/images/lua" -e '
local t = io.read("a")
local out = t:match("\"rows\": (%d+)")
for g = 0, 6 do
  local c, s = t:match("\"g" .. g .. "\": {\n%s*\"count\": (%d+),\n%s*\"sum\": (%d+)")
  out = out .. " g" .. g .. ":" .. c .. ":" .. s
end
print(out)' < "$JOB/report.json")
is "$got" "$expected" "the report's counts and sums match the host's"
grep -q "\"sha256\": \"$(sha256sum < "$DS/measurements.csv" | cut -d' ' -f1)\"" "$JOB/report.json"
ok $? "sha256 of the dataset inside the VM equals the host's"
grep -q '^write under /data: 30$' "$TMP/out"; ok $? "writing under /data fails with EROFS (30)"
grep -q 'cwd /workdir$' "$TMP/out"; ok $? "/workdir is the current directory"
find "$DS" -type f -exec sha256sum {} + | sort > "$TMP/ds.after"
cmp -s "$TMP/ds.before" "$TMP/ds.after" && [ ! -e "$DS/intruder.txt" ]; ok $? "the dataset on the host is unchanged"

# tempfile and /tmp, pathlib in the workdir
got=$("$HUSK" run -w "$TMP/job2" python -c '
import tempfile, pathlib, os
with tempfile.NamedTemporaryFile("w+", delete=False) as f: f.write("x" * 10000); name = f.name
p = pathlib.Path("results"); p.mkdir(); (p / "a.txt").write_text("result\n")
print(os.path.getsize(name), name.startswith("/tmp/"), sorted(os.listdir(".")))')
is "$got" "10000 True ['results']" "tempfile in /tmp and pathlib in /workdir (no lost+found the user never made)"
is "$(cat "$TMP/job2/results/a.txt")" "result" "pathlib's output comes back"
is "$("$HUSK" run python -c '
import os
pid = os.fork()
if pid == 0:
    os._exit(5)
print(os.waitpid(pid, 0)[1] >> 8)')" 5 "os.fork: the child runs, its exit status comes back through waitpid"
done_testing
