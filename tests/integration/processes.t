#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Processes (fork, vfork, execve, wait4/waitid, SIGCHLD, zombies, orphans,
# process groups and sessions, kill between processes): the checks of
# tests/progs/processes.c through both system-call doors, its fork-limit mode
# under --pids, husk --stats' task counts, and what CPython builds on them
# (subprocess, os.fork, multiprocessing, os.posix_spawn, timeouts, signals,
# zombies, a fork loop under --pids).  The program execs itself, so it runs
# from the workdir: copied into -w DIR, started by its host path, and told
# its path in the guest with PROCESSES_SELF=/workdir/processes.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 22
for door in stock husk; do
	W=$TMP/w-$door
	mkdir -p "$W"
	cp "$PROGS/$door/processes" "$W/processes"
	out=$("$HUSK" run -t 60 --stats -w "$W" -e PROCESSES_SELF=/workdir/processes "$W/processes" 2> "$TMP/err"); st=$?
	is "$st:$(echo "$out" | grep -c '^ok ')/$(echo "$out" | grep -c '^not ok')/$(echo "$out" | tail -1)" "0:51/0/done 51" \
		"$door libc: fork (copied memory, pids; copy-on-write: 24 children of a 64 MB parent at once, kernel and device writes into shared pages, a waiter's futex, a handler's frame), exit statuses, wait4/waitpid/waitid, signals, SIGCHLD, descriptors across fork and exec, vfork, posix_spawn, execve, an orphan, groups and sessions, kill(pid, 0), fork beside threads"
	echo "$out" | grep '^not ok' | sed 's/^/# /'
	echo "$out" | grep '^# fork+wait' # the cost, not asserted
	made=$(echo "$out" | sed -n 's/^# \([0-9]*\) processes created$/\1/p')
	created=$(sed -n 's/.*tasks: \([0-9]*\) created, .*/\1/p' "$TMP/err")
	[ -n "$made" ] && [ -n "$created" ] && [ "$made" -ge 100 ] && [ "$created" -ge $((made + 1)) ]
	ok $? "$door libc: --stats counts the processes as tasks: ${created:-?} created, at least the ${made:-?} (100 or more) the program made and itself ($(grep -o 'tasks: [^,]*, [^,]*' "$TMP/err"))"

	# --pids 8: the program, its child, and 6 grandchildren waiting on a pipe.
	out=$("$HUSK" run -t 30 --pids 8 "$PROGS/$door/processes" fork-limit 2>&1); st=$?
	is "$st:$(echo "$out" | tr '\n' '|')" "0:fork-limit: 6 children, then EAGAIN; 6 reaped|fork-limit: the parent goes on; its child exit 0|" \
		"$door libc: a child forks until fork fails under --pids 8: 6 grandchildren, then EAGAIN; they exit, are reaped, the parent goes on"

	# Copy-on-write runs out: 80 MiB shared after fork, then the child writes
	# them all in 128 MiB.  The child is killed (SIGKILL, as Linux's OOM
	# killer would), its memory comes back, the parent goes on.
	out=$("$HUSK" run -t 30 -m 128M "$PROGS/$door/processes" fork-oom 80 2> "$TMP/err"); st=$?
	is "$st:$out" "0:fork-oom: the child signal 9 (Killed); the parent's 80 MiB intact: yes" \
		"$door libc: a forked child that writes more than memory holds is killed with SIGKILL; the parent's memory is intact and it goes on"
done

# pycheck EXPECTED DESCRIPTION SCRIPT [HUSK-OPTIONS...]: the python image runs
# SCRIPT; its status and stdout are checked, its stderr's end shown on a
# failure.  (multiprocessing's locks are POSIX semaphores: musl's sem_open
# makes them in /dev/shm, so the Pool needs a writable /dev/shm as well.)
pycheck() {
	want=$1 what=$2 script=$3
	shift 3
	out=$("$HUSK" run -t 60 "$@" python -c "$script" 2> "$TMP/err"); st=$?
	is "$st:$out" "0:$want" "Python: $what"
	[ "$st:$out" = "0:$want" ] || tail -n 12 "$TMP/err" | sed 's/^/#   stderr: /'
}

