#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A check of network.t's lab without husk (not a .t: make check does not run
# it): in a network namespace of its own (root: unshare --net), netlab.py's
# servers answered by the host's curl, openssl and python3, and netcheck.py's
# cases run natively with the host's python3, names resolved through the
# lab's DNS server by a getaddrinfo shim (no rule refuses anything here: the
# denials are husk's to test).  TAP output.
#     sh tests/integration/netlab_check.sh
if [ -z "$NETLAB_IN_NS" ]; then
	if ! unshare --net true 2>/dev/null; then
		echo "Bail out! unshare --net failed: run as root"
		exit 1
	fi
	NETLAB_IN_NS=1 exec unshare --net -- sh "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
HERE=$ROOT/tests/integration
if ! { ip link set lo up && ip addr add 11.0.0.1/8 dev lo; }; then
	echo "Bail out! cannot bring lo up with 11.0.0.1 in the test's network namespace"
	exit 1
fi
LABPID=
trap '[ -n "$LABPID" ] && kill "$LABPID" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
start_lab() { # start_lab DIR: netlab.py in the background, DIR/ready waited for (10 s)
	python3 "$HERE/netlab.py" "$1" >"$1.out" 2>&1 &
	LABPID=$!
	i=0
	while [ ! -e "$1/ready" ] && [ $i -lt 100 ] && kill -0 "$LABPID" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1/ready" ] || { cat "$1.out" >&2; echo "Bail out! netlab did not start"; exit 1; }
}
plan 45
L=$TMP/lab
start_lab "$L"
ok 0 "netlab.py is ready within 10 s (pid $LABPID)"
for f in ca.pem server.pem server.key connections.log requests.log dns.log; do [ -e "$L/$f" ] || echo "# missing $f"; done
openssl verify -CAfile "$L/ca.pem" "$L/server.pem" >/dev/null 2>&1; ok $? "server.pem verifies against ca.pem"
is "$(openssl x509 -in "$L/server.pem" -noout -ext subjectAltName | tail -1 | tr -d ' ')" \
	"DNS:api.test,DNS:other.test,DNS:rebind.test" "server.pem's names"

# --- HTTPS and HTTP ------------------------------------------------------------------
C="curl -sS --max-time 20 --cacert $L/ca.pem"
is "$($C --resolve api.test:443:11.0.0.1 https://api.test/hello)" "hello from api.test" "https://api.test/hello on 11.0.0.1:443"
is "$($C --resolve other.test:8443:127.0.0.1 https://other.test:8443/hello)" "hello from other.test" "https on 127.0.0.1:8443 (the Host's port left out)"
is "$($C --resolve rebind.test:443:11.0.0.1 -w ' %{http_code}' https://rebind.test/hello)" "hello from rebind.test 200" "the certificate covers rebind.test"
is "$($C -H 'Host: other.test' http://11.0.0.1/hello)" "hello from other.test" "plain HTTP on 11.0.0.1:80"
is "$($C --resolve api.test:443:11.0.0.1 --data-binary 'some body' https://api.test/echo)" "some body" "POST /echo"
head -c 3000000 /dev/urandom > "$TMP/blob"
is "$($C -H 'Expect:' --resolve api.test:443:11.0.0.1 --data-binary @"$TMP/blob" https://api.test/echo | cmp - "$TMP/blob" && echo same)" "same" "POST /echo of 3 MB"
is "$($C -H 'Transfer-Encoding: chunked' --resolve api.test:443:11.0.0.1 --data-binary @"$TMP/blob" https://api.test/echo | cmp - "$TMP/blob" && echo same)" "same" "POST /echo, chunked"
want=$(python3 -c 'import hashlib; b = bytes(k % 251 for k in range(251 * 261)); n = 50000000; h = hashlib.sha256(); [h.update(b) for _ in range(n // len(b))]; h.update(b[:n % len(b)]); print(h.hexdigest())')
is "$($C --resolve api.test:443:11.0.0.1 'https://api.test/big?n=50000000' | sha256sum | cut -d' ' -f1)" "$want" "GET /big?n=50000000: the pattern (byte k = k % 251)"
is "$($C -o /dev/null -w '%{http_code}' --resolve api.test:443:11.0.0.1 'https://api.test/big?n=x')" "400" "/big?n=x: 400"
is "$($C -o /dev/null -w '%{http_code}' --resolve api.test:443:11.0.0.1 'https://api.test/nothing')" "404" "an unknown path: 404"
echo | openssl s_client -connect 11.0.0.1:443 -servername api.test -CAfile "$L/ca.pem" -verify_return_error -brief >"$TMP/sc" 2>&1
grep -q 'Verification: OK' "$TMP/sc"; ok $? "openssl s_client verifies the chain for api.test"
# a handshake that fails and a connection that says nothing leave the server serving
printf 'garbage\r\n\r\n' | timeout 5 openssl s_client -connect 127.0.0.1:8443 -quiet >/dev/null 2>&1
python3 -c 'import socket; s = socket.create_connection(("11.0.0.1", 443)); s.sendall(b"\x16\x03\x01\x00\x05hello"); s.close(); socket.create_connection(("11.0.0.1", 443)).close()'
is "$($C --resolve api.test:443:11.0.0.1 https://api.test/hello)" "hello from api.test" "still serving after a broken handshake and empty connections"

