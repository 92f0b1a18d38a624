# Unix sockets as programs use them: one line per check, "name: result".
# tests/integration/sockets.t runs it in husk and natively (Debian's python3)
# and compares the lines.  argv[1]: a writable directory for socket files.
import array, asyncio, errno, multiprocessing, multiprocessing.connection, os, socket, stat, struct, sys, threading

D = sys.argv[1]
out = []


def check(name, fn):
    try:
        got = fn()
    except Exception as e:  # the error is the result
        got = "%s %s" % (type(e).__name__, errno.errorcode.get(getattr(e, "errno", None), ""))
    print("%s: %s" % (name, got), flush=True)


def path(name):
    p = os.path.join(D, name)
    if os.path.lexists(p):
        os.unlink(p)
    return p


def listener(name, kind=socket.SOCK_STREAM, backlog=5):
    p = path(name)
    l = socket.socket(socket.AF_UNIX, kind)
    l.bind(p)
    l.listen(backlog)
    return p, l


def stream_roundtrip():
    p, l = listener("s1")
    c = socket.socket(socket.AF_UNIX)
    c.connect(p)
    s, peer = l.accept()
    c.sendall(b"hello")
    got = s.recv(100)
    t = threading.Thread(target=s.sendall, args=(b"x" * 300000,))  # more than a socket buffer
    t.start()
    n = 0
    while n < 300000:
        n += len(c.recv(65536))
    t.join()
    st = os.stat(p)
    r = (got, n, stat.S_ISSOCK(st.st_mode), s.getsockname() == p, repr(peer), c.getpeername() == p,
         repr(c.getsockname()))
    c.close()
    r += (s.recv(10),)  # EOF after the peer's close
    for x in (s, l):
        x.close()
    return r


def bind_errors():
    p = path("s2")
    a = socket.socket(socket.AF_UNIX)
    a.bind(p)
    r = []
    for fn in (lambda: socket.socket(socket.AF_UNIX).bind(p),  # EADDRINUSE
               lambda: a.bind(path("s3")),  # already bound: EINVAL
               lambda: socket.socket(socket.AF_UNIX).connect(p),  # bound, not listening
               lambda: socket.socket(socket.AF_UNIX).connect(os.path.join(D, "none")),
               lambda: socket.socket(socket.AF_UNIX).connect(D),  # a directory
               lambda: open(p, "rb"),  # ENXIO
               lambda: socket.socket(socket.AF_UNIX).bind(os.path.join(D, "no/such/dir")),
               lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).connect("\0nobody-here"),
               lambda: a.recv(1), lambda: a.send(b"x")):
        try:
            fn()
            r.append("ok")
        except OSError as e:
            r.append(errno.errorcode[e.errno])
    a.close()
    return r


def abstract_and_autobind():
    l = socket.socket(socket.AF_UNIX)
    l.bind("\0husk-test-abstract")
    l.listen(5)
    c = socket.socket(socket.AF_UNIX)
    c.bind("")  # autobind: five hex digits in the abstract namespace
    c.connect("\0husk-test-abstract")
    s, peer = l.accept()
    auto = c.getsockname()
    r = (s.getsockname(), len(auto), auto[:1], peer == auto)
    for x in (s, c, l):
        x.close()
    return r


def datagrams():
    pa, pb = path("d1"), path("d2")
    a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    b = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.bind(pa)
    b.bind(pb)
    a.sendto(b"one", pb)
    a.sendto(b"two-long", pb)
    u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    u.sendto(b"anon", pb)
    r1 = b.recvfrom(100)
    r2 = b.recvfrom(3)  # the rest of the datagram is dropped
    r3 = b.recvfrom(100)
    b.connect(pa)
    b.send(b"back")
    r4 = a.recvfrom(100)
    b.setblocking(False)
    try:
        b.recv(10)
        r5 = "data"
    except BlockingIOError:
        r5 = "EAGAIN"
    for x in (a, b, u):
        x.close()
    return r1 == (b"one", pa), r2 == (b"two", pa), r3, r4 == (b"back", pb), r5


def seqpacket():
    p, l = listener("q1", socket.SOCK_SEQPACKET)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(p)
    s, _ = l.accept()
    c.send(b"first")
    c.send(b"second")
    r = (s.recv(3), s.recv(100))
    c.close()
    r += (s.recv(100),)
    s.close()
    l.close()
    return r


def pass_fds():
    # a pipe's read end and a file, sent to a forked child over a socketpair
    a, b = socket.socketpair()
    r, w = os.pipe()
    f = open(path("f1"), "w+")
    f.write("in the file")
    f.flush()
    pid = os.fork()
    if pid == 0:
        msg, anc, flags, _ = b.recvmsg(100, socket.CMSG_SPACE(8 * 4))
        fds = array.array("i")
        for level, typ, data in anc:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        os.lseek(fds[1], 0, 0)
        b.sendall(msg + b"|" + os.read(fds[0], 100) + b"|" + os.read(fds[1], 100))
        os._exit(0)
    os.write(w, b"through the pipe")
    socket.send_fds(a, [b"fds"], [r, f.fileno()])
    os.close(r)
    got = a.recv(200)
    os.waitpid(pid, 0)
    return got


