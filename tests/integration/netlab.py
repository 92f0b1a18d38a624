#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The network lab of tests/integration/network.t: every server the filtered
network's end-to-end tests talk to, in one process (threads), meant to run
inside a network namespace of the test's own where lo has 127.0.0.1 and
11.0.0.1 (ip addr add 11.0.0.1/8 dev lo).  Host Python 3.11, stdlib only;
the certificates are made with the host's openssl CLI.

    python3 netlab.py DIR

DIR/ca.pem, ca.key     a test CA made now
DIR/server.pem, .key   a certificate for api.test, other.test, rebind.test
DIR/connections.log    "PORT PEER" for every accepted TCP connection
DIR/requests.log       every HTTP request line ("GET /hello HTTP/1.1")
DIR/dns.log            "NAME TYPE" for every DNS query (TYPE: A, AAAA, or a number)
DIR/ready              written once everything listens (and holds the pid)

Servers:
  HTTPS  127.0.0.1:8443, 11.0.0.1:443; HTTP 11.0.0.1:80
         GET /hello      200 "hello from NAME" (NAME: the Host header, no port)
         GET /big?n=N    N bytes, byte k being k % 251
         POST /echo      the body back
  TCP    127.0.0.1:9000 echo until EOF; 9001 sink: reads until EOF, then
         writes the decimal count and closes; 9002 writes "hi\\n" and closes
  DNS    UDP 127.0.0.1:5353, A from TABLE; rebind.test: 11.0.0.1 for its
         first A query, 127.0.0.1 for every later one (TTL 0); AAAA and
         other types: an empty NOERROR answer for listed names; unlisted
         names NXDOMAIN.

