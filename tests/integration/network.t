#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The filtered network end to end (docs/network.md): the bundled Python in
# husk, with --allow-net, --deny-net, --net-dns, --net-host, the limits,
# --audit and a policy file's "network", against a lab of servers
# (tests/integration/netlab.py: HTTPS with a test CA, echo, sink, DNS with a
# rebinding name) in a network namespace of the test's own where lo has
# 127.0.0.1 and 11.0.0.1.  Every address a run reaches is 127.0.0.0/8 or
# 11.0.0.1 in that namespace; the others named (169.254.169.254, 10.1.2.3)
# must be refused before any connect.  The guest's side of each case is a
# function of tests/integration/netcheck.py, at /data/lab with the lab's CA.
# Runs as root (unshare --net); tests/integration/netlab_check.sh checks the
# lab itself without husk.

# A network namespace of our own: the script again, inside it.
if [ -z "$HUSK_NETWORK_T_NS" ]; then
	if ! err=$(unshare --net true 2>&1); then
		echo "Bail out! unshare --net failed (these tests need root): $err"
		exit 1
	fi
	HUSK_NETWORK_T_NS=1 exec unshare --net -- sh "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
need_kvm
HERE=$ROOT/tests/integration
if ! "$HUSK" policy show --allow-net 127.0.0.1:9000 >/dev/null 2>"$TMP/err"; then
	echo "Bail out! husk policy show --allow-net 127.0.0.1:9000 failed: $(head -1 "$TMP/err")"
	exit 1
fi
if ! { ip link set lo up && ip addr add 11.0.0.1/8 dev lo; }; then
	echo "Bail out! cannot bring lo up with 11.0.0.1 in the test's network namespace"
	exit 1
fi

# --- the lab -------------------------------------------------------------------------
LAB=$TMP/lab
RO=$TMP/ro
mkdir -p "$RO"
python3 "$HERE/netlab.py" "$LAB" >"$TMP/netlab.out" 2>&1 &
LABPID=$!
trap 'kill "$LABPID" 2>/dev/null; wait "$LABPID" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
i=0
while [ ! -e "$LAB/ready" ] && [ $i -lt 100 ] && kill -0 "$LABPID" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -e "$LAB/ready" ]; then
	sed 's/^/# netlab: /' "$TMP/netlab.out"
	echo "Bail out! netlab.py did not get ready within 10 s"
	exit 1
fi
cp "$LAB/ca.pem" "$HERE/netcheck.py" "$RO/"

plan 57

# hr HUSK-RUN-OPTIONS... PROGRAM ARGS: a husk run with the lab at /data/lab
# (its stderr in $TMP/err); NC runs a case of netcheck.py.
hr() { "$HUSK" run -t 60 --ro lab="$RO" "$@" 2>"$TMP/err"; }
NC="python /data/lab/netcheck.py"
DNS="--net-dns 127.0.0.1:5353"
# check GOT EXPECTED DESCRIPTION: is, and the run's stderr on a failure
check() {
	f0=$failed
	is "$1" "$2" "$3"
	[ "$failed" -eq "$f0" ] || tail -n 8 "$TMP/err" | sed 's/^/#   stderr: /'
}
# matches GOT DESCRIPTION ONE-OF...: ok when GOT is one of the strings given
matches() {
	got_=$1 desc_=$2 r=1
	shift 2
	for w; do [ "$got_" = "$w" ] && r=0; done
	ok $r "$desc_"
	[ $r -eq 0 ] || { echo "#   got: $got_"; tail -n 8 "$TMP/err" | sed 's/^/#   stderr: /'; }
}
lines() { wc -l <"$LAB/$1.log" | tr -d ' '; }
grep_count() { grep -c "$1" "$LAB/$2.log"; } # grep_count PATTERN LOG
# audit FILE PYEXPR: how many records r of FILE make PYEXPR true.  net(r): a
# network record; reason(r) its reason, lower case; limit(r, WORD): the
# "limit" record of the network's limit about WORD.
audit() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
try:
    recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except (OSError, ValueError) as e:
    print("no audit:", e)
    sys.exit()
def net(r): return r.get("event") == "network"
def reason(r): return str(r.get("reason", "")).lower()
def limit(r, word):
    return r.get("event") == "limit" and r.get("kind", "").startswith("network " + word)
print(sum(1 for r in recs if eval(sys.argv[2])))
EOF
}
ms() { date +%s%N | cut -c1-13; }

