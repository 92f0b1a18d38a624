#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Timeout, kernel self-test on both paths, and proof of native execution.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 26

start=$(date +%s%N)
"$HUSK" run -t 1 lua -e 'while true do end' 2>"$TMP/err"
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
is "$status" 124 "--timeout stops a tight loop with exit 124"
[ "$elapsed_ms" -lt 5000 ]; ok $? "and it stops promptly (${elapsed_ms} ms for a 1 s limit)"
grep -q 'timed out after 1 s' "$TMP/err"; ok $? "with a message"

"$HUSK" run --kernel-selftest > "$TMP/st"
is "$?" 0 "kernel self-test passes on the kvm_pvm path (when present)"
"$HUSK" run --no-pvm -t 120 --kernel-selftest > "$TMP/st-nopvm"
is "$?" 0 "kernel self-test passes on the plain hardware-KVM path (--no-pvm)"
is "$(grep -c '^ok' "$TMP/st-nopvm")" "$(sed -n 's/^1\.\.//p' "$TMP/st-nopvm")" "every self-test line is ok on the --no-pvm path"

# 20 million loop iterations: well under a second natively; KVM's instruction
# emulator (~3.4 us per instruction) would need hours.
got=$("$HUSK" run -t 10 lua -e 'local s = 0 for i = 1, 20000000 do s = s + i % 7 end print(s)')
is "$got" "60000003" "a CPU-bound loop runs natively (finishes well within 10 s)"
start=$(date +%s%N)
"$HUSK" run --cpu-time 1 lua -e 'while true do end' 2>"$TMP/err"
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
is "$status" 152 "--cpu-time stops a CPU burn with 152 (128 + SIGXCPU)"
grep -q 'CPU time limit of 1 s' "$TMP/err" && [ "$elapsed_ms" -lt 5000 ]; ok $? "with a message, promptly (${elapsed_ms} ms)"
is "$("$HUSK" run --cpu-time 1 python -c 'import time; time.sleep(1.5); print("slept")')" "slept" "sleeping does not use up CPU time"

"$HUSK" run --output-limit 1000 lua -e 'for i = 1, 100000 do print(i) end' >"$TMP/out" 2>"$TMP/err"
is "$?:$(wc -c < "$TMP/out")" "153:1000" "--output-limit: stdout has exactly the limit, then the run ends with 153 (128 + SIGXFSZ)"
is "$(grep . "$TMP/err")" "husk: output limit of 1000 bytes reached; run stopped" "with a one-line marker on stderr"
seq 1 1000 | head -c 1000 >"$TMP/want"
cmp -s "$TMP/out" "$TMP/want"; ok $? "the output up to the limit is exactly the program's"
is "$("$HUSK" run --output-limit 6 lua -e 'io.write("hello\n")'; echo " $?")" "hello
 0" "output of exactly the limit is no violation"
# An endless flood without -t ends by the output limit alone, at once.
start=$(date +%s%N)
timeout -s KILL 20 "$HUSK" run --output-limit 1M --audit "$TMP/flood.json" lua -e 'while true do io.write(string.rep("x", 4096)) end' \
	>"$TMP/out" 2>/dev/null
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$status" -eq 153 ] && [ "$elapsed_ms" -lt 5000 ] && [ "$(wc -c <"$TMP/out")" -eq 1048576 ]
ok $? "an output flood without -t ends with 153 in ${elapsed_ms} ms (status $status), 1 MiB out"
grep -q '"event":"limit","kind":"output"' "$TMP/flood.json" && grep -q '"event":"end".*"reason":"output","status":153' "$TMP/flood.json"
ok $? "the audit records the output limit and ends with reason output"
# A reader that never reads: the write blocks, -t still ends the run.
mkfifo "$TMP/fifo"
sleep 30 <"$TMP/fifo" &
reader=$!
start=$(date +%s%N)
timeout -s KILL 20 "$HUSK" run -t 2 lua -e 'while true do io.write(string.rep("x", 65536)) end' >"$TMP/fifo" 2>/dev/null
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill $reader
[ "$status" -eq 124 ] && [ "$elapsed_ms" -lt 5000 ]; ok $? "stdout never read: -t 2 ends the run with 124 in ${elapsed_ms} ms (status $status)"

got=$(OPENAI_API_KEY=sk-fake-secret "$HUSK" run python -c 'import os; print(sorted(os.environ))')
is "$got" "['HOME', 'LANG', 'PATH', 'PYTHONHOME']" "the guest environment is the documented default set: a host secret is invisible"
is "$("$HUSK" run python -c '
import socket
try: socket.socket()
except OSError as e: print(e.errno)')" "97" "socket() fails with EAFNOSUPPORT: there is no network"
# Open files: the policy's limit, EMFILE beyond it, RLIMIT_NOFILE tells it.
got=$("$HUSK" run --open-files 20 --audit "$TMP/nofile.json" lua -e '
local n, f, e = 0
repeat f, e = io.open("/dev/null") n = n + 1 until not f
print(n - 1, e)')
is "$got" "17	/dev/null: No file descriptors available" "--open-files 20: 17 opens beside stdin/out/err, then EMFILE (musl: No file descriptors available)"
grep -q '"event":"limit","kind":"open files","count":1' "$TMP/nofile.json"; ok $? "the audit records the open-files limit hit"
is "$("$HUSK" run --open-files 20 python -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE))')" "(20, 20)" \
	"getrlimit(RLIMIT_NOFILE) reports the limit"
is "$("$HUSK" run python -c '
import resource
resource.setrlimit(resource.RLIMIT_NOFILE, (8, 8))
try: resource.setrlimit(resource.RLIMIT_NOFILE, (8, 9))
except ValueError: print("no raise")
fs = []
try:
    while True: fs.append(open("/dev/null"))
except OSError as e: print(len(fs), e.strerror)')" "no raise
5 No file descriptors available" "the program may lower its limit, not raise it back"
"$HUSK" run --open-files 5000 lua -e '' 2>"$TMP/err"
[ $? -eq 125 ] && grep -q "bad open-files limit '5000' (a number from 3 to 1024)" "$TMP/err"; ok $? "an open-files limit beyond 1024 is refused (125)"
# Threads and processes: the policy's --pids, EAGAIN beyond it (Python: "can't
# start new thread"), RLIMIT_NPROC tells it; a finished thread frees its place.
got=$("$HUSK" run -t 30 --pids 2 --audit "$TMP/pids.json" python -c '
import threading, resource
print(resource.getrlimit(resource.RLIMIT_NPROC))
go = threading.Event()
a = threading.Thread(target=go.wait); a.start()
try: threading.Thread(target=print).start()
except RuntimeError as e: print(e)
go.set(); a.join()
b = threading.Thread(target=print, args=("again",)); b.start(); b.join()')
is "$got" "(2, 2)
can't start new thread
again" "--pids 2: a second thread beside the first fails, getrlimit(RLIMIT_NPROC) reports 2, one may start after another ends"
grep -q '"tasks_created":3,"tasks_peak":2,' "$TMP/pids.json"; ok $? "the audit's end record counts 3 tasks made, at most 2 at once"
done_testing
