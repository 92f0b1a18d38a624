#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# husk audit show FILE [--run N]: the audit trail in human form, one screen
# per run, each record in its run even when runs append at once (their run
# id); bad input is one line and status 125.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 24
export HUSK_CACHE=$TMP/cache
mkdir -m 700 "$HUSK_CACHE"
A=$TMP/audit.jsonl
mkdir "$TMP/wd"
"$HUSK" run --audit "$A" -w "$TMP/wd" --timeout 1 python -c '
import os, socket
open("made.txt", "w").write("x" * 1000)
try: socket.socket()
except OSError: pass
os.sync()
while True: pass' >/dev/null 2>&1
"$HUSK" run --audit "$A" --allow-net 127.0.0.1:1 -m 64M python -c '
import socket
try: socket.create_connection(("10.0.0.1", 80), timeout=1)
except OSError: pass' >/dev/null 2>&1
"$HUSK" audit show "$A" >"$TMP/out" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "0:" "husk audit show: status 0, nothing on stderr"
is "$(grep -c '^run [12] of 2, id [0-9a-f]\{16\}$' "$TMP/out")" "2" "one screen per run, headed with its number and id"
grep -q 'policy      memory 256M, timeout 1 s' "$TMP/out"
ok $? "the policy in human units"
grep -q 'isolation   a VM of its own; the VMM in namespaces pid, mnt, net, ipc, uts.*an empty root' "$TMP/out"
ok $? "the isolation obtained"
grep -q 'denied: network socket, 1 time(s) (counted by guest)' "$TMP/out"
ok $? "a denial in the timeline, and who counted it"
grep -q 'limit: timeout' "$TMP/out"
ok $? "the limit that ended the first run"
grep -q 'ended       timeout, status 124' "$TMP/out"
ok $? "how the first run ended"
grep -q 'files       1 changed in the workdir' "$TMP/out"
ok $? "what came back to the workdir"
grep -Eq '\+[0-9.]+ s +network connect denied: 10.0.0.1 port 80 \(no allow rule lists it\)' "$TMP/out"
ok $? "a network record with its time in the run"
grep -q 'policy      memory 64M' "$TMP/out" && grep -q 'network: allow 127.0.0.1/32:1; deny none' "$TMP/out"
ok $? "the second run's own policy and network"
grep -Eq 'resources   guest memory at its peak [0-9.]+M' "$TMP/out"
ok $? "the resources used"

"$HUSK" audit show "$A" --run 2 >"$TMP/two"
is "$(grep -c '^run ' "$TMP/two"):$(grep -c 'memory 64M' "$TMP/two")" "1:1" "--run 2: the second run alone"
"$HUSK" audit show "$A" --run -1 >"$TMP/last"
cmp -s "$TMP/two" "$TMP/last"
ok $? "--run -1: the last run"

# Runs appending at once: each record stays with its run.
B=$TMP/together.jsonl
for i in 1 2 3 4; do
	"$HUSK" run --audit "$B" --allow-net 127.0.0.1:1 lua -e 'print(1)' >/dev/null 2>&1 &
done
wait
"$HUSK" audit show "$B" >"$TMP/four"
is "$(grep -c '^run [1-4] of 4, id' "$TMP/four"):$(grep -c '^  started' "$TMP/four"):$(grep -c '^  ended       exit, status 0' "$TMP/four")" \
	"4:4:4" "four runs appending at once: four screens, each with its start and end"

# --audit /dev/fd/N: the records go to a descriptor husk inherits (a
# shell's >(...), libhusk's pipe); every other inherited one is closed at
# once (fd 7 here: a pipe whose reader sees its end while the run goes on).
mkfifo "$TMP/fifo7"
(cat "$TMP/fifo7" >/dev/null; echo "eof" >"$TMP/fifo7.done") &
"$HUSK" run --audit /dev/fd/5 python -c 'import time; time.sleep(3)' 5>"$TMP/fd5.jsonl" 7>"$TMP/fifo7" &
husk_pid=$!
i=0
while [ ! -s "$TMP/fifo7.done" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 $husk_pid 2>/dev/null && [ -s "$TMP/fifo7.done" ]
ok $? "another inherited descriptor is closed at husk's start (its pipe ended while the run went on)"
wait $husk_pid
is "$?:$(grep -c '"event":"start"' "$TMP/fd5.jsonl"):$(grep -c '"event":"end"' "$TMP/fd5.jsonl")" "0:1:1" \
	"--audit /dev/fd/5: the start and end records on the inherited descriptor"
bash -c '"$0" run --audit >(wc -l >"$1.part" && mv "$1.part" "$1") lua -e ""' "$HUSK" "$TMP/subst"
i=0
while [ ! -s "$TMP/subst" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
is "$(cat "$TMP/subst" 2>/dev/null)" "2" "--audit >(command): bash's process substitution gets both records"
"$HUSK" run --audit /dev/fd/9 lua -e '' 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: cannot open the audit file /dev/fd/9: No such file or directory" \
	"--audit /dev/fd/9 not open: one line, 125"

# Bad input.
"$HUSK" audit show "$TMP/none.jsonl" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: cannot read the audit file $TMP/none.jsonl: No such file or directory" "a missing file: one line, 125"
"$HUSK" audit show "$A" --run 3 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: $A holds 2 run(s); there is no run 3" "a run that is not there: one line, 125"
"$HUSK" audit show "$A" --run x 2>"$TMP/err"
is "$?" "125" "--run x: a usage error"
head -c 3000 /dev/urandom >"$TMP/noise"
"$HUSK" audit show "$TMP/noise" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: $TMP/noise holds no audit records (only lines that are not records)" "a file of noise: no records, 125, no crash"
{ echo 'not json'; head -n 1 "$A"; echo '{"event": 5}'; echo '[1,2]'; } >"$TMP/mixed"
"$HUSK" audit show "$TMP/mixed" >"$TMP/out" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "0:husk: note: 3 line(s) of $TMP/mixed are not audit records; skipped" "lines that are not records: skipped and counted"
grep -q 'ended       (no end record' "$TMP/out"
ok $? "a run with no end record says so"
done_testing
