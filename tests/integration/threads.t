#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Threads (guest/proc/sched.c, thread.c, futex.c, signal.c): the checks of
# tests/progs/threads.c through both system-call doors (pthreads, futexes,
# timed waits, TLS and FPU state per thread, a sleeper beside CPU-bound
# threads, signals to threads and to the process), its modes that end the run
# (exit from a thread, main's pthread_exit, the last thread's SYS_exit, task
# churn in a small guest, a thread's stack overflow, a thread bomb under
# --pids), husk --stats' task counts, and what CPython's threading builds on
# them.  tests/progs/vector_state.c: AVX and AVX-512 registers stay each
# thread's across task switches and signal handlers (a CPU without AVX for
# programs is said, as a TAP skip).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 30
for door in stock husk; do
	out=$("$HUSK" run -t 60 "$PROGS/$door/vector_state" 4 2 2>&1); st=$?
	what="$door libc: 4 threads' YMM/ZMM and mask registers stay their own across task switches and SIGALRM handlers"
	case "$st:$out" in
	"0:no AVX") n=$((n + 1)); echo "ok $n # skip $what: this CPU gives programs no AVX";;
	"0:ok "*) ok 0 "$what (${out#ok })";;
	*) ok 1 "$what: status $st, $out";;
	esac
	P=$PROGS/$door/threads
	out=$("$HUSK" run -t 60 --stats "$P" 2> "$TMP/err"); st=$?
	is "$st:$(echo "$out" | grep -c '^ok ')/$(echo "$out" | grep -c '^not ok')/$(echo "$out" | tail -1)" "0:38/0/done 38" \
		"$door libc: threads, locks, condvars, futex ops, timed waits, TLS, FPU, sleeper beside a spinner (p50 < 2 ms, max < 15 ms late), fairness, sched_yield, signals to threads"
	echo "$out" | grep '^not ok' | sed 's/^/# /'
	made=$(echo "$out" | sed -n 's/^# \([0-9]*\) threads created$/\1/p')
	grep -q "tasks: $((made + 1)) created, 65 at most at once" "$TMP/err"
	ok $? "$door libc: --stats counts the $made threads and main as created, 65 at most at once (64 at a barrier)"

	out=$("$HUSK" run -t 10 "$P" exit-from-thread 2>&1); st=$?
	is "$st:$out" "3:exit(3) from a thread
atexit handler ran in the exiting thread" \
		"$door libc: exit(3) in a thread while three spin and main waits in pthread_join ends the run: 3"

	out=$("$HUSK" run -t 10 "$P" main-pthread-exit 2>&1); st=$?
	is "$st:$out" "0:main: pthread_exit
thread still ran after main's pthread_exit" \
		"$door libc: main's pthread_exit leaves the other thread running; the run ends when it returns: 0"

	# Linux 6.x (synchronize_group_exit in kernel/exit.c; the host's 6.18
	# answers 9 natively): when every thread ends with SYS_exit, the
	# process's status is the last one's code.
	out=$("$HUSK" run -t 10 "$P" raw-exits 2>&1); st=$?
	is "$st:$out" "9:main: SYS_exit(7)
last thread: SYS_exit(9)" \
		"$door libc: main's SYS_exit(7), then the last thread's SYS_exit(9): the run goes on, its status is the last thread's, 9"

	out=$("$HUSK" run -t 30 -m 32M --stats "$P" churn 2> "$TMP/err"); st=$?
	is "$st:$out" "0:churn: 4000 threads" \
		"$door libc: 2000 joined and 2000 detached threads one after another in a 32M guest (what an ended thread held is reused)"
	grep -q 'tasks: 4001 created, [23] at most at once' "$TMP/err"
	ok $? "$door libc: --stats after the churn: 4001 tasks created, at most 2-3 at once ($(grep -o 'tasks: [^,]*, [^,]*' "$TMP/err"))"

	# Linux puts a guard page below each thread's stack (musl asks for it
	# with mprotect PROT_NONE): the overflow must stop there.
	out=$("$HUSK" run -t 10 "$P" stack-overflow 2> "$TMP/err"); st=$?
	lo=$(echo "$out" | sed -n 's/^stack \(0x[0-9a-f]*\)-.*/\1/p')
	addr=$(sed -n 's/.*SIGSEGV (page fault).* address \(0x[0-9a-f]*\).*/\1/p' "$TMP/err")
	[ "$st" = 139 ] && [ -n "$lo" ] && [ -n "$addr" ] && [ $((addr)) -lt $((lo)) ] && [ $((addr)) -ge $((lo - 65536)) ]
	ok $? "$door libc: a thread's stack overflow dies with SIGSEGV on the guard page below its stack (stack from ${lo:-?}; $st: $(cat "$TMP/err"))"

	out=$("$HUSK" run -t 30 "$P" detached-big 2>&1); st=$?
	is "$st:$out" "0:detached-big: 50 threads" \
		"$door libc: 50 detached threads with 4 MiB stacks: each one's munmap of its own stack as it ends (musl's __unmapself) never kills the run"

	out=$("$HUSK" run -t 30 --pids 16 "$P" bomb 2>&1); st=$?
	is "$st:$out" "0:bomb: 15 threads, then Resource temporarily unavailable" \
		"$door libc: a thread bomb under --pids 16: 15 threads beside main, then pthread_create fails with EAGAIN"
