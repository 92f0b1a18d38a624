# SPDX-License-Identifier: GPL-2.0-only
# AF_INET and AF_INET6 between one program's own threads and processes over
# loopback: tests/integration/loopback.t runs it in husk (--net-loopback)
# and natively (in a network namespace with only lo), and every line must
# read the same.  Ports are always the kernel's choice (port 0).
import asyncio
import errno
import multiprocessing.connection
import os
import selectors
import socket
import socketserver
import threading
import http.server
import urllib.request


def line(name, value):
    print("%s: %s" % (name, value), flush=True)


def err(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def echo_server(family=socket.AF_INET, host="127.0.0.1"):
    l = socket.socket(family)
    l.bind((host, 0))
    l.listen()

    def serve():
        c, _ = l.accept()
        while d := c.recv(65536):
            c.sendall(d)
        c.close()
        l.close()

    threading.Thread(target=serve, daemon=True).start()
    return l.getsockname()[1]


# 1. 3 MB through an echo server in a thread, written from another thread
port = echo_server()
c = socket.create_connection(("127.0.0.1", port))
data = os.urandom(3 << 20)
threading.Thread(target=c.sendall, args=(data,), daemon=True).start()
got = bytearray()
while len(got) < len(data):
    got += c.recv(1 << 20)
line("echo 3 MB", (bytes(got) == data, c.getpeername() == ("127.0.0.1", port)))
c.close()

# 2. IPv6
port = echo_server(socket.AF_INET6, "::1")
c = socket.create_connection(("::1", port))
c.sendall(b"six")
line("ipv6 echo", (c.recv(10), c.getpeername()[:2] == ("::1", port), c.family.name))
c.close()

# 3. names both ends agree on; a listener's SO_ACCEPTCONN; half-close
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(5)
c = socket.socket()
c.connect(l.getsockname())
s, peer = l.accept()
line("names", (peer == c.getsockname(), s.getsockname() == l.getsockname(), s.getpeername() == c.getsockname()))
line("acceptconn", (l.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN),
                    c.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)))
c.sendall(b"question")
c.shutdown(socket.SHUT_WR)
q = s.recv(100)
eof = s.recv(100)
s.sendall(q.upper())
s.close()
line("half-close", (q, eof, c.recv(100), c.recv(100)))
c.close()

# 4. errors: nobody listening, a port in use, an address the machine has not
b = socket.socket()
addr = l.getsockname()
line("in use", err(lambda: b.bind(addr)))
b.close()
l.close()
line("refused", err(lambda: socket.create_connection(addr)))
line("not an address here", err(lambda: socket.socket().bind(("10.9.8.7", 0))))
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen()
l.setblocking(False)
line("accept with none waiting", err(l.accept))

# 5. a non-blocking connect: EINPROGRESS or at once, then writable, SO_ERROR 0
c = socket.socket()
c.setblocking(False)
r = c.connect_ex(l.getsockname())
sel = selectors.DefaultSelector()
sel.register(c, selectors.EVENT_WRITE)
ready = sel.select(5)
line("non-blocking connect", (r in (0, errno.EINPROGRESS), len(ready), c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)))
sel.close()
c.close()
l.close()

# 6. asyncio: a server on :: (asyncio sets IPV6_V6ONLY), a client by IPv6,
# then one by IPv4 refused
async def upper():
    async def handle(r, w):
        w.write((await r.readline()).upper())
        await w.drain()
        w.close()

    srv = await asyncio.start_server(handle, "::", 0)
    p = srv.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("::1", p)
    w.write(b"hello\n")
    await w.drain()
    got = await r.readline()
    w.close()
    try:
        await asyncio.open_connection("127.0.0.1", p)
        v4 = "ok"
    except OSError as e:
        v4 = errno.errorcode[e.errno]
    srv.close()
    await srv.wait_closed()
    return got, v4

line("asyncio", asyncio.run(upper()))

# 7. 50 clients at once to one selector-driven server
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(64)
l.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(l, selectors.EVENT_READ)
clients = [socket.create_connection(l.getsockname()) for _ in range(50)]
for i, c in enumerate(clients):
    c.sendall(b"%d\n" % i)
done = 0
while done < 50:
    for key, _ in sel.select(5):
        if key.fileobj is l:
            s, _ = l.accept()
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        else:
            d = key.fileobj.recv(100)
            if d:
                key.fileobj.sendall(d)
                done += 1
line("50 clients", sorted(int(c.recv(100)) for c in clients) == list(range(50)))
for c in clients:
    c.close()
sel.close()
l.close()

# 8. the standard library's servers: socketserver, http.server in a child
class Upper(socketserver.StreamRequestHandler):
    def handle(self):
        self.wfile.write(self.rfile.readline().upper())

with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Upper) as srv:
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with socket.create_connection(srv.server_address) as c:
        c.sendall(b"socketserver\n")
        line("socketserver", c.recv(100))
    srv.shutdown()

h = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
h.RequestHandlerClass.log_message = lambda *a: None
pid = os.fork()
if pid == 0:
    h.handle_request()
    os._exit(0)
h.socket.close()
r = urllib.request.urlopen("http://127.0.0.1:%d/" % h.server_port)
line("http.server in a child", (r.status, r.headers["Content-Type"]))
line("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))

# 9. multiprocessing's Listener and Client over TCP, the client a child
with multiprocessing.connection.Listener(("127.0.0.1", 0), authkey=b"k") as lst:
    pid = os.fork()
    if pid == 0:
        with multiprocessing.connection.Client(lst.address, authkey=b"k") as conn:
            conn.send({"n": conn.recv() + 1})
        os._exit(0)
    with lst.accept() as conn:
        conn.send(41)
        line("multiprocessing", conn.recv())
    os.waitpid(pid, 0)

# 10. datagrams: an echo over UDP, the sender's address, an empty one
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendto(b"ping", u.getsockname())
d, a = u.recvfrom(100)
u.sendto(d.upper(), a)
e, b = v.recvfrom(100)
v.sendto(b"", u.getsockname())
line("udp", (d, a == ("127.0.0.1", v.getsockname()[1]), e, b == u.getsockname(), u.recvfrom(10)[0]))
v.connect(u.getsockname())
v.send(b"x" * 3000)
line("udp connected, one datagram", (len(u.recv(65536)), v.getpeername() == u.getsockname()))

# 11. a client bound to any before it connects: its name is the loopback's
l = socket.create_server(("127.0.0.1", 0))
c = socket.socket()
c.bind(("0.0.0.0", 0))
c.connect(l.getsockname())
s, peer = l.accept()
line("bound to any, then connected", (c.getsockname()[0], peer == c.getsockname()))

# 12. one port for both families: IPv6 with IPV6_V6ONLY beside IPv4; without
# it, the IPv6 any takes IPv4 too and the port is in use
four = socket.socket()
four.bind(("0.0.0.0", 0))
p = four.getsockname()[1]
six = socket.socket(socket.AF_INET6)
six.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
both = socket.socket(socket.AF_INET6)
line("dual stack", (err(lambda: six.bind(("::", p))), err(lambda: both.bind(("::", p)))))
for x in (four, six, both):
    x.close()

# 13. a receiver's SO_RCVBUF bounds what a non-blocking sender can queue
l = socket.create_server(("127.0.0.1", 0))
c = socket.socket()
c.connect(l.getsockname())
s, _ = l.accept()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
c.setblocking(False)
queued = 0
try:
    while queued < (64 << 20):
        queued += c.send(b"q" * 65536)
except BlockingIOError:
    pass
line("SO_RCVBUF bounds the queue", queued < (8 << 20))

# 14. an accepted socket has its listener's options
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
l.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
l.bind(("127.0.0.1", 0))
l.listen()
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
line("accepted socket's options", (s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) == l.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
                                   s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)))

# 15. non-blocking connects, more than the backlog: EINPROGRESS each (never
# EAGAIN), the first accepted
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
cs = [socket.socket() for _ in range(5)]
for c in cs:
    c.setblocking(False)
codes = {errno.errorcode.get(c.connect_ex(l.getsockname()), "0") for c in cs}
first = l.accept()[0]
line("non-blocking connects beyond the backlog", (sorted(codes), first.getpeername() == cs[0].getsockname()))
for c in cs:
    c.close()

# 16. sendmsg and recvmsg: a stream in three pieces; a datagram with its sender

l = socket.create_server(("127.0.0.1", 0))
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
n = c.sendmsg([b"one ", b"two ", b"three"])
buf1, buf2 = bytearray(5), bytearray(20)
got = s.recvmsg_into([buf1, buf2])
line("sendmsg/recvmsg_into on a stream", (n, got[0], bytes(buf1), bytes(buf2[:got[0] - 5]), got[3]))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.bind(("127.0.0.1", 0))
v.sendmsg([b"dat", b"agram"], [], 0, u.getsockname())
data, anc, flags, addr = u.recvmsg(4)
line("sendmsg/recvmsg on datagrams", (data, anc, flags & socket.MSG_TRUNC != 0, addr == v.getsockname()))

# 17. SO_RCVTIMEO: a blocking recv that waits longer fails with EAGAIN
import struct, time
l = socket.create_server(("127.0.0.1", 0))
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 200000))
t = time.monotonic()
r = err(lambda: s.recv(10))
line("SO_RCVTIMEO", (r, 0.15 < time.monotonic() - t < 2))

# 18. service names (/etc/services)
line("service names", (socket.getservbyname("http"), socket.getservbyport(443, "tcp"),
                       socket.getaddrinfo("127.0.0.1", "ssh", type=socket.SOCK_STREAM)[0][4]))