pycheck "0 b'42\\n'" 'subprocess.run([sys.executable, "-c", "print(6*7)"], capture_output=True): stdout 42' '
import subprocess, sys
r = subprocess.run([sys.executable, "-c", "print(6*7)"], capture_output=True)
print(r.returncode, r.stdout)'

pycheck "True True 7" "os.fork, os._exit(7) in the child, os.waitpid: WIFEXITED, status 7" '
import os
pid = os.fork()
if pid == 0:
    os._exit(7)
got, st = os.waitpid(pid, 0)
print(got == pid, os.WIFEXITED(st), os.WEXITSTATUS(st))'

pycheck "(65534, 65534, 65534) (65534, 65534, 65534) [] PermissionError" \
	"subprocess.run(user=, group=, extra_groups=): the child runs with those ids and cannot take root back" '
import subprocess, sys
child = "import os\ntry:\n    os.setuid(0)\nexcept OSError as e:\n    print(os.getresuid(), os.getresgid(), os.getgroups(), type(e).__name__)"
r = subprocess.run([sys.executable, "-c", child], user=65534, group=65534, extra_groups=[], capture_output=True, text=True)
print(r.stdout.strip() or r.stderr)'

pycheck "EAGAIN True 1 EAGAIN released EDEADLK" \
	"file locks between processes: lockf held by the parent refuses the child, F_GETLK names the holder, flock conflicts, a close releases, a deadlock is EDEADLK" '
