#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Pipes, Unix socket pairs, eventfd, timerfd, poll/select/epoll inside the
# guest (guest/ipc/): the checks of tests/progs/eventfd_timerfd.c through
# both system-call doors, and what CPython builds on them (os.pipe,
# socket.socketpair, select, selectors, asyncio).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 18
for door in stock husk; do
	out=$("$HUSK" run "$PROGS/$door/eventfd_timerfd" 2> "$TMP/err")
	is "$(echo "$out" | grep -c '^ok ')/$(echo "$out" | grep -c '^not ok')/$(echo "$out" | tail -1)" "60/0/done 60" \
		"$door libc: eventfd (counter, semaphore, blocking, overflow) and timerfd (one-shot, periodic, absolute, poll)"
	echo "$out" | grep '^not ok' | sed 's/^/# /'
done
is "$("$HUSK" run python -c '
import os, threading, time
r, w = os.pipe()
os.write(w, b"hello")
a = os.read(r, 100)
threading.Thread(target=lambda: (time.sleep(0.05), os.write(w, b"late"))).start()
b = os.read(r, 100)
os.close(w)
print(a, b, os.read(r, 10), os.fstat(r).st_mode >> 12)')" "b'hello' b'late' b'' 1" \
	"Python: os.pipe, a read that waits for another thread's write, EOF after the last writer, S_IFIFO"
is "$("$HUSK" run python -c '
import os, signal
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
r, w = os.pipe()
os.close(r)
os.write(w, b"x")' 2>&1; echo "st=$?")" "husk: program killed by SIGPIPE (it sent the signal to itself)
st=141" "a write to a pipe without readers raises SIGPIPE (status 141)"
is "$("$HUSK" run python -c '
import os
r, w = os.pipe()
os.close(r)
try:
    os.write(w, b"x")
except BrokenPipeError:
    print("BrokenPipeError")')" "BrokenPipeError" "Python ignores SIGPIPE: EPIPE is BrokenPipeError"
is "$("$HUSK" run -t 10 python -c '
import socket, threading
a, b = socket.socketpair()
got = []
def reader():
    n = 0
    while n < 1000000:
        n += len(b.recv(65536))
    got.append(n)
t = threading.Thread(target=reader); t.start()
a.sendall(b"x" * 1000000)
t.join()
a.shutdown(socket.SHUT_WR)
d1, d2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
d1.send(b"one"); d1.send(b"two!")
print(got[0], b.recv(10), d2.recv(100), d2.recv(2), a.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE))')" \
	"1000000 b'' b'one' b'tw' 1" "Python: socketpair streams 1 MB between threads, shutdown gives EOF, datagrams keep their bounds"
is "$("$HUSK" run -t 10 python -c '
import os, select, selectors, threading, time
r, w = os.pipe()
print(select.select([r], [w], [], 0)[0:2] == ([], [w]), end=" ")
threading.Thread(target=lambda: (time.sleep(0.05), os.write(w, b"!"))).start()
t0 = time.monotonic(); ready = select.select([r], [], [], 5)[0]; dt = time.monotonic() - t0
print(ready == [r] and 0.03 < dt < 2, end=" ")
p = select.poll(); p.register(r, select.POLLIN)
print(p.poll(0) == [(r, select.POLLIN)], end=" ")
os.read(r, 1)
t0 = time.monotonic(); print(p.poll(100) == [] and time.monotonic() - t0 >= 0.09, end=" ")
ep = select.epoll(); ep.register(r, select.EPOLLIN)
os.write(w, b"z"); print(ep.poll(1) == [(r, select.EPOLLIN)], end=" ")
s = selectors.DefaultSelector(); s.register(r, selectors.EVENT_READ)
print(type(s).__name__, len(s.select(0)))')" "True True True True True EpollSelector 1" \
	"Python: select, poll and epoll see a pipe become readable (and wait the timeout when not); selectors uses epoll"
is "$("$HUSK" run -t 10 python -c '
import asyncio
async def main():
    q = asyncio.Queue()
    async def prod():
        for i in range(10):
            await q.put(i); await asyncio.sleep(0.001)
    asyncio.create_task(prod())
    s = sum([await q.get() for _ in range(10)])
    v = await asyncio.get_running_loop().run_in_executor(None, sum, range(100))
    r = await asyncio.wait_for(asyncio.sleep(5, "late"), 0.05) if False else None
    try:
        await asyncio.wait_for(asyncio.sleep(5), 0.05)
    except asyncio.TimeoutError:
        r = "timeout"
    return s, v, r