def pass_fds_truncated():
    a, b = socket.socketpair()
    r, w = os.pipe()
    socket.send_fds(a, [b"x"], [r, w, r])
    msg, fds, flags, _ = socket.recv_fds(b, 10, 1)  # room for one
    r2 = (msg, len(fds), bool(flags & socket.MSG_CTRUNC))
    a.sendall(b"plain")
    socket.send_fds(a, [b"with"], [w])
    r2 += (b.recv(100),)  # stops after the message that carries a descriptor, which is dropped
    a.sendall(b"more")
    socket.send_fds(a, [b"with"], [w])
    a.sendall(b"after")
    msg, fds, flags, _ = socket.recv_fds(b, 100, 4)
    os.write(fds[0], b"!")
    return r2 + (msg, len(fds), os.read(r, 10), b.recv(100))


def peer_credentials():
    a, b = socket.socketpair()
    pid, uid, gid = struct.unpack("3i", a.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    b.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    a.sendall(b"c")
    msg, anc, flags, _ = b.recvmsg(10, socket.CMSG_SPACE(12))
    cpid = struct.unpack("3i", anc[0][2])[0] if anc else None
    return pid == os.getpid(), uid == os.getuid(), cpid == os.getpid(), anc[0][1] if anc else None


def nonblocking_accept():
    p, l = listener("n1", backlog=1)
    l.setblocking(False)
    try:
        l.accept()
        r = "accepted"
    except BlockingIOError:
        r = "EAGAIN"
    c = socket.socket(socket.AF_UNIX)
    c.connect(p)
    s, _ = l.accept()
    ok = (r, s.getblocking(), l.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
    for x in (s, c, l):
        x.close()
    return ok


def threads_accept():
    p, l = listener("t1")
    got = []

    def serve():
        for _ in range(3):
            s, _ = l.accept()
            got.append(s.recv(10))
            s.close()
    t = threading.Thread(target=serve)
    t.start()
    for i in range(3):
        c = socket.socket(socket.AF_UNIX)
        c.connect(p)
        c.sendall(b"c%d" % i)
        c.close()
    t.join()
    l.close()
    return sorted(got)


def multiprocessing_listener():
    addr = path("mp")
    with multiprocessing.connection.Listener(addr, family="AF_UNIX") as l:
        pid = os.fork()
        if pid == 0:
            with multiprocessing.connection.Client(addr, family="AF_UNIX") as c:
                c.send({"x": [1, 2, 3]})
                c.recv()
            os._exit(0)
        with l.accept() as s:
            v = s.recv()
            s.send("done")
    os.waitpid(pid, 0)
    return v


def multiprocessing_manager():
    with multiprocessing.Manager() as m:
        d = m.dict()
        d["k"] = 5
        lst = m.list(range(3))
        lst.append(3)
        return dict(d), list(lst)


def asyncio_unix():
    p = path("a1")

    async def handle(reader, writer):
        writer.write((await reader.readline()).upper())
        await writer.drain()
        writer.close()

    async def main():
        server = await asyncio.start_unix_server(handle, p)
        reader, writer = await asyncio.open_unix_connection(p)
        writer.write(b"ping\n")
        line = await reader.readline()
        writer.close()
        server.close()
        await server.wait_closed()
        return line
    return asyncio.run(main())


def socket_in_listing():
    p = path("ls1")
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    e = [x for x in os.scandir(D) if x.name == "ls1"][0]
    r = (e.is_socket() if hasattr(e, "is_socket") else stat.S_ISSOCK(e.stat(follow_symlinks=False).st_mode),
         e.is_file())
    os.unlink(p)
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(p)  # the name is gone, the socket bound still
        r += ("connected",)
    except OSError as x:
        r += (errno.errorcode[x.errno],)
    s.close()
    return r


def mkfifo():
    p = path("fifo")
    os.mkfifo(p)
    r = (stat.S_ISFIFO(os.stat(p).st_mode),)
    pid = os.fork()
    if pid == 0:
        with open(p, "wb") as w:
            w.write(b"through the fifo")
        os._exit(0)
    with open(p, "rb") as f:
        r += (f.read(),)
    os.waitpid(pid, 0)
    try:
        os.open(p, os.O_WRONLY | os.O_NONBLOCK)
        r += ("opened",)
    except OSError as e:
        r += (errno.errorcode[e.errno],)
    return r


for name, fn in [("stream", stream_roundtrip), ("bind errors", bind_errors),
                 ("abstract", abstract_and_autobind), ("datagrams", datagrams), ("seqpacket", seqpacket),
                 ("pass fds", pass_fds), ("pass fds truncated", pass_fds_truncated),
                 ("peer credentials", peer_credentials), ("nonblocking accept", nonblocking_accept),
                 ("threads accept", threads_accept), ("multiprocessing listener", multiprocessing_listener),
                 ("multiprocessing manager", multiprocessing_manager), ("asyncio unix", asyncio_unix),
                 ("socket in listing", socket_in_listing), ("mkfifo", mkfifo)]:
    check(name, fn)
