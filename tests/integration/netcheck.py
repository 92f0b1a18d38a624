# SPDX-License-Identifier: GPL-2.0-only
"""The guest side of tests/integration/network.t: run by the bundled Python in
husk (python /data/lab/netcheck.py CASE ARGS...), against tests/integration/
netlab.py's servers through the filtered network.  Each case prints one line
that network.t compares; details of a failure go to stderr.  The CA is
/data/lab/ca.pem (LAB_CA overrides it, for running this on the host).

Errors are printed by name: EACCES (a rule refused the connect),
gaierror:EAI_NONAME (a name that does not resolve), ECONNRESET, ...
"""
import errno
import hashlib
import os
import select
import selectors
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request

CA = os.environ.get("LAB_CA", "/data/lab/ca.pem")
ALARM = 45  # seconds a case may take (husk's -t 60 is the last resort)


def outcome(e):
    """A short name for an exception: EACCES, gaierror:EAI_NONAME, ..."""
    if isinstance(e, socket.gaierror):
        names = {getattr(socket, n): n for n in dir(socket) if n.startswith("EAI_")}
        return "gaierror:" + names.get(e.errno, str(e.errno))
    if isinstance(e, ssl.SSLCertVerificationError):
        return "verify-failed:" + str(e.verify_message)
    if isinstance(e, ssl.SSLError):
        return "ssl:" + type(e).__name__
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return type(e).__name__


def note(*a):
    print(*a, file=sys.stderr, flush=True)


def addr_of(host, port):
    """host's first IPv4 address (getaddrinfo, AF_INET: one A query)."""
    return socket.getaddrinfo(host, int(port), socket.AF_INET, socket.SOCK_STREAM)[0][4][0]


def dial(host, port):
    """A blocking connect (no timeout): the socket, or an exception."""
    a = addr_of(host, port)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect((a, int(port)))
    except BaseException:
        s.close()
        raise
    return s


def tls(s, name):
    return ssl.create_default_context(cafile=CA).wrap_socket(s, server_hostname=name)


def recv_all(s, cap=1 << 30):
    parts, n = [], 0
    while n < cap:
        b = s.recv(1 << 20)
        if not b:
            break
        parts.append(b)
        n += len(b)
    return b"".join(parts)


def http_get(s, host, path="/hello"):
    """A GET over s: the response's body (the socket is read to its end)."""
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, host)).encode())
    r = recv_all(s)
    head, _, body = r.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200 "):
        return "status:" + head.split(b"\r\n")[0].decode(errors="replace")
    return body.decode(errors="replace")


# ---- the cases -------------------------------------------------------------------

def c_nonet():
    """socket(AF_INET) with no network: the errno."""
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        print("socket made")
    except OSError as e:
        print(e.errno, outcome(e))


def c_connect(host, port):
    """One blocking connect: ok or the error, and fast (< 1 s) or slow."""
    t = time.monotonic()
    try:
        dial(host, port).close()
        r = "ok"
    except OSError as e:
        r = outcome(e)
    dt = time.monotonic() - t
    print(r, "fast" if dt < 1 else "slow(%.2fs)" % dt)


def c_connect_nb(host, port):
    """A non-blocking connect waited for with selectors: ok or the error."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    r = s.connect_ex((addr_of(host, port), int(port)))
    if r == errno.EINPROGRESS:
        with selectors.DefaultSelector() as sel:
            sel.register(s, selectors.EVENT_WRITE)
            if not sel.select(10):
                print("no event in 10 s")
                return
        r = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    s.close()
    print("ok" if r == 0 else errno.errorcode.get(r, str(r)))


def c_resolve(name, family="inet"):
    """name's addresses (family inet: AF_INET, musl asks A only; any:
    AF_UNSPEC, musl asks A and AAAA), or the error."""
    fam = socket.AF_INET if family == "inet" else socket.AF_UNSPEC
    try:
        infos = socket.getaddrinfo(name, 443, fam, socket.SOCK_STREAM)
        print(",".join(sorted({i[4][0] for i in infos})))
    except OSError as e:
        print(outcome(e))


def c_hello(url):
    """urlopen: the status and the body (https: verified with the lab's CA)."""
    ctx = ssl.create_default_context(cafile=CA) if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, context=ctx, timeout=20) as r:
            print(r.status, r.read().decode(errors="replace"))
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode(errors="replace").strip())
    except urllib.error.URLError as e:  # its reason is the socket's or ssl's error
        note("hello:", repr(e.reason))
        print(outcome(e.reason) if isinstance(e.reason, BaseException) else "URLError:%s" % e.reason)
    except OSError as e:
        note("hello:", repr(e))
        print(outcome(e))


def c_echo(host, port, n):
    """n random bytes to the echo server (sent from a thread), read back."""
    n = int(n)
    data = os.urandom(n)
    s = dial(host, port)
    err = []

    def send():
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError as e:
            err.append(e)

    t = threading.Thread(target=send)
    t.start()
    got = recv_all(s, n + 1)
    t.join()
    s.close()
    if err:
        print("send:", outcome(err[0]))
    elif got == data:
        print("echo", n, "identical")
    else:
        print("echo", n, "got", len(got), "differ")


def c_sink(host, port, n):
    """n bytes to the sink, then its count (or how the connection ended)."""
    n = int(n)
    chunk = bytes(range(256)) * 4096  # 1 MiB
    try:
        s = dial(host, port)
        left = n
        while left:
            k = min(left, len(chunk))
            s.sendall(chunk[:k])
            left -= k
        s.shutdown(socket.SHUT_WR)
        print(recv_all(s, 100).decode(errors="replace") or "eof")
        s.close()
    except OSError as e:
        print(outcome(e))