SIGTERM or SIGINT: the process closes its sockets and exits 0.
"""
import http.server
import os
import signal
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import threading
import urllib.parse

TABLE = {
    "api.test": "11.0.0.1",
    "other.test": "11.0.0.1",
    "meta.test": "169.254.169.254",
    "private.test": "10.1.2.3",
    "rebind.test": "11.0.0.1",  # the first A query only; then REBIND_TO
}
REBIND = "rebind.test"
REBIND_TO = "127.0.0.1"
CERT_NAMES = ("api.test", "other.test", "rebind.test")
BIG_MAX = 1 << 30       # /big?n= at most 1 GiB
BODY_MAX = 64 << 20     # POST /echo at most 64 MiB
IO_TIMEOUT = 60         # seconds a connection may stall before it is dropped


class Logs:
    """Append-only line logs, each line flushed at once."""

    def __init__(self, d):
        self.lock = threading.Lock()
        self.files = {}
        for name in ("connections", "requests", "dns"):
            self.files[name] = open(os.path.join(d, name + ".log"), "a", buffering=1, encoding="utf-8")

    def line(self, name, text):
        text = text.replace("\n", "\\n").replace("\r", "\\r")
        with self.lock:
            f = self.files[name]
            f.write(text + "\n")
            f.flush()


LOGS = None


def log_accept(port, peer):
    LOGS.line("connections", "%d %s:%d" % (port, peer[0], peer[1]))


# ---- certificates -------------------------------------------------------------

def openssl(d, *args):
    r = subprocess.run(("openssl",) + args, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    if r.returncode:
        sys.stderr.write("netlab: openssl %s failed:\n%s" % (" ".join(args), r.stdout.decode(errors="replace")))
        sys.exit(1)


def make_certs(d):
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    with open(os.path.join(d, "ca.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:TRUE\n"
                "keyUsage=critical,keyCertSign,cRLSign\n"
                "subjectKeyIdentifier=hash\n")
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectKeyIdentifier=hash\n"
                "authorityKeyIdentifier=keyid,issuer\n"
                "subjectAltName=" + ",".join("DNS:" + n for n in CERT_NAMES) + "\n")
    # The CA: a self-signed certificate with the CA extensions.
    openssl(d, "req", "-x509", *ec, "-days", "30", "-subj", "/CN=husk netlab test CA",
            "-keyout", "ca.key", "-out", "ca.pem",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    # The server's key and request, signed by the CA.
    openssl(d, "req", "-new", *ec, "-subj", "/CN=api.test", "-keyout", "server.key", "-out", "server.csr")
    openssl(d, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-set_serial", "0x" + os.urandom(8).hex(), "-days", "30", "-sha256",
            "-extfile", "server.ext", "-out", "server.pem")
    for f in ("server.csr", "ca.ext", "server.ext"):
        os.unlink(os.path.join(d, f))


# ---- TCP servers: accept, log, a thread per connection ----------------------------

class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def get_request(self):
        conn, peer = self.socket.accept()
        log_accept(self.server_address[1], peer)
        conn.settimeout(IO_TIMEOUT)
        return conn, peer

    def handle_error(self, request, client_address):
        # A peer that resets or stalls is part of the tests: no traceback.
        pass


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        while True:
            data = s.recv(65536)
            if not data:
                break
            s.sendall(data)
        s.shutdown(socket.SHUT_WR)


class Sink(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        total = 0
        while True:
            data = s.recv(262144)
            if not data:
                break
            total += len(data)
        s.sendall(str(total).encode())
        s.shutdown(socket.SHUT_WR)


class Hi(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"hi\n")
        self.request.shutdown(socket.SHUT_WR)


# ---- HTTP and HTTPS ----------------------------------------------------------------

BLOCK = bytes(k % 251 for k in range(251 * 261))  # 65511 bytes: a whole number of periods


class Http(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "netlab/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def parse_request(self):
        # Every request line the server reads, well-formed or not.
        if self.raw_requestline:
            LOGS.line("requests", self.raw_requestline.decode("latin-1").rstrip("\r\n"))
        return super().parse_request()

    def reply(self, code, body, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def host(self):
        h = self.headers.get("Host", "")
        if h.startswith("["):  # [v6]:port
            return h[: h.find("]") + 1] if "]" in h else h
        return h.rsplit(":", 1)[0] if h.count(":") == 1 else h

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/hello":
            self.reply(200, ("hello from %s" % self.host()).encode())
        elif u.path == "/big":
            q = urllib.parse.parse_qs(u.query)
            try:
                n = int(q.get("n", ["0"])[0])
            except ValueError:
                n = -1
            if not 0 <= n <= BIG_MAX:
                self.reply(400, b"n: 0 to %d\n" % BIG_MAX)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            left = n
            while left:
                k = min(left, len(BLOCK))
                self.wfile.write(BLOCK[:k])
                left -= k
        else:
            self.reply(404, b"not found\n")

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts, total = [], 0
            while True:
                line = self.rfile.readline(100)
                size = int(line.split(b";")[0].strip() or b"x", 16)
                if size == 0:
                    while self.rfile.readline(1000) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                total += size
                if total > BODY_MAX:
                    raise ValueError("body too large")
                parts.append(self.rfile.read(size))
                self.rfile.readline(10)
        n = int(self.headers.get("Content-Length", "0"))
        if not 0 <= n <= BODY_MAX:
            raise ValueError("body too large")
        return self.rfile.read(n)

    def do_POST(self):
        if urllib.parse.urlsplit(self.path).path != "/echo":
            self.reply(404, b"not found\n")
            return
        try:
            body = self.read_body()
        except ValueError:
            self.close_connection = True
            self.reply(400, b"bad body\n")
            return
        self.reply(200, body, self.headers.get("Content-Type", "application/octet-stream"))


class HttpServer(Server):
    pass


class HttpsServer(Server):
    context = None

    def finish_request(self, request, client_address):
        # The handshake in the connection's own thread, never in accept.
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


# ---- DNS -----------------------------------------------------------------------

T_A, T_AAAA = 1, 28
NOERROR, FORMERR, NXDOMAIN, NOTIMP, REFUSED = 0, 1, 3, 4, 5


class Dns:
    def __init__(self):
        self.lock = threading.Lock()
        self.rebind_asked = 0

    @staticmethod
    def question(p):
        """(name, qtype, qclass, end) of the one question, or None."""
        i, labels, total = 12, [], 0
        while True:
            if i >= len(p):
                return None
            n = p[i]
            if n == 0:
                i += 1
                break
            if n & 0xC0 or i + 1 + n > len(p):  # no compression in a question
                return None
            total += n + 1
            if total > 254:
                return None
            labels.append(p[i + 1: i + 1 + n])
            i += 1 + n
        if i + 4 > len(p):
            return None
        qtype, qclass = struct.unpack_from("!HH", p, i)
        name = b".".join(labels).decode("latin-1")
        return name, qtype, qclass, i + 4

    def answer(self, p):
        """The response to datagram p, or None to drop it."""
        if len(p) < 12 or len(p) > 4096:
            return None
        qid, flags, qd, an, ns, ar = struct.unpack_from("!6H", p)
        if flags & 0x8000:  # a response: never answered
            return None
        opcode = (flags >> 11) & 15
        head = lambda rcode, q, n: struct.pack(
            "!6H", qid, 0x8000 | (opcode << 11) | 0x0400 | (flags & 0x0100) | 0x0080 | rcode, q, n, 0, 0)
        q = self.question(p) if qd == 1 else None
        if q is None:
            LOGS.line("dns", "- malformed")
            return head(FORMERR, 0, 0)
        name, qtype, qclass, end = q
        qsec = p[12:end]
        lname = name.lower().rstrip(".")
        LOGS.line("dns", "%s %s" % (lname, {T_A: "A", T_AAAA: "AAAA"}.get(qtype, str(qtype))))
        if opcode != 0:
            return head(NOTIMP, 1, 0) + qsec
        if qclass != 1:
            return head(REFUSED, 1, 0) + qsec
        if lname not in TABLE:
            return head(NXDOMAIN, 1, 0) + qsec
        if qtype != T_A:
            return head(NOERROR, 1, 0) + qsec
        addr, ttl = TABLE[lname], 60
        if lname == REBIND:
            ttl = 0
            with self.lock:
                self.rebind_asked += 1
                if self.rebind_asked > 1:
                    addr = REBIND_TO
        rr = struct.pack("!HHHIH", 0xC00C, T_A, 1, ttl, 4) + socket.inet_aton(addr)
        return head(NOERROR, 1, 1) + qsec + rr

    def serve(self, sock, stop):
        while not stop.is_set():
            try:
                p, peer = sock.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                if stop.is_set():
                    return
                continue
            try:
                r = self.answer(p)
            except Exception as e:  # never let one datagram end the server
                sys.stderr.write("netlab: dns: %r\n" % (e,))
                r = None
            if r:
                try:
                    sock.sendto(r, peer)
                except OSError:
                    pass


# ---- the lab ---------------------------------------------------------------------

def main():
    global LOGS
    if len(sys.argv) != 2:
        sys.stderr.write("usage: netlab.py DIR\n")
        return 2
    d = os.path.abspath(sys.argv[1])
    os.makedirs(d, exist_ok=True)
    try:
        os.unlink(os.path.join(d, "ready"))
    except FileNotFoundError:
        pass
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())

    make_certs(d)
    LOGS = Logs(d)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))

    servers = []
    try:
        for addr, port in (("127.0.0.1", 8443), ("11.0.0.1", 443)):
            s = HttpsServer((addr, port), Http)
            s.context = ctx
            servers.append(s)
        servers.append(HttpServer(("11.0.0.1", 80), Http))
        servers.append(Server(("127.0.0.1", 9000), Echo))
        servers.append(Server(("127.0.0.1", 9001), Sink))
        servers.append(Server(("127.0.0.1", 9002), Hi))
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 5353))
        udp.settimeout(0.5)
    except OSError as e:
        sys.stderr.write("netlab: cannot listen: %s (is 11.0.0.1 on lo, in a network namespace of its own?)\n" % e)
        return 1

    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True) for s in servers]
    dns = Dns()
    threads.append(threading.Thread(target=dns.serve, args=(udp, stop), daemon=True))
    for t in threads:
        t.start()

    tmp = os.path.join(d, "ready.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(tmp, os.path.join(d, "ready"))

    while not stop.wait(1):
        pass
    for s in servers:
        s.shutdown()
        s.server_close()
    udp.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
