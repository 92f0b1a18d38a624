#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# husk bench: husk (from a snapshot and cold) and its peers measured in
# turns, a JSON report of a fixed shape, a peer that is missing skipped
# with a reason, one that fails in some runs given no ratio, husk's phases,
# and a plot with one curve per sandbox (SVG rendered to PNG).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 13
export HUSK_CACHE=$TMP/cache
mkdir -m 700 "$HUSK_CACHE"
cat >"$TMP/flaky.sh" <<'EOF2'
#!/bin/sh
# a peer that fails every fourth run (never its probes, the 1st and 9th)
n=$(cat "$COUNTER" 2>/dev/null || echo 0)
echo $((n + 1)) >"$COUNTER"
[ $((n % 4)) -eq 3 ] && exit 1
exec "$@"
EOF2
chmod +x "$TMP/flaky.sh"
export COUNTER=$TMP/counter
"$HUSK" bench --runs 6 --warmup 1 --vs native,bwrap,nosuch --peer "flaky=$TMP/flaky.sh {}" --workload print,lua \
	--json "$TMP/r.json" --plot "$TMP/r.svg" >"$TMP/out" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "0:" "husk bench: status 0, nothing on stderr"
/usr/bin/python3 - "$TMP/r.json" >"$TMP/checks" 2>&1 <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
def check(cond, what):
    print(("ok " if cond else "FAIL ") + what)
m = r["machine"]
check(r["schema"] == "husk-bench/1" and r["runs"] == 6 and r["warmup"] == 1, "schema, runs, warm-up")
check(all(isinstance(m[k], str) and m[k] for k in ("uname_r", "cpu", "kvm", "husk")) and
      len(m["loadavg_before"]) == 3 and len(m["loadavg_after"]) == 3, "the machine: kernel, CPU, KVM, husk, load before and after")
check([w["name"] for w in r["workloads"]] == ["print", "lua"], "both workloads")
for w in r["workloads"]:
    s = {e["name"]: e for e in w["sandboxes"]}
    live = [e["name"] for e in w["sandboxes"] if e["status"] != "skipped"]
    check(live == ["husk-snapshot", "husk-cold", "native", "bwrap", "flaky"], w["name"] + ": the sandboxes measured, in order")
    want = [[i, n] for i in range(6) for n in live]
    check(w["order"] == want, w["name"] + ": runs in turns (A B C A B C), every ratio from interleaved runs")
    check(s["nosuch"]["status"] == "skipped" and "unknown peer" in s["nosuch"]["reason"], w["name"] + ": a missing peer skipped, with why")
    ok = [s[n] for n in live if n != "flaky"]
    check(all(len(e["samples_ms"]) == 6 and e["p50"] <= e["p90"] <= e["p99"] <= e["max"] and e["ratio_p50"] > 0 and
              e["command"] and e["isolation"] and e["version"] for e in ok), w["name"] + ": percentiles, ratio, command, isolation, version")
    check(s["native"]["ratio_p50"] == 1.0, w["name"] + ": native is the reference")
    f = s["flaky"]
    check(f["status"] == "failed" and f["failures"] == 2 and f["ratio_p50"] is None, w["name"] + ": a peer that failed in some runs has no ratio")
    ph = w["phases_p50_ms"]
    check(set(ph) == {"husk-snapshot", "husk-cold"} and all(set(p) == {"prepare", "create", "load", "guest_start", "program", "destroy", "write_back", "process"}
          and p["program"] > 0 and p["guest_start"] > 0 for p in ph.values()), w["name"] + ": husk's phases, p50 each")
EOF2
is "$(grep -vc '^ok ' "$TMP/checks")" 0 "the report's JSON: every check holds"
grep -v '^ok ' "$TMP/checks" | sed 's/^/# /'
is "$(grep -c '^ok ' "$TMP/checks")" 17 "... all 17 of them ran"
grep -Eq '^  husk-snapshot +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x  a KVM virtual machine' "$TMP/out"
ok $? "the table: p50, p90, p99, max, the ratio to native and the isolation"
grep -q '^  flaky .* - ' "$TMP/out" && grep -q 'runs failed (.*): no ratio' "$TMP/out"
ok $? "the table prints no ratio for the peer that failed"
grep -q '^  nosuch             skipped: unknown peer' "$TMP/out"
ok $? "the table names the skipped peer and why"
grep -Eq '^  husk-snapshot phases, p50 ms \(sum [0-9.]+\): prepare [0-9.]+, create [0-9.]+, load' "$TMP/out"
ok $? "husk's phases, stacked"
grep -q "^    native: /usr/bin/python3 -c print(1+1)$" "$TMP/out"
ok $? "each sandbox's exact command"
is "$(grep -o 'id="cdf-[a-z]*-[a-z-]*"' "$TMP/r.svg" | sort | tr '\n' ' ')" \
	'id="cdf-lua-bwrap" id="cdf-lua-flaky" id="cdf-lua-husk-cold" id="cdf-lua-husk-snapshot" id="cdf-lua-native" id="cdf-print-bwrap" id="cdf-print-flaky" id="cdf-print-husk-cold" id="cdf-print-husk-snapshot" id="cdf-print-native" ' \
	"the SVG holds one curve per sandbox measured, per workload"
rsvg-convert -o "$TMP/r.png" "$TMP/r.svg"
file "$TMP/r.png" | grep -Eq 'PNG image data, [0-9]{4} x [0-9]{3}'
ok $? "the SVG renders (rsvg-convert) to a PNG readable without zooming"
"$HUSK" bench --runs 1 --vs native --plot "$TMP/r.png" >/dev/null 2>&1 && file "$TMP/r.png" | grep -q 'PNG image data'
ok $? "--plot FILE.png writes a PNG"
"$HUSK" bench --workload nosuch >/dev/null 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: bench: unknown workload nosuch" "an unknown workload: one line, status 125"
"$HUSK" bench --plot out.pdf >/dev/null 2>"$TMP/err"
is "$?:$(wc -l <"$TMP/err")" "125:1" "a plot that is neither .svg nor .png: one line, status 125"
done_testing
