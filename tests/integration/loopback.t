#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# AF_INET and AF_INET6 on the guest's own loopback (--net-loopback,
# guest/net/loopback.c): tests/python/inet_loopback.py runs in husk and with
# Debian's python3 natively (in a network namespace with only lo, run as
# root), and each of its lines (echo over IPv4 and IPv6, names, half-close,
# errors, a non-blocking connect, asyncio, 50 clients on selectors,
# socketserver, http.server in a child, multiprocessing's Listener) must
# read the same.  Then what only husk says: no sockets without a network
# option, nothing beyond the loopback, names other than localhost.
. "$(dirname "$0")/../lib.sh"
need_kvm
CHECKS=27
plan $((CHECKS + 6))
W=$TMP/w
mkdir -p "$W"
cp "$ROOT/tests/python/inet_loopback.py" "$W/"
if ! unshare --net sh -c 'ip link set lo up && python3 "$1"' sh "$W/inet_loopback.py" > "$TMP/native.out" 2>&1; then
	echo "Bail out! the script fails natively in a network namespace of its own (run as root): $(tail -n 1 "$TMP/native.out")"
	exit 1
fi
"$HUSK" run -t 120 --net-loopback -w "$W" python inet_loopback.py > "$TMP/husk.out" 2> "$TMP/err"; st=$?
is "$st:$(wc -l < "$TMP/native.out")" "0:$CHECKS" "the script runs in husk (status 0) and natively ($CHECKS checks)"
tail -n 5 "$TMP/err" | sed 's/^/#   stderr: /'
same_lines "$TMP/native.out" "$TMP/husk.out" $CHECKS

got=$("$HUSK" run python -c '
import socket
try: socket.socket()
except OSError as e: print(e.errno)' 2>&1)
is "$got" "97" "without --net-loopback or --allow-net: socket(AF_INET) is EAFNOSUPPORT"
got=$("$HUSK" run --net-loopback python -c '
import errno, socket
def e(f):
    try: f(); return "ok"
    except socket.gaierror as x: return "gaierror"
    except OSError as x: return errno.errorcode[x.errno]
print(e(lambda: socket.create_connection(("10.1.2.3", 80))), e(lambda: socket.create_connection(("127.0.0.1", 9))),
      e(lambda: socket.getaddrinfo("example.test", 80)), socket.getaddrinfo("localhost", 80, socket.AF_INET)[0][4])' 2>&1)
is "$got" "ENETUNREACH ECONNREFUSED gaierror ('127.0.0.1', 80)" \
	"--net-loopback: nothing beyond the guest (ENETUNREACH), no listener is ECONNREFUSED, only localhost resolves"
got=$("$HUSK" policy show --net-loopback | python3 -c 'import json, sys; print(json.load(sys.stdin)["network"])')
is "$got" "{'loopback': True}" "husk policy show: the network is the loopback alone"
printf '{"network": {"loopback": true}}' > "$TMP/p.json"
got=$("$HUSK" run --policy "$TMP/p.json" python -c '
import socket
l = socket.create_server(("127.0.0.1", 0))
c = socket.create_connection(l.getsockname())
print(l.accept()[0].getpeername() == c.getsockname())' 2>&1)
is "$got" "True" "the policy's network.loopback gives the same"
# A server in the guest is not the host's: from the host, in a network
# namespace of the test's own, a connect to the port the guest listens on
# (any address) finds nothing there.
cat > "$TMP/host.sh" <<'EOS'
ip link set lo up
"$1" run --net-loopback python -c '
import socket, time
l = socket.create_server(("0.0.0.0", 18123))
print("listening", flush=True)
time.sleep(2)' > "$2/srv.out" 2>&1 &
hp=$!
i=0
while ! grep -q listening "$2/srv.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
python3 -c '
import errno, socket
try: socket.create_connection(("127.0.0.1", 18123), timeout=2); print("connected")
except OSError as e: print(errno.errorcode.get(e.errno, e))'
wait $hp
EOS
got=$(unshare --net sh "$TMP/host.sh" "$HUSK" "$TMP" 2>&1)
is "$got" "ECONNREFUSED" "a guest listening on 0.0.0.0:18123 is not reachable from the host"
done_testing