# --- the logs ------------------------------------------------------------------------
grep -q '^443 11\.0\.0\.1:[0-9]*$' "$L/connections.log" && grep -q '^8443 127\.0\.0\.1:[0-9]*$' "$L/connections.log" &&
	grep -q '^80 11\.0\.0\.1:[0-9]*$' "$L/connections.log"
ok $? "connections.log: PORT PEER for 443, 8443 and 80"
is "$(grep -c '^GET /hello HTTP/1.1$' "$L/requests.log")" "5" "requests.log: one line per request (5 GET /hello)"

# --- DNS ---------------------------------------------------------------------------
cat >"$TMP/dnsq.py" <<'EOF'
import os, random, socket, struct, sys, time
def q(name, qtype=1, raw=None, rd=True):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    qid = random.randrange(65536)
    p = raw if raw is not None else struct.pack("!6H", qid, 0x0100 if rd else 0, 1, 0, 0, 0) + b"".join(
        bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack("!HH", qtype, 1)
    s.sendto(p, ("127.0.0.1", 5353))
    try:
        r = s.recv(4096)
    except socket.timeout:
        return "timeout"
    rid, flags, qd, an, ns, ar = struct.unpack_from("!6H", r)
    if raw is None and rid != qid:
        return "wrong id"
    rcode = {0: "NOERROR", 1: "FORMERR", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}.get(flags & 15, flags & 15)
    out = [rcode, "QR" if flags & 0x8000 else "-", "RD" if flags & 0x0100 else "-"]
    i = 12
    for _ in range(qd):
        while r[i]:
            i += 1 + r[i]
        i += 5
    for _ in range(an):
        assert r[i:i + 2] == b"\xc0\x0c"
        t, c, ttl, l = struct.unpack_from("!HHIH", r, i + 2)
        out.append("%s/ttl=%d" % (socket.inet_ntoa(r[i + 12:i + 12 + l]) if t == 1 else t, ttl))
        i += 12 + l
    return " ".join(map(str, out))
cmd = sys.argv[1]
if cmd == "fuzz":  # garbage of every kind, then a good query must still be answered
    random.seed(1)
    for n in range(3000):
        k = random.choice([0, 1, 11, 12, 13, 40, 300, 600, 4000])
        p = bytearray(os.urandom(k))
        if n % 3 == 0 and k >= 12:
            p[4:6] = b"\0\1"; p[2] &= 0x7f  # one question, a query: the parser gets to work
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(bytes(p), ("127.0.0.1", 5353))
        s.close()
        if n % 50 == 0:
            time.sleep(0.01)  # paced: a full receive queue would drop datagrams, the query's too
    for _ in range(3):
        r = q("api.test")
        if r != "timeout":
            break
    print(r)
elif cmd == "raw":
    print(q(None, raw=bytes.fromhex(sys.argv[2])))
else:
    print(q(cmd, int(sys.argv[2]) if len(sys.argv) > 2 else 1, rd=len(sys.argv) <= 3))
EOF
dq() { python3 "$TMP/dnsq.py" "$@"; }
is "$(dq api.test)" "NOERROR QR RD 11.0.0.1/ttl=60" "DNS: api.test A 11.0.0.1"
is "$(dq OTHER.test)" "NOERROR QR RD 11.0.0.1/ttl=60" "DNS: other.test A (any case)"
is "$(dq meta.test):$(dq private.test)" "NOERROR QR RD 169.254.169.254/ttl=60:NOERROR QR RD 10.1.2.3/ttl=60" "DNS: meta.test and private.test"
is "$(dq api.test 28)" "NOERROR QR RD" "DNS: AAAA of a listed name: NOERROR, no answer"
is "$(dq api.test 16 nord)" "NOERROR QR -" "DNS: another type (TXT), no RD asked: NOERROR, no answer, RD not set"
is "$(dq nowhere.test):$(dq nowhere.test 28)" "NXDOMAIN QR RD:NXDOMAIN QR RD" "DNS: an unknown name: NXDOMAIN for A and AAAA"
is "$(dq rebind.test 28) / $(dq rebind.test) / $(dq rebind.test) / $(dq rebind.test)" \
	"NOERROR QR RD / NOERROR QR RD 11.0.0.1/ttl=0 / NOERROR QR RD 127.0.0.1/ttl=0 / NOERROR QR RD 127.0.0.1/ttl=0" \
	"DNS: rebind.test: 11.0.0.1 for the first A query (AAAA does not count), 127.0.0.1 later, TTL 0"
is "$(dq raw 123400000000000000000000)" "FORMERR QR -" "DNS: no question: FORMERR"
is "$(dq raw 1234010000010000000000000c03617069)" "FORMERR QR RD" "DNS: a question cut short: FORMERR"
is "$(dq fuzz)" "NOERROR QR RD 11.0.0.1/ttl=60" "DNS: 3000 datagrams of garbage, then still answering"
grep -q '^api\.test A$' "$L/dns.log" && grep -q '^rebind\.test AAAA$' "$L/dns.log" && grep -q '^- malformed$' "$L/dns.log"
ok $? "dns.log: NAME TYPE per query, '- malformed' for the rest"

# --- the plain TCP servers ------------------------------------------------------------
cat >"$TMP/tcp.py" <<'EOF'
import os, socket, sys, threading
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=20)
if port == 9002:
    print(repr(s.recv(100)), repr(s.recv(100)))
    sys.exit()
