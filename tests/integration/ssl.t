#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The bundled Python's ssl and hashlib over OpenSSL (images/deps.sh openssl)
# in the microVM: OpenSSL's digests, the system disk's CA certificates
# (/usr/lib/ssl/cert.pem, from Debian's ca-certificates), and TLS 1.3 and
# 1.2 handshakes between the two ends of a socketpair (the guest has no
# network), with a certificate made here by the host's openssl, checked by
# hostname and by issuer.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 10
py() { "$HUSK" run python "$@"; }

# --- hashlib over OpenSSL --------------------------------------------------
digests='
import hashlib
print(hashlib.sha3_256(b"").hexdigest(), hashlib.pbkdf2_hmac("sha512", b"pw", b"salt", 1000).hex()[:32],
      hashlib.scrypt(b"pw", salt=b"salt", n=16, r=8, p=1).hex()[:32])'
want=$(python3 -c "$digests")
got=$(py -c "$digests" 2>&1)
is "$got" "$want" "hashlib: sha3_256, pbkdf2_hmac and scrypt (OpenSSL only) give the host's values"
got=$(py -c '
import hashlib, ssl
print(ssl.OPENSSL_VERSION.startswith("OpenSSL 3.0."), hashlib.sha256.__name__, hashlib.new("sha512_256", b"x").name,
      {"sha3_512", "shake_256", "blake2b", "md5-sha1"} <= hashlib.algorithms_available, ssl.RAND_status(), len(ssl.RAND_bytes(32)))' 2>&1)
is "$got" "True openssl_sha256 sha512_256 True True 32" \
	"ssl: OpenSSL 3.0 is linked in; hashlib uses it; its random generator is seeded"

# --- the system disk's CA certificates --------------------------------------
ncas=$(dpkg-query -L ca-certificates | grep -c '^/usr/share/ca-certificates/.*\.crt$')
got=$(py -c '
import ssl
ctx = ssl.create_default_context()
cas = ctx.get_ca_certs()
names = {dict(x[0] for x in c["subject"]).get("commonName") for c in cas}
print(ssl.get_default_verify_paths().cafile, len(cas), "ISRG Root X1" in names, ctx.verify_mode == ssl.CERT_REQUIRED)' 2>&1)
is "$got" "/usr/lib/ssl/cert.pem $ncas True True" \
	"create_default_context() loads Debian's $ncas CA certificates from /usr/lib/ssl/cert.pem"

# --- TLS over a socketpair ---------------------------------------------------
W=$TMP/w
mkdir -p "$W"
if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=husk.test -addext subjectAltName=DNS:husk.test \
	-keyout "$W/key.pem" -out "$W/cert.pem" >"$TMP/req.log" 2>&1; then :; else cat "$TMP/req.log" >&2; fi
[ -s "$W/cert.pem" ] && [ -s "$W/key.pem" ]; ok $? "the host's openssl made a self-signed certificate for husk.test"
cat >"$W/tls.py" <<'EOF'
import socket, ssl, sys, threading

def run(host, version=None, cafile="cert.pem"):
    """A handshake between the ends of a socketpair; the server in a thread."""
    srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    srv_ctx.load_cert_chain("cert.pem", "key.pem")
    if cafile:
        cli_ctx = ssl.create_default_context(cafile=cafile)
    else:
        cli_ctx = ssl.create_default_context()
    if version:
        cli_ctx.maximum_version = version
    a, b = socket.socketpair()
    served = []
    def server():
        try:
            with srv_ctx.wrap_socket(a, server_side=True) as s:
                data = s.recv(100)
                s.sendall(data.upper())
                served.append(data)
        except (ssl.SSLError, OSError) as e:
            served.append(type(e).__name__)
    t = threading.Thread(target=server)
    t.start()
    try:
        with cli_ctx.wrap_socket(b, server_hostname=host) as c:
            c.sendall(b"hello over tls")
            reply = c.recv(100)
            out = [c.version(), c.cipher()[0], reply.decode(), c.getpeercert()["subjectAltName"][0][1]]
    except ssl.SSLCertVerificationError as e:
        a.close()
        out = ["verify failed:", e.verify_message]
    t.join()
    print(*out)

if sys.argv[1] == "tls13":
    run("husk.test")
elif sys.argv[1] == "tls12":
    run("husk.test", ssl.TLSVersion.TLSv1_2)
elif sys.argv[1] == "hostname":
    run("other.test")
else:
    run("husk.test", cafile=None)
EOF
run_tls() { "$HUSK" run -w "$W" python tls.py "$1" 2>&1; }
is "$(run_tls tls13)" "TLSv1.3 TLS_AES_256_GCM_SHA384 HELLO OVER TLS husk.test" \
	"TLS 1.3 handshake, the certificate verified by its issuer and hostname, bytes both ways"
is "$(run_tls tls12)" "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384 HELLO OVER TLS husk.test" \
	"TLS 1.2 (ECDHE, AES-GCM) the same way"
got=$(run_tls hostname)
case $got in
"verify failed: Hostname mismatch, certificate is not valid for 'other.test'.") r=0 ;;
*) r=1; echo "#   got: $got" ;;
esac
ok $r "a certificate for another hostname fails verification"
got=$(run_tls untrusted)
case $got in
"verify failed: self-signed certificate" | "verify failed: self signed certificate") r=0 ;;
*) r=1; echo "#   got: $got" ;;
esac
ok $r "a certificate no system CA signed fails verification"

# --- memory BIOs: no socket, no thread ----------------------------------------
cat >"$W/bio.py" <<'EOF'
import ssl
srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
srv_ctx.load_cert_chain("cert.pem", "key.pem")
srv_ctx.set_alpn_protocols(["h2", "http/1.1"])
cli_ctx = ssl.create_default_context()
cli_ctx.load_verify_locations(cadata=open("cert.pem").read())
cli_ctx.set_alpn_protocols(["http/1.1"])
bios = [ssl.MemoryBIO() for _ in range(4)]  # client in/out, server in/out
cli = cli_ctx.wrap_bio(bios[0], bios[1], server_hostname="husk.test")
srv = srv_ctx.wrap_bio(bios[2], bios[3], server_side=True)
done, rounds = set(), 0
while len(done) < 2 and rounds < 10:
    rounds += 1
    for name, obj in (("client", cli), ("server", srv)):
        try:
            obj.do_handshake()
            done.add(name)
        except ssl.SSLWantReadError:
            pass
    bios[2].write(bios[1].read())
    bios[0].write(bios[3].read())
cli.write(b"ping")
bios[2].write(bios[1].read())
print(rounds, cli.version(), cli.selected_alpn_protocol(), srv.read(4))
EOF
got=$("$HUSK" run -w "$W" python bio.py 2>&1)
is "$got" "4 TLSv1.3 http/1.1 b'ping'" "TLS 1.3 over memory BIOs (non-blocking, one thread): ALPN, a CA given as cadata"

# --- ssl's constants say what was built ----------------------------------------
got=$(py -c '
import ssl
print(ssl.HAS_TLSv1_3, ssl.HAS_TLSv1_2, ssl.HAS_SSLv3, ssl.HAS_ECDH, ssl.HAS_SNI, ssl.HAS_ALPN)' 2>&1)
is "$got" "True True False True True True" "TLS 1.2 and 1.3, ECDH, SNI and ALPN; no SSL 3"
done_testing