done

is "$("$HUSK" run -t 60 python -c '
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(max_workers=4) as ex:
    print(sum(ex.map(lambda x: x * x, range(100))))')" "328350" "Python: ThreadPoolExecutor(4).map over 100 items gives the right sum"
is "$("$HUSK" run -t 60 python -c '
import sys, threading
sys.setswitchinterval(0.0001)  # many more GIL hand-offs inside the loop
n = 0
lock = threading.Lock()
def add():
    global n
    for _ in range(50000):
        with lock:
            n += 1
ts = [threading.Thread(target=add) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print(n)')" "200000" "Python: a threading.Lock counter from 4 threads is exact"
out=$("$HUSK" run -t 60 python -c '
import threading, time
stop = False
def spin():
    x = 0
    while not stop:
        x += 1
t = threading.Thread(target=spin)
t.start()
time.sleep(0.02)
gaps, last = [], time.monotonic()
for _ in range(30):
    time.sleep(0.01)
    now = time.monotonic()
    gaps.append(now - last)
    last = now
stop = True
t.join()
print(max(gaps) < 0.040, "%.1f" % (max(gaps) * 1000))')
is "${out% *}" "True" \
	"Python: a CPU-bound thread does not starve main sleeping 10 ms x 30: max gap < 40 ms (${out#* } ms; the GIL's 5 ms switch interval adds to it)"
is "$("$HUSK" run -t 60 python -c '
import queue, threading
q = queue.Queue(maxsize=10)  # both sides block in turn
got = []
def consumer():
    while (item := q.get()) is not None:
        got.append(item)
c = threading.Thread(target=consumer)
c.start()
for i in range(1000):
    q.put(i)
q.put(None)
c.join(timeout=10)
print(got == list(range(1000)), c.is_alive())')" "True False" "Python: queue.Queue(maxsize=10) producer and consumer pass 1000 items in order"
is "$("$HUSK" run -t 60 python -c '
import threading, time
fired = threading.Event()
at = []
t0 = time.monotonic()
def fire():
    at.append(time.monotonic() - t0)
    fired.set()
threading.Timer(0.05, fire).start()
print(fired.wait(2), bool(at) and 0.05 <= at[0] < 0.15)')" "True True" "Python: threading.Timer(0.05) fires after 50-150 ms"
is "$("$HUSK" run -t 60 python -c '
import threading, time
e = threading.Event()
t0 = time.monotonic()
r1 = e.wait(0.1)
d1 = time.monotonic() - t0
threading.Timer(0.03, e.set).start()
t0 = time.monotonic()
r2 = e.wait(5)
d2 = time.monotonic() - t0
print(r1, 0.1 <= d1 < 0.15, r2, d2 < 0.5)')" "False True True True" \
	"Python: Event.wait(0.1) times out after 100-150 ms; set from another thread, wait(5) returns True at once"
# tests/hostile/06-threads.py: threads that wait for ever until start() fails
out=$("$HUSK" run -t 60 --pids 16 python - < "$ROOT/tests/hostile/06-threads.py" 2>&1); st=$?
is "$st:$(echo "$out" | cut -d: -f1,2)" "0:bomb: RuntimeError after 15 threads" \
	"Python: a thread bomb under --pids 16 stops at 15 threads with RuntimeError, exit 0"
# Ctrl-C while the main thread joins a thread that spins: the signal goes to
# the main thread (as Linux picks it), which wakes from its wait, and Python
# raises KeyboardInterrupt there.
setsid "$HUSK" run -t 20 python -c '
import threading
def spin():
    while True:
        pass
t = threading.Thread(target=spin, daemon=True)
t.start()
try:
    t.join()
except KeyboardInterrupt:
    print("KeyboardInterrupt in join")' > "$TMP/out" 2> "$TMP/err" &
pid=$!
sleep 1.5
kill -INT -$pid
wait $pid
is "$?:$(cat "$TMP/out")" "0:KeyboardInterrupt in join" "Ctrl-C reaches the main thread blocked in join while another thread spins"
done_testing
