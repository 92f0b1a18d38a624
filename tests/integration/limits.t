#!/bin/sh
# Timeout, kernel self-test on both paths, and proof of native execution.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 14

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
is "$(wc -c < "$TMP/out")" 1000 "--output-limit cuts stdout at the limit"
grep -q 'output limit of 1000 bytes reached' "$TMP/err"; ok $? "with a one-line marker on stderr"

got=$(OPENAI_API_KEY=sk-fake-secret "$HUSK" run python -c 'import os; print(sorted(os.environ))')
is "$got" "['HOME', 'LANG', 'PATH', 'PYTHONHOME']" "the guest environment is the documented default set: a host secret is invisible"
is "$("$HUSK" run python -c '
import socket
try: socket.socket()
except OSError as e: print(e.errno)')" "97" "socket() fails with EAFNOSUPPORT: there is no network"
done_testing