import errno, fcntl, os, time
f = open("/tmp/lk", "w+")
f.write("x" * 100)
f.flush()
fcntl.lockf(f, fcntl.LOCK_EX)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    g = open("/tmp/lk", "r+")
    out = []
    try:
        fcntl.lockf(g, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        out.append(errno.errorcode[e.errno])
    import struct
    got = fcntl.fcntl(g, fcntl.F_GETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
    out.append(str(struct.unpack("hhqqi4x", got)[4] == os.getppid()))
    fcntl.flock(g, fcntl.LOCK_SH)
    out.append("1")
    os.write(w, (" ".join(out) + "\n").encode())
    time.sleep(0.3)
    os._exit(0)
print(os.read(r, 100).decode().strip(), end=" ")
try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError as e:
    print(errno.errorcode[e.errno], end=" ")
os.waitpid(pid, 0)
fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("released", end=" ")
# a deadlock: the parent holds byte 0 and waits for byte 1; the child holds 1 and waits for 0
fcntl.lockf(f, fcntl.LOCK_UN)
fcntl.lockf(f, fcntl.LOCK_EX, 1, 0)
pid = os.fork()
if pid == 0:
    g = open("/tmp/lk", "r+")
    fcntl.lockf(g, fcntl.LOCK_EX, 1, 1)
    os.write(w, b"x")
    try:
        fcntl.lockf(g, fcntl.LOCK_EX, 1, 0)
    except OSError as e:
        os._exit(e.errno)
    os._exit(0)
os.read(r, 1)
time.sleep(0.1)
try:
    fcntl.lockf(f, fcntl.LOCK_EX, 1, 1)
    print("no deadlock")
except OSError as e:
    print("EDEADLK" if e.errno == errno.EDEADLK else errno.errorcode[e.errno])
    fcntl.lockf(f, fcntl.LOCK_UN, 1, 0)
os.waitpid(pid, 0)'

pycheck "database is locked" "sqlite3 between two processes: a write meets the other's exclusive lock and gets 'database is locked' after its timeout" '
import os, sqlite3
db = "/tmp/t.db"
c = sqlite3.connect(db)
c.execute("create table t(x)")
c.commit()
c.execute("begin exclusive")
c.execute("insert into t values (1)")
pid = os.fork()
if pid == 0:
    d = sqlite3.connect(db, timeout=0.2)
    try:
        d.execute("insert into t values (2)")
        d.commit()
        print("no lock", flush=True)
    except sqlite3.OperationalError as e:
        print(e, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
c.commit()'

pycheck "[1, 2]" "multiprocessing (the fork start method): Pool(2).map(abs, [-1, -2])" '
import multiprocessing
with multiprocessing.get_context("fork").Pool(2) as pool:
    print(pool.map(abs, [-1, -2]))'

pycheck "True 3" "os.posix_spawn(sys.executable, ...) and os.waitpid: status 3" '
import os, sys
pid = os.posix_spawn(sys.executable, [sys.executable, "-c", "raise SystemExit(3)"], os.environ)
got, st = os.waitpid(pid, 0)
print(got == pid, os.waitstatus_to_exitcode(st))'

pycheck "TimeoutExpired True" "subprocess.run(timeout=1) of a child sleeping 60 s: TimeoutExpired, the child killed (well under 10 s)" '
import subprocess, sys, time
t0 = time.monotonic()
try:
    subprocess.run([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)
    print("no timeout")
except subprocess.TimeoutExpired:
    print("TimeoutExpired", time.monotonic() - t0 < 10)'

pycheck "b'up\\n' -15" "os.kill(child, SIGTERM) of a sleeping subprocess: returncode -15" '
import os, signal, subprocess, sys
p = subprocess.Popen([sys.executable, "-c", "import time; print(\"up\", flush=True); time.sleep(60)"], stdout=subprocess.PIPE)
up = p.stdout.readline()
os.kill(p.pid, signal.SIGTERM)
print(up, p.wait(timeout=20))'

pycheck "True 3 ChildProcessError" "a zombie (exited, still there for kill(pid, 0)) is reaped by os.wait: status 3; then ChildProcessError" '
import os, time
pid = os.fork()
if pid == 0:
    os._exit(3)
time.sleep(0.3)
os.kill(pid, 0)
got, st = os.wait()
try:
    os.wait()
    again = "another child"
except ChildProcessError:
    again = "ChildProcessError"
print(got == pid, os.waitstatus_to_exitcode(st), again)'

pycheck "True True True" "os.wait4's rusage and getrusage(RUSAGE_CHILDREN) count a busy child's CPU time; RUSAGE_SELF the parent's own" '
import os, resource
pid = os.fork()
if pid == 0:
    sum(range(3000000))
    os._exit(0)
ru = os.wait4(pid, 0)[2]
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
me = resource.getrusage(resource.RUSAGE_SELF).ru_utime
print(ru.ru_utime > 0.01, abs(kids - ru.ru_utime) < 0.01, me < kids + 1)'

pycheck "thread exec: 1 1 1" "execve from a thread beside two others: they end, the new program runs as the process (pid 1, its thread id the pid, one thread)" '
import os, threading, time, sys
def spin():
    while True: time.sleep(0.01)
for _ in range(2): threading.Thread(target=spin, daemon=True).start()
def do_exec():
    os.execv(sys.executable, [sys.executable, "-c", "import os, threading; print(\"thread exec:\", os.getpid(), threading.get_native_id(), threading.active_count())"])
threading.Thread(target=do_exec).start()
time.sleep(5)
print("not reached")'

pycheck "100 exited 0" "multiprocessing (fork): 100 children of a Python with 30 MB of objects, alive at once, in -m 512M (copy-on-write; copies would need 3 GB)" '
import multiprocessing as mp, time
big = [str(i) * 6 for i in range(300000)]
def child():
    time.sleep(0.5)
if __name__ == "__main__":
    ctx = mp.get_context("fork")
    ps = [ctx.Process(target=child) for _ in range(100)]
    for p in ps: p.start()
    for p in ps: p.join()
    print(sum(p.exitcode == 0 for p in ps), "exited 0")' -m 512M

pycheck "fork loop: 7 children, then BlockingIOError; 7 exited 0" "a fork loop under --pids 8: 7 children beside the first, then BlockingIOError (EAGAIN); they exit 0, the run ends 0" '
import os
r, w = os.pipe()
pids = []
try:
    while len(pids) < 100:
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        pids.append(pid)
    err = "no error"
except OSError as e:
    err = type(e).__name__
os.close(w)
codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids]
print("fork loop: %d children, then %s; %d exited 0" % (len(pids), err, codes.count(0)))' --pids 8
done_testing