def c_stream(host, port):
    """Bytes to the sink until the connection ends (the test kills the broker
    meanwhile): how it ended, then how a new connect ends."""
    chunk = b"s" * 65536
    s = dial(host, port)
    print("sending", flush=True)
    try:
        while True:
            s.sendall(chunk)
    except OSError as e:
        first = outcome(e)
    try:
        dial(host, port).close()
        second = "ok"
    except OSError as e:
        second = outcome(e)
    print(first, second)


def c_partial(host, port, k):
    """k connections that send the start of a TLS record and close before any
    name came: what each connect did (each must be dropped by the broker)."""
    out = []
    for _ in range(int(k)):
        try:
            s = dial(host, port)
            s.sendall(b"\x16\x03\x01\x00")
            s.close()
            out.append("ok")
        except OSError as e:
            out.append(outcome(e))
        time.sleep(0.2)
    print(" ".join(out))


def c_big(url, n):
    """GET url (n bytes expected): the bytes read and their sha256."""
    ctx = ssl.create_default_context(cafile=CA)
    h, total = hashlib.sha256(), 0
    with urllib.request.urlopen(url, context=ctx, timeout=30) as r:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            h.update(b)
            total += len(b)
    print(total, h.hexdigest())


def c_rebind():
    """rebind.test twice: the first answer connects (TLS, GET /hello), the
    second, 127.0.0.1, is refused."""
    out = []
    for _ in range(2):
        try:
            a = addr_of("rebind.test", 443)
        except OSError as e:
            out.append(outcome(e))
            continue
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.connect((a, 443))
            with tls(s, "rebind.test") as t:
                out.append("%s %s" % (a, http_get(t, "rebind.test")))
        except OSError as e:
            out.append("%s %s" % (a, outcome(e)))
    print(" | ".join(out))


def c_sni():
    """api.test's address with TLS for other.test (the certificate covers both)."""
    s = dial("api.test", 443)
    try:
        with tls(s, "other.test") as t:
            print("handshake ok:", http_get(t, "other.test"))
    except ssl.SSLCertVerificationError as e:
        print(outcome(e))
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError) as e:
        note("sni:", repr(e))
        print("reset")
    except OSError as e:
        print(outcome(e))


def c_rawhttp(host, port, hosthdr):
    """Plain HTTP to host:port asking for Host hosthdr: the body, reset or eof."""
    try:
        s = dial(host, port)
        body = http_get(s, hosthdr)
        s.close()
        print(body or "eof")
    except (ConnectionResetError, BrokenPipeError) as e:
        note("rawhttp:", repr(e))
        print("reset")
    except OSError as e:
        print(outcome(e))


def c_scan(host, first, last):
    """A connect to every port first..last: how many ended how, and the time."""
    counts = {}
    t = time.monotonic()
    for port in range(int(first), int(last) + 1):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.connect((host, port))
            r = "ok"
        except OSError as e:
            r = outcome(e)
        s.close()
        counts[r] = counts.get(r, 0) + 1
    note("scan: %.2f s" % (time.monotonic() - t))
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))


def c_hi(host, port, k):
    """k connects one after another to the "hi" server: what each read."""
    out = []
    for _ in range(int(k)):
        try:
            s = dial(host, port)
            out.append(recv_all(s, 10).decode(errors="replace").strip() or "eof")
            s.close()
        except OSError as e:
            out.append(outcome(e))
    print(" ".join(out))


def c_open(host, port, k):
    """k connections to the echo server held open at once: ok or the error each."""
    held, out = [], []
    for _ in range(int(k)):
        try:
            held.append(dial(host, port))
            out.append("ok")
        except OSError as e:
            out.append(outcome(e))
    for s in held:  # each still works
        s.sendall(b"x")
        if s.recv(1) != b"x":
            out.append("dead")
        s.close()
    print(" ".join(out))


def c_async(host, port):
    """asyncio's open_connection to the echo server; then a non-blocking
    connect waited for with selectors and with poll, SO_ERROR read."""
    import asyncio

    async def talk():
        r, w = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 10)
        w.write(b"ping from asyncio")
        await w.drain()
        w.write_eof()
        data = await asyncio.wait_for(r.read(), 10)
        w.close()
        await w.wait_closed()
        return data

    out = ["asyncio", asyncio.run(talk()).decode()]
    for how in ("selectors", "poll"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        r = s.connect_ex((host, int(port)))
        if r == errno.EINPROGRESS:
            if how == "selectors":
                with selectors.DefaultSelector() as sel:
                    sel.register(s, selectors.EVENT_WRITE)
                    ready = bool(sel.select(10))
            else:
                p = select.poll()
                p.register(s, select.POLLOUT)
                ready = bool(p.poll(10000))
            if not ready:
                out += [how, "no-event"]
                continue
            r = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if r == 0:  # connected: the echo works too
            s.setblocking(True)
            s.sendall(b"z")
            r = 0 if s.recv(1) == b"z" else -1
        s.close()
        out += [how, str(r)]
    print(" ".join(out))


CASES = {k[2:]: v for k, v in globals().items() if k.startswith("c_")}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in CASES:
        sys.exit("usage: netcheck.py {%s} ARGS" % ",".join(sorted(CASES)))

    def alarm(*a):
        print("ALARM: %s took more than %d s" % (sys.argv[1], ALARM), flush=True)
        os._exit(3)

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(ALARM)
    CASES[sys.argv[1]](*sys.argv[2:])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
