#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Policy files, husk policy show, and the audit trail.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 30

printf '{"memory": "128M", "timeout": 5, "cpu_time": 3, "output_limit": 1000, "env": {"A": "from-policy", "B": "b"}, "pvm": true}\n' > "$TMP/p.json"
"$HUSK" policy show --policy "$TMP/p.json" -m 64M -e A=from-flag > "$TMP/show"
is "$?" 0 "husk policy show prints the effective policy"
grep -q '"memory": 67108864' "$TMP/show" && grep -q '"timeout": 5' "$TMP/show" && grep -q '"output_limit": 1000' "$TMP/show"
ok $? "flags override the policy, the rest comes from it"
grep -q '"A": "from-flag"' "$TMP/show" && grep -q '"B": "b"' "$TMP/show"; ok $? "environment: the flag wins, the policy adds"
is "$("$HUSK" run --policy "$TMP/p.json" lua -e 'print(os.getenv("B"))')" "b" "a run takes the policy's settings"

grep -q '"pids": 256' "$TMP/show"; ok $? "the effective policy has the default pids limit, 256"
printf '{"pids": 3, "open_files": 10}' > "$TMP/pids.json"
"$HUSK" policy show --policy "$TMP/pids.json" | grep -q '"pids": 3'; ok $? "the policy key pids is taken"
"$HUSK" policy show --policy "$TMP/pids.json" --pids 9 | grep -q '"pids": 9'; ok $? "--pids overrides the policy's pids"
is "$("$HUSK" run --policy "$TMP/pids.json" python -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NPROC))')" \
	"(3, 3)" "a run takes the policy's pids limit (getrlimit(RLIMIT_NPROC))"

printf '{"namespaces": false}' > "$TMP/nons.json"
"$HUSK" policy show --policy "$TMP/nons.json" | grep -q '"namespaces": false'
ok $? "the policy can keep the VMM out of new namespaces (\"namespaces\": false)"

bad() { # bad DESCRIPTION PATTERN JSON
	printf '%s' "$3" > "$TMP/bad.json"
	"$HUSK" run --policy "$TMP/bad.json" lua -e '' 2>"$TMP/err"
	[ $? -eq 125 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "$2" "$TMP/err"
	ok $? "$1 is refused with one line and exit 125"
}
bad "an unknown key" 'unknown key "memry"' '{"memry": 1}'
bad "a wrong type" '"timeout" must be a number' '{"timeout": "10"}'
bad "an impossible value" "memory size '1K'" '{"memory": "1K"}'
bad "broken JSON" 'policy' '{"memory": '
bad "a non-integer open_files" '"open_files" must be a whole number' '{"open_files": 2.5}'
bad "a non-object env" '"env" must be an object' '{"env": ["A=1"]}'
bad "a non-integer pids" '"pids" must be a whole number' '{"pids": 2.5}'
bad "a string pids" '"pids" must be a whole number' '{"pids": "8"}'
bad "a pids of 0" "bad pids limit '0' (a number from 1 to 4096)" '{"pids": 0}'
bad "a pids beyond 4096" "bad pids limit '5000' (a number from 1 to 4096)" '{"pids": 5000}'

"$HUSK" run --audit "$TMP/audit" --stats python -c '
import socket, os
try: socket.socket()
except OSError: pass
if os.fork() == 0: os._exit(0)
os.wait()
print("x" * 10)' >/dev/null 2>"$TMP/stats"
grep -q '"event":"start".*"image":"python"' "$TMP/audit"; ok $? "the audit starts with version, image and policy"
grep -q '"event":"denial","kind":"network","what":"socket"' "$TMP/audit"; ok $? "a network attempt is recorded as a denial"
! grep -q '"event":"denial","kind":"process"' "$TMP/audit" && grep -q '"tasks_created":2,' "$TMP/audit"
ok $? "a fork is no denial (processes live in the guest): the end record counts it as a task"
grep -q '"event":"end".*"reason":"exit","status":0.*"bytes_out":11' "$TMP/audit"; ok $? "the end record has reason, status and bytes out"
grep -Eq '"event":"end".*"tasks_created":[1-9][0-9]*,"tasks_peak":[1-9][0-9]*,"phases_ms"' "$TMP/audit"
ok $? "the end record has the guest's task counts, tasks_created and tasks_peak at least 1"
grep -Eq 'tasks: [1-9][0-9]* created, [1-9][0-9]* at most at once' "$TMP/stats"; ok $? "--stats shows them too"
grep -Eq '^husk: phases \(ms\): prepare [0-9.]+, create [0-9.]+, load [0-9.]+, run [0-9.]+, destroy [0-9.]+, write_back [0-9.]+$' "$TMP/stats"
ok $? "--stats shows where the time went, phase by phase"
/usr/bin/python3 - "$TMP/audit" <<'EOF'
import json, sys
end = [json.loads(l) for l in open(sys.argv[1]) if '"end"' in l][-1]
p = end["phases_ms"]
assert list(p) == ["prepare", "create", "load", "run", "destroy", "write_back"], p
assert all(v >= 0 for v in p.values()), p
assert sum(p.values()) <= end["wall_s"] * 1000 + 0.01, (p, end["wall_s"])
assert p["run"] > 0 and p["create"] > 0, p
EOF
ok $? "the audit's end record has the phases, in order, within the run's wall time"
"$HUSK" run --audit "$TMP/thread" python -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()' >/dev/null
grep -Eq '"event":"end","time":[0-9.]*,"reason":"exit","status":0,.*"tasks_created":2,"tasks_peak":2,' "$TMP/thread" &&
	! grep -q '"kind":"process"' "$TMP/thread"
ok $? "a thread is counted (tasks_created 2, tasks_peak 2) and its clone is no process denial"
"$HUSK" run -t 1 --audit "$TMP/audit2" lua -e 'while true do end' 2>/dev/null
grep -q '"event":"limit","kind":"timeout"' "$TMP/audit2" && grep -q '"reason":"timeout","status":124' "$TMP/audit2"
ok $? "a timeout is recorded as a limit hit and as the end reason"
"$HUSK" run -m 64M --audit "$TMP/audit3" python -c 'x = []
while True: x.append(bytearray(1 << 20))' 2>/dev/null
grep -q '"event":"limit","kind":"memory"' "$TMP/audit3" && grep -q '"reason":"memory","status":1' "$TMP/audit3"
ok $? "an uncaught MemoryError is recorded as a limit hit and ends the run for memory"
done_testing