# The lab answers (the host's own client, no husk).
got=$(python3 - "$LAB/ca.pem" <<'EOF'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
with ctx.wrap_socket(socket.create_connection(("127.0.0.1", 8443), timeout=10), server_hostname="api.test") as s:
    s.sendall(b"GET /hello HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n")
    r = b""
    while (b := s.recv(65536)):
        r += b
print(r.partition(b"\r\n\r\n")[2].decode())
EOF
)
is "$got" "hello from api.test" "the lab: HTTPS with its CA on 127.0.0.1:8443 (host client)"

# --- a. no --allow-net: no network ------------------------------------------------------
check "$(hr $NC nonet)" "97 EAFNOSUPPORT" "no --allow-net: socket(AF_INET) fails with EAFNOSUPPORT"

# --- b. a name allowed, resolved by the broker ------------------------------------------
d0=$(grep_count '^api\.test A$' dns)
check "$(hr --allow-net api.test:443 $DNS $NC hello https://api.test/hello)" "200 hello from api.test" \
	"--allow-net api.test:443 --net-dns: urlopen(https://api.test/hello) verified with the lab's CA"
[ "$(grep_count '^api\.test A$' dns)" -gt "$d0" ]; ok $? "the broker asked the lab's DNS server for api.test"
d0=$(lines dns)
check "$(hr --allow-net api.test:443 --net-host api.test=11.0.0.1 $NC hello https://api.test/hello):$(($(lines dns) - d0))" \
	"200 hello from api.test:0" "--net-host api.test=11.0.0.1: the same, and no DNS query"
printf '{"network": {"allow": ["api.test:443"], "dns": "127.0.0.1:5353"}}\n' >"$TMP/p1.json"
check "$(hr --policy "$TMP/p1.json" $NC hello https://api.test/hello)" "200 hello from api.test" \
	"a policy file's network.allow and network.dns"
printf '{"network": {"allow": ["api.test"], "hosts": {"api.test": "11.0.0.1"}}}\n' >"$TMP/p2.json"
check "$(hr --policy "$TMP/p2.json" $NC hello https://api.test/hello) / $(hr --policy "$TMP/p2.json" $NC hello http://api.test/hello)" \
	"200 hello from api.test / 200 hello from api.test" \
	"a policy's network.hosts; a name with no port allows 443 and 80"
check "$(hr --allow-net api.test $DNS $NC connect api.test 8443)" "EACCES fast" \
	"a name with no port: another port of its address (8443) is refused"
check "$(hr --allow-net '*.test:443' $DNS $NC hello https://api.test/hello)" "200 hello from api.test" \
	"a wildcard, *.test:443, allows api.test"

check "$(hr --allow-net api.test:443 $DNS $NC resolve api.test any)" "11.0.0.1" \
	"getaddrinfo(AF_UNSPEC) of a name with an A record and no AAAA (NOERROR, empty): its address"

# --- c. a name no rule lists ----------------------------------------------------------
check "$(hr --allow-net api.test:443 $DNS $NC resolve other.test):$(grep_count '^other\.test ' dns)" \
	"gaierror:EAI_NONAME:0" "a name not listed (other.test) does not resolve, and the DNS server never hears of it"

# --- d. addresses and ports -----------------------------------------------------------
c0=$(lines connections)
check "$(hr --allow-net 127.0.0.1:9002 $NC connect 127.0.0.1 9000):$(($(lines connections) - c0))" "EACCES fast:0" \
	"connect to 127.0.0.1:9000 with no rule for it: EACCES within 1 s, the server sees nothing"
check "$(hr --allow-net 127.0.0.1:9000 $NC echo 127.0.0.1 9000 1048576)" "echo 1048576 identical" \
	"--allow-net 127.0.0.1:9000: 1 MB through the echo server, back identical"
c0=$(lines connections)
check "$(hr --allow-net 127.0.0.1:9000-9002 --deny-net 127.0.0.1:9001 $NC connect 127.0.0.1 9001):$(($(lines connections) - c0))" \
	"EACCES fast:0" "--deny-net 127.0.0.1:9001 wins over an allowed range 9000-9002"
check "$(hr --allow-net 127.0.0.1:9000-9002 --allow-net '!127.0.0.1:9001' $NC hi 127.0.0.1 9002 1)" "hi" \
	"--allow-net '!127.0.0.1:9001' leaves the rest of the range: 9002 answers"
