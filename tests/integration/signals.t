#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Signals delivered to handlers (guest/proc/signal.c): the checks of
# tests/progs/signals.c, tests/progs/itimer.c (timers on the guest's local
# APIC) and tests/progs/posix_timers.c (queued real-time signals, POSIX
# timers: guest/proc/itimer.c) through both system-call doors, abuse that
# must end in SIGSEGV and never hurt the kernel, and what CPython builds on
# them.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 35
for door in stock husk; do
	out=$("$HUSK" run "$PROGS/$door/signals" 2> "$TMP/err"); st=$?
	is "$(echo "$out" | grep -c '^ok ')/$(echo "$out" | grep -c '^not ok')/$(echo "$out" | tail -1)" "21/0/done 21" \
		"$door libc: handlers, SA_SIGINFO, masks, sigaltstack, faults to handlers, context edits, sigsuspend, SA_RESTART"
	echo "$out" | grep '^not ok' | sed 's/^/# /'
	is "$st:$(cat "$TMP/err")" "134:husk: program killed by SIGABRT (it sent the signal to itself)" \
		"$door libc: abort() kills even with a SIGABRT handler that returns"
done
for door in stock husk; do
	out=$("$HUSK" run "$PROGS/$door/itimer")
	is "$(echo "$out" | grep -c '^ok ')/$(echo "$out" | tail -1)" "11/done 11" \
		"$door libc: setitimer ticks in a CPU-bound loop, getitimer, EINTR from nanosleep, pause, alarm, sigtimedwait, ITIMER_PROF"
	echo "$out" | grep '^not ok' | sed 's/^/# /'
done
for door in stock husk; do
	out=$(timeout 60 "$HUSK" run "$PROGS/$door/posix_timers")
	is "$(echo "$out" | grep -c '^ok ')/$(echo "$out" | tail -1)" "28/done 28" \
		"$door libc: sigqueue's queue and its limit, timer_create/settime/gettime/getoverrun/delete, SIGEV_THREAD(_ID), TIMER_ABSTIME"
	echo "$out" | grep '^not ok' | sed 's/^/# /'
done
for mode in handler ignored; do
	arg=; [ $mode = ignored ] && arg=x
	out=$(timeout 20 "$HUSK" run -t 2 "$PROGS/husk/itimer_storm" $arg 2> "$TMP/err"); st=$?
	[ "$st" = 124 ] && [ "$(echo "$out" | grep -c '^alive')" -ge 2 ]
	ok $? "a 1 us interval timer ($mode): the program still runs (periods of at least 100 us), -t still ends it ($st)"
done
for how in bad-sigreturn kernel-altstack no-restorer stack-at-guard bad-xstate; do
	"$HUSK" run "$PROGS/husk/signal_abuse" "$how" 2> "$TMP/err"; st=$?
	is "$st:$(cat "$TMP/err")" \
		"139:husk: program killed by SIGSEGV (a signal frame did not fit on its stack, or rt_sigreturn's was bad)" \
		"abuse: $how ends in SIGSEGV"
done
is "$("$HUSK" run python -c '
import os, signal
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
os.kill(os.getpid(), signal.SIGUSR1)
signal.raise_signal(signal.SIGUSR1)
print(got)')" "[10, 10]" "Python: signal.signal handlers run for os.kill and raise_signal"
is "$("$HUSK" run python -c '
import os, signal
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    print("KeyboardInterrupt")')" "KeyboardInterrupt" "Python: SIGINT raises KeyboardInterrupt"
is "$("$HUSK" run python -c '
import os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
os.kill(os.getpid(), signal.SIGUSR2)
print(sorted(signal.sigpending()), signal.sigtimedwait([signal.SIGUSR2], 0).si_signo, signal.sigtimedwait([signal.SIGUSR2], 0.01))')" \
	"[<Signals.SIGUSR2: 12>] 12 None" "Python: sigpending and sigtimedwait (with a timeout)"
"$HUSK" run python -c 'import faulthandler; faulthandler.enable(); print(faulthandler.is_enabled(), flush=True); faulthandler._sigsegv()' > "$TMP/out" 2> "$TMP/err"
st=$?
is "$st:$(cat "$TMP/out")" "139:True" "Python: faulthandler.enable() (sigaltstack), then a segfault: 139"
grep -q '^Fatal Python error: Segmentation fault' "$TMP/err" && grep -q 'File "<string>", line 1' "$TMP/err"
ok $? "faulthandler's traceback reaches stderr from its handler on the alternate stack"
is "$("$HUSK" run python -c '
import signal
signal.signal(signal.SIGALRM, lambda s, f: None)
print(signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL, signal.alarm(0))')" "True 0" "Python: alarm(0) answers 0"
is "$("$HUSK" run python -c '
import signal, time
n = 0
def tick(s, f):
    global n
    n += 1
signal.signal(signal.SIGALRM, tick)
signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
t = time.monotonic()
for i in range(10**9):
    if i % 100000 == 0 and time.monotonic() - t > 0.5:
        break