data = os.urandom(int(sys.argv[2]))
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send); t.start()
got = b""
while True:
    b = s.recv(1 << 20)
    if not b:
        break
    got += b
t.join()
print(got == data if port == 9000 else got.decode())
EOF
is "$(python3 "$TMP/tcp.py" 9000 1048576)" "True" "echo (9000): 1 MB back identical"
is "$(python3 "$TMP/tcp.py" 9001 20971520)" "20971520" "sink (9001): the count of 20 MB"
is "$(python3 "$TMP/tcp.py" 9001 0)" "0" "sink: 0 for nothing"
is "$(python3 "$TMP/tcp.py" 9002)" "b'hi\\n' b''" "9002: hi, then EOF"

# --- netcheck.py natively (what network.t runs in husk), names by the lab's DNS ----------
cat >"$TMP/shim.py" <<'EOF'
# getaddrinfo for names through the lab's DNS server (A only), then netcheck.py.
import ipaddress, runpy, socket, struct, sys
real = socket.getaddrinfo
def gai(host, port, family=0, type=0, proto=0, flags=0):
    try:
        ipaddress.ip_address(host)
        return real(host, port, family, type, proto, flags)
    except ValueError:
        pass
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(struct.pack("!6H", 7, 0x100, 1, 0, 0, 0) + b"".join(bytes([len(l)]) + l.encode() for l in host.split(".")) + b"\0\0\1\0\1", ("127.0.0.1", 5353))
    r = s.recv(4096)
    if r[3] & 15 or not struct.unpack_from("!H", r, 6)[0]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    a = socket.inet_ntoa(r[-4:])
    return [(socket.AF_INET, type or socket.SOCK_STREAM, 6, "", (a, int(port or 0)))]
socket.getaddrinfo = gai
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
EOF
ncheck() { LAB_CA=$L/ca.pem python3 "$TMP/shim.py" "$HERE/netcheck.py" "$@" 2>>"$TMP/nc.err"; }
is "$(ncheck hello https://api.test/hello)" "200 hello from api.test" "netcheck hello (urllib, the lab's CA)"
is "$(ncheck hello http://api.test/hello)" "200 hello from api.test" "netcheck hello over plain HTTP"
is "$(ncheck resolve other.test):$(ncheck resolve nowhere.test)" "11.0.0.1:gaierror:EAI_NONAME" "netcheck resolve"
is "$(ncheck connect 127.0.0.1 9000):$(ncheck connect_nb 127.0.0.1 9002)" "ok fast:ok" "netcheck connect, connect_nb"
is "$(ncheck echo 127.0.0.1 9000 1048576):$(ncheck sink 127.0.0.1 9001 20971520)" "echo 1048576 identical:20971520" "netcheck echo and sink"
is "$(ncheck big 'https://api.test/big?n=50000000' 50000000)" "50000000 $want" "netcheck big"
is "$(ncheck sni)" "handshake ok: hello from other.test" "netcheck sni: natively nothing stops it"
is "$(ncheck hi 127.0.0.1 9002 3):$(ncheck open 127.0.0.1 9000 3):$(ncheck rawhttp 11.0.0.1 80 other.test)" "hi hi hi:ok ok ok:hello from other.test" "netcheck hi, open, rawhttp"
is "$(ncheck async 127.0.0.1 9000)" "asyncio ping from asyncio selectors 0 poll 0" "netcheck async"
is "$(ncheck scan 127.0.0.1 1 2000)" "ECONNREFUSED=2000" "netcheck scan (natively: refused by the host)"

# --- SIGTERM; a second lab, whose rebind.test is fresh ----------------------------------
kill -TERM "$LABPID"
t0=$(date +%s)
wait "$LABPID"
st=$?
is "$st:$(($(date +%s) - t0 < 3))" "0:1" "SIGTERM: the lab exits 0 within 3 s"
L2=$TMP/lab2
start_lab "$L2"
L=$L2
is "$(ncheck rebind)" "11.0.0.1 hello from rebind.test | 127.0.0.1 ECONNREFUSED" \
	"netcheck rebind natively: the second answer is 127.0.0.1 (husk must refuse it: EACCES)"
[ -s "$TMP/nc.err" ] && sed 's/^/# netcheck stderr: /' "$TMP/nc.err"
cat "$TMP/lab.out" "$L2.out" | sed 's/^/# netlab output: /'
is "$(cat "$TMP/lab.out" "$L2.out" | wc -l)" "0" "netlab printed nothing (no traceback)"
done_testing