check "$(hr --allow-net 127.0.0.1:9000-9002 --allow-net '!127.0.0.1:9001' $NC connect 127.0.0.1 9001)" "EACCES fast" \
	"--allow-net '!127.0.0.1:9001' denies 9001"
printf '{"network": {"allow": ["127.0.0.1:9000-9002"], "deny": ["127.0.0.1:9002"]}}\n' >"$TMP/p3.json"
check "$(hr --policy "$TMP/p3.json" $NC connect 127.0.0.1 9002) / $(hr --policy "$TMP/p3.json" $NC connect 127.0.0.1 9000)" \
	"EACCES fast / ok fast" "a policy's network.deny"

# --- e. broad entries, the floor, private ranges ------------------------------------------
c0=$(lines connections)
check "$(hr --allow-net 0.0.0.0/0 $NC connect 169.254.169.254 80)" "EACCES fast" \
	"--allow-net 0.0.0.0/0 does not reach 169.254.169.254:80 (the floor)"
matches "$(hr --allow-net 0.0.0.0/0 --allow-net meta.test:80 $DNS $NC connect meta.test 80)" \
	"nor through a name allowed that resolves to it (meta.test)" "EACCES fast" "gaierror:EAI_NONAME fast"
matches "$(hr --allow-net private.test $DNS $NC connect private.test 443)" \
	"a name allowed that resolves to a private address (private.test, 10.1.2.3) is refused" "EACCES fast" "gaierror:EAI_NONAME fast"
check "$(hr --allow-net 0.0.0.0/0 $NC connect 127.0.0.1 9000)" "EACCES fast" \
	"0.0.0.0/0 does not open loopback: 127.0.0.1:9000 refused"
is "$(($(lines connections) - c0))" "0" "none of those four reached any server"
check "$(hr --allow-net 0.0.0.0/0 --allow-net 127.0.0.1/32 $NC echo 127.0.0.1 9000 1048576)" "echo 1048576 identical" \
	"with 127.0.0.1/32 listed too, the echo server is reached"
check "$(hr --allow-net 0.0.0.0/0 $NC rawhttp 11.0.0.1 80 11.0.0.1)" "hello from 11.0.0.1" \
	"0.0.0.0/0 reaches a public address (11.0.0.1:80)"
"$HUSK" run --allow-net 169.254.169.254 python -c pass 2>"$TMP/err" >/dev/null
st=$?
is "$st:$(wc -l <"$TMP/err")" "125:1" "an entry inside the floor (169.254.169.254) is a policy error: one line, exit 125"

# --- f. rebinding ----------------------------------------------------------------------
c0=$(lines connections)
check "$(hr --allow-net rebind.test:443 $DNS --audit "$TMP/f.json" $NC rebind):$(($(lines connections) - c0))" \
	"11.0.0.1 hello from rebind.test | 127.0.0.1 EACCES:1" \
	"rebind.test: the first answer connects (TLS, GET); the second, 127.0.0.1, is refused at connect"
is "$(audit "$TMP/f.json" 'net(r) and r.get("op") == "connect" and r.get("verdict") == "denied" and r.get("addr") == "127.0.0.1" and r.get("port") == 443 and reason(r) != ""')" \
	"1" "the audit has the refused connect to 127.0.0.1:443 with a reason"

# --- g. the name a connection asks for -----------------------------------------------------
q0=$(lines requests)
check "$(hr --allow-net api.test:443 $DNS --audit "$TMP/g.json" $NC sni):$(($(lines requests) - q0))" "reset:0" \
	"TLS to api.test's address asking for other.test (SNI): reset, the server reads no request"
is "$(audit "$TMP/g.json" 'net(r) and r.get("op") == "name" and r.get("verdict") == "denied" and "other.test" in reason(r)')" \
	"1" "the audit has a name record denied, naming other.test"
q0=$(lines requests)
check "$(hr --allow-net api.test:80 $DNS $NC rawhttp api.test 80 other.test):$(($(lines requests) - q0))" "reset:0" \
	"plain HTTP to api.test's address with Host: other.test: reset, no request reaches the server"
check "$(hr --allow-net api.test:80 $DNS $NC rawhttp api.test 80 api.test)" "hello from api.test" \
	"plain HTTP with Host: api.test passes the check"