signal.setitimer(signal.ITIMER_REAL, 0)
print(40 <= n <= 55)')" "True" "Python: signal.setitimer at 10 ms ticks 40-55 times in 0.5 s of bytecode"
is "$("$HUSK" run python -c '
import signal, time
class Late(Exception): pass
def late(s, f): raise Late()
signal.signal(signal.SIGALRM, late)
signal.alarm(1)
t = time.monotonic()
try:
    time.sleep(30)
except Late:
    print("Late after", round(time.monotonic() - t))')" "Late after 1" "Python: signal.alarm interrupts time.sleep with the handler's exception"
is "$(timeout 20 "$HUSK" run python -c '
import signal
class Late(Exception): pass
def late(s, f): raise Late()
signal.signal(signal.SIGALRM, late)
signal.setitimer(signal.ITIMER_REAL, 0.2)
x = 0
try:
    while True:
        x += 1
except Late:
    print("stopped")')" "stopped" "Python: a timer's exception stops a CPU-bound loop that makes no system call"
# Ctrl-C (SIGINT to husk's process group) reaches the program first.
# ctrl_c N DELAY HUSK-ARGS...: husk in a session of its own, then N Ctrl-C's
# DELAY s apart (the first after 1.5 s); sets st and ms (from the start).
ctrl_c() {
	count=$1 delay=$2
	shift 2
	start=$(date +%s%N)
	setsid "$HUSK" run "$@" > "$TMP/out" 2> "$TMP/err" &
	pid=$!
	sleep 1.5
	while [ "$count" -gt 0 ]; do
		kill -INT -$pid
		count=$((count - 1))
		[ "$count" -gt 0 ] && sleep "$delay"
	done
	wait $pid
	st=$? ms=$((($(date +%s%N) - start) / 1000000))
}
mkdir -p "$TMP/kw"
printf 'import sys, time\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    open("cleaned.txt", "w").write("yes")\n    print("caught", flush=True)\n    sys.exit(130)\n' > "$TMP/kw/ki.py"
ctrl_c 1 0 -w "$TMP/kw" python ki.py
is "$st:$(cat "$TMP/out")" "130:caught" "Ctrl-C: the sleeping program gets KeyboardInterrupt and exits as it chooses"
is "$(cat "$TMP/kw/cleaned.txt" 2>/dev/null)" "yes" "what it wrote while cleaning up is written back"
ctrl_c 1 0 python -c '
n = 0
try:
    while True:
        n += 1
except KeyboardInterrupt:
    print("caught")'
is "$st:$(cat "$TMP/out")" "0:caught" "Ctrl-C: a CPU-bound loop gets KeyboardInterrupt too"
IGNORE='import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(30)'
ctrl_c 1 0 python -c "$IGNORE"
[ "$st" = 130 ] && [ "$ms" -gt 3000 ] && [ "$ms" -lt 6500 ]
ok $? "a program that ignores Ctrl-C is killed after the 2 s grace: 130 ($st in $ms ms)"
ctrl_c 2 0.3 python -c "$IGNORE"
[ "$st" = 130 ] && [ "$ms" -lt 3000 ]; ok $? "a second Ctrl-C ends the run at once: 130 ($st in $ms ms)"
# One request delivered twice (timeout(1) signals its child, then its group):
# still one request, the program catches it.
for ns in "" --no-namespaces; do
	setsid "$HUSK" run $ns python -c '
try:
    import time; time.sleep(30)
except KeyboardInterrupt:
    print("caught")' > "$TMP/out" 2>&1 &
	pid=$!
	sleep 1.5
	kill -INT $pid
	kill -INT -$pid
	wait $pid
	is "$?:$(cat "$TMP/out")" "0:caught" "one SIGINT delivered to husk and to its group at once is one request ${ns:-(supervised)}"
done
ctrl_c 1 0 --no-namespaces python -c '
try:
    import time; time.sleep(30)
except KeyboardInterrupt:
    print("caught")'
is "$st:$(cat "$TMP/out")" "0:caught" "Ctrl-C without namespaces (no supervisor) reaches the program too"
"$HUSK" run lua -e 'while true do end' 2> "$TMP/err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
is "$?:$(cat "$TMP/err")" "143:husk: program killed by SIGTERM (husk received it and passed it on)" \
	"SIGTERM to husk: a program with no handler dies of it, and husk says where it came from"
out=$("$HUSK" run --syscalls python -c 'import faulthandler, signal, os; faulthandler.enable(); signal.signal(signal.SIGUSR1, lambda *a: 0); os.kill(os.getpid(), signal.SIGUSR1)' 2>&1)
echo "$out" | grep -q 'sigaltstack.*ENOSYS\|rt_sigreturn.*ENOSYS'; is "$?" 1 "sigaltstack and rt_sigreturn are implemented"
echo "$out" | grep -q ' 15 rt_sigreturn'; ok $? "the handler returned through rt_sigreturn (counted)"
done_testing