print(asyncio.run(main()))')" "(45, 4950, 'timeout')" "Python: asyncio.run with tasks, a queue, run_in_executor (threads) and wait_for's timeout"
out=$("$HUSK" run -t 10 python -c '
import os
fds = []
try:
    while True:
        fds.append(os.pipe())
except OSError as e:
    print(e.errno, len(fds) > 100)' 2>&1)
is "$out" "24 True" "pipes until the open-files limit: EMFILE, the kernel fine"
out=$("$HUSK" run -t 10 -m 56M python -c '
import os
fds = []
try:
    for i in range(1000):
        fds.append(os.pipe())
except OSError as e:
    print(e.errno, 100 < len(fds) < 1000)' 2>&1)
is "$out" "12 True" "1000 pipes of 64 KiB do not fit in -m 56M: ENOMEM, the kernel fine"
is "$("$HUSK" run python -c '
import os, select
e = select.epoll()
fds = [os.pipe()[1] for _ in range(5)]
for f in fds:
    e.register(f, select.EPOLLOUT)
print(sorted(f for f, _ in e.poll()) == fds, len(e.poll(maxevents=2)), sorted(f for f, _ in e.poll()) == fds)')" "True 2 True" \
	"epoll_wait reports every ready fd once (and maxevents at most)"

# stdin: the VMM holds the guest's receive buffer until input comes, so a
# thread reading stdin does not stop the others, poll/select see input, and
# a Ctrl-C interrupts a read that waits.
is "$( (sleep 0.4; echo late) | "$HUSK" run -t 10 python -c '
import sys, threading, time
ticks = []
t = threading.Thread(target=lambda: [ticks.append(time.sleep(0.02)) for _ in range(10)])
t.start()
line = sys.stdin.readline()
t.join()
print(repr(line), len(ticks))')" "'late\n' 10" "a thread runs on while the main thread waits for stdin"
is "$( (sleep 0.3; echo x) | "$HUSK" run -t 10 python -c '
import select, sys, time
t0 = time.monotonic()
a = select.select([sys.stdin], [], [], 0.05)[0]
b = select.select([sys.stdin], [], [], 5)[0]
print(a == [], b == [sys.stdin], time.monotonic() - t0 > 0.2, sys.stdin.readline().strip())')" "True True True x" \
	"select on stdin: not ready before input comes, ready when it does"
out=$( (sleep 8 | timeout --preserve-status -s INT 2 "$HUSK" run -t 20 python -c '
try:
    input()
except KeyboardInterrupt:
    print("KeyboardInterrupt in input")') 2>&1; echo "st=$?")
is "$out" "KeyboardInterrupt in input
st=0" "Ctrl-C interrupts a read of stdin that waits: Python's input() raises KeyboardInterrupt"
is "$(head -c 3000000 /dev/zero | "$HUSK" run python -c 'import sys; print(len(sys.stdin.buffer.read()))')" "3000000" \
	"a large stdin arrives whole (256 KiB at a time)"
is "$("$HUSK" run python -c '
import fcntl, os
r, w = os.pipe()
os.set_blocking(w, False)
a = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ)
b = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 100000)
n = os.write(w, b"x" * 200000)
try:
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
except OSError as e:
    err = e.errno
print(a, b, n, fcntl.fcntl(r, fcntl.F_GETPIPE_SZ), err == 16)')" "65536 131072 131072 131072 True" \
	"F_GETPIPE_SZ 64 KiB; F_SETPIPE_SZ 100000 gives 128 KiB, that much goes in; not below what it holds (EBUSY)"
is "$("$HUSK" run python -c '
import os, shutil
data = os.urandom(300000)
open("/tmp/a", "wb").write(data)
shutil.copyfile("/tmp/a", "/tmp/b")
print("shutil", open("/tmp/b", "rb").read() == data)
i = os.open("/tmp/a", os.O_RDONLY); o = os.open("/tmp/c", os.O_WRONLY | os.O_CREAT)
n = os.copy_file_range(i, o, 1000, 10, 20)
print("copy_file_range", n, open("/tmp/c", "rb").read()[20:] == data[10:1010], os.lseek(i, 0, 1))
r, w = os.pipe()
print("splice", os.splice(i, w, 100, offset_src=5), os.read(r, 200) == data[5:105])
print("sendfile", os.sendfile(w, i, 7, 50), os.read(r, 100) == data[7:57], os.lseek(i, 0, 1))
os.write(w, b"xyz")
print("splice", os.splice(r, o, 10, offset_dst=0), open("/tmp/c", "rb").read(3))
try:
    os.splice(i, o, 10)
except OSError as e:
    print("no pipe", e.errno == 22)' | tr '\n' '|')" \
	"shutil True|copy_file_range 1000 True 0|splice 100 True|sendfile 50 True 0|splice 3 b'xyz'|no pipe True|" \
	"shutil.copyfile (sendfile), copy_file_range, splice both ways and sendfile at offsets that leave the file's own alone; splice without a pipe: EINVAL"
is "$(echo 3 | "$HUSK" run python -c '
import os, socket, subprocess, sys
p = subprocess.run([sys.executable, "-c", "print(open(\"/dev/stdin\").read().strip())"], input=b"7\n", capture_output=True)
f = open("/tmp/x", "w+")
f.write("file")
f.flush()
r, w = os.pipe()
os.write(w, b"pipe")
a, b = socket.socketpair()
try:
    open("/dev/fd/%d" % a.fileno())
except OSError as e:
    err = e.errno
print(p.stdout.strip().decode(), open("/dev/fd/%d" % f.fileno()).read(), open("/proc/self/fd/%d" % f.fileno()).read(),
      os.read(os.open("/dev/fd/%d" % r, os.O_RDONLY), 9).decode(), open("/dev/stdin").read().strip(), err == 6, flush=True)
subprocess.run("echo shell > /dev/stderr", shell=True)' 2>&1 | tr '\n' '|')" "7 file file pipe 3 True|shell|" \
	"/dev/stdin of a child with a pipe, /dev/fd/N and /proc/self/fd/N of a file (reopened) and a pipe (shared), /dev/stdin and /dev/stderr from the shell; a socket: ENXIO"
done_testing