# --- h. limits --------------------------------------------------------------------------
t0=$(ms)
hr --allow-net 127.0.0.1:9000 --net-max-denials 50 --audit "$TMP/h1.json" $NC scan 127.0.0.1 1 2000 >"$TMP/scan.out"
st=$?
t=$(($(ms) - t0))
echo "# the scan: $t ms, status $st, printed: $(head -c 200 "$TMP/scan.out")"
[ "$t" -lt 20000 ]; ok $? "a scan of 2000 ports with no rule for them ends within 20 s ($t ms)"
[ "$(audit "$TMP/h1.json" 'limit(r, "denial")')" -ge 1 ]; ok $? "the audit has a record of the denial limit (--net-max-denials 50)"
[ "$(audit "$TMP/h1.json" 'net(r) and r.get("op") == "connect" and r.get("verdict") == "denied"')" -ge 50 ]
ok $? "and at least 50 denied connect records"
c0=$(lines connections)
check "$(hr --allow-net 127.0.0.1:9002 --net-max-connects 3 --audit "$TMP/h2.json" $NC hi 127.0.0.1 9002 5):$(($(lines connections) - c0))" \
	"hi hi hi EACCES EACCES:3" "--net-max-connects 3: the 4th and 5th connects are refused, the server saw 3"
[ "$(audit "$TMP/h2.json" 'limit(r, "connect")')" -ge 1 ]; ok $? "the audit records the connect limit"
matches "$(hr --allow-net 127.0.0.1:9001 --net-max-bytes 1M --audit "$TMP/h3.json" $NC sink 127.0.0.1 9001 4194304)" \
	"--net-max-bytes 1M: 4 MB to the sink ends in a reset" ECONNRESET EPIPE
[ "$(audit "$TMP/h3.json" 'limit(r, "bytes")')" -ge 1 ]; ok $? "the audit records the bytes limit"
check "$(hr --allow-net 127.0.0.1:9000 --net-max-open 2 $NC open 127.0.0.1 9000 3)" "ok ok EACCES" \
	"--net-max-open 2: a third connection at once is refused, the two others still echo"
t0=$(ms)
check "$(hr --allow-net 127.0.0.1:9001 --net-max-rate 1M --audit "$TMP/h4.json" $NC sink 127.0.0.1 9001 3145728)" "3145728" \
	"--net-max-rate 1M: 3 MB reach the sink whole"
t=$(($(ms) - t0))
[ "$t" -ge 1800 ]; ok $? "and take at least 1.8 s (a second's worth at once, then 1 MB/s): $t ms"
[ "$(audit "$TMP/h4.json" 'limit(r, "rate")')" -eq 1 ]; ok $? "the audit records the rate limit once"
check "$(hr --allow-net api.test $DNS --net-max-resolves 2 --audit "$TMP/h5.json" python -c '
import socket
print([socket.getaddrinfo("api.test", 443, socket.AF_INET)[0][4][0] for _ in range(4)])')" "['11.0.0.1', '11.0.0.1', '11.0.0.1', '11.0.0.1']" \
	"--net-max-resolves 2: 4 lookups in a row all get their answer (musl asks again after a refusal)"
[ "$(audit "$TMP/h5.json" 'limit(r, "resolves")')" -eq 1 ] &&
	[ "$(audit "$TMP/h5.json" 'net(r) and r.get("op") == "resolve" and "per second" in reason(r)')" -ge 1 ]
ok $? "and the audit records the resolve limit and the refused queries"

check "$(hr --allow-net api.test:443 $DNS --net-max-open 1 $NC partial api.test 443 3)" "ok ok ok" \
	"--net-max-open 1: connections closed before their ClientHello named a host are dropped, not held"

# the broker killed mid-transfer: the program's send fails with ECONNRESET,
# a new connect with ENETUNREACH, and the run ends as the program does
"$HUSK" run -t 60 --ro lab="$RO" --allow-net 127.0.0.1:9001 $NC stream 127.0.0.1 9001 >"$TMP/k.out" 2>"$TMP/err" &
hpid=$!
i=0
while ! grep -q sending "$TMP/k.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
broker=
for c in $(pgrep -P "$hpid"); do # husk's child with a socket at fd 3 (the write-back helper has pipes)
	case $(readlink "/proc/$c/fd/3" 2>/dev/null) in socket:*) broker=$c ;; esac
done
[ -n "$broker" ] && kill -KILL "$broker"
wait "$hpid"
st=$?
check "$(tail -n 1 "$TMP/k.out"):$st" "ECONNRESET ENETUNREACH:0" \
	"the broker killed mid-transfer: the send fails with ECONNRESET, a new connect with ENETUNREACH, husk ends with the program's 0"

# --- i. volume ---------------------------------------------------------------------------
t0=$(ms)
check "$(hr --allow-net 127.0.0.1:9001 $NC sink 127.0.0.1 9001 20971520)" "20971520" "20 MB to the sink: it counts 20971520"
echo "# 20 MB out: $(($(ms) - t0)) ms"
want=$(python3 -c '
import hashlib
b = bytes(k % 251 for k in range(251 * 261))
n, h = 50000000, hashlib.sha256()
for _ in range(n // len(b)): h.update(b)
h.update(b[:n % len(b)])
print(h.hexdigest())')
t0=$(ms)
check "$(hr --allow-net api.test:443 $DNS $NC big 'https://api.test/big?n=50000000' 50000000)" "50000000 $want" \
	"GET /big?n=50000000 over HTTPS: every byte, the right ones"
echo "# 50 MB in: $(($(ms) - t0)) ms"

# --- j. the record of one denial ------------------------------------------------------------
check "$(hr --allow-net 127.0.0.1:9000 --audit "$TMP/j.json" $NC connect 127.0.0.1 9002)" "EACCES fast" "a connect no rule allows"
is "$(audit "$TMP/j.json" 'net(r) and r.get("verdict") == "denied"'):$(audit "$TMP/j.json" 'net(r) and r.get("verdict") == "denied" and r.get("op") == "connect" and r.get("addr") == "127.0.0.1" and r.get("port") == 9002 and reason(r) != ""')" \
	"1:1" "leaves exactly one denied network record: connect, 127.0.0.1, 9002, with a reason"

# --- k. asyncio, selectors, poll --------------------------------------------------------------
check "$(hr --allow-net 127.0.0.1:9000 $NC async 127.0.0.1 9000)" "asyncio ping from asyncio selectors 0 poll 0" \
	"asyncio.open_connection to the echo server; non-blocking connects seen by selectors and poll, SO_ERROR 0"
check "$(hr --allow-net 127.0.0.1:9000 $NC connect_nb 127.0.0.1 9002)" "EACCES" \
	"a non-blocking connect no rule allows ends in EACCES"

# --- l. husk policy show and errors -------------------------------------------------------------
"$HUSK" policy show --allow-net api.test:443 >"$TMP/show" 2>"$TMP/err"
st=$?
is "$st:$(python3 -c 'import json, sys; print("api.test:443" in json.dumps(json.load(open(sys.argv[1]))["network"]))' "$TMP/show" 2>&1)" \
	"0:True" "husk policy show --allow-net api.test:443: JSON with a network section listing the rule"
"$HUSK" policy show --allow-net '[::1]:9000' --allow-net '*.test' --allow-net 10.0.0.0/8:8000-8100 --deny-net api.test:80 \
	$DNS --net-host a.test=11.0.0.1 --net-max-open 4 --net-max-connects 10 --net-max-denials 5 --net-max-bytes 1M \
	>"$TMP/show2" 2>"$TMP/err"
st=$?
is "$st:$(python3 -c '
import json, sys
n = json.dumps(json.load(open(sys.argv[1]))["network"])
print([w for w in ("::1", "*.test", "10.0.0.0/8", "8000-8100", "api.test", "127.0.0.1:5353", "a.test") if w not in n])' "$TMP/show2" 2>&1)" \
	"0:[]" "every kind of entry, the DNS server, a host and the limits are taken and shown"
bad() { # bad DESCRIPTION ARGS...: husk run refuses them with one line and exit 125
	d=$1
	shift
	"$HUSK" run "$@" python -c pass >/dev/null 2>"$TMP/err"
	st=$?
	is "$st:$(wc -l <"$TMP/err")" "125:1" "$d is refused with one line and exit 125"
}
bad "a port beyond 65535" --allow-net api.test:99999
bad "an empty entry" --allow-net ''
printf '{"network": {"alow": ["api.test"]}}\n' >"$TMP/p4.json"
bad "an unknown key in a policy's network" --policy "$TMP/p4.json"

[ -s "$TMP/netlab.out" ] && sed 's/^/# netlab: /' "$TMP/netlab.out"
done_testing
