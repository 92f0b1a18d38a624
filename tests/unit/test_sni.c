/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/net/sni.c: the name a TLS ClientHello or an HTTP request asks for,
 * from a real ClientHello (OpenSSL 3.0, Python's ssl, for api.example.com),
 * hand-built ones across records and cut at every length, and the ways two
 * readers could disagree (two names, two Host headers, folding). */
#include <stdlib.h>
#include <string.h>
#include "net/sni.h"
#include "tap.h"

/* OpenSSL 3.0's ClientHello for server_hostname="api.example.com". */
static const char real_hex[] =
	"1603010200010001fc03032e4eedd9ef1c9ace079a61646ed5cbd6af9ab4e0044b875c2761042e97cd304c205b0ed184"
	"30f5170ac0a21d8b9a919825106279cacdfc20325e93068b143cf3480024130213031301c02cc030c02bc02fcca9cca8"
	"c024c028c023c027009f009e006b006700ff0100018f00000014001200000f6170692e6578616d706c652e636f6d000b"
	"000403000102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a"
	"0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b00050403"
	"040303002d00020101003300260024001d0020bcde7d63bebd96c0e446404be795d7e79f2b21079e91cbd00bc1016ed5"
	"a9ea0c001500de0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000000000000000000000";

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;
	for (size_t i = 0; i < n; i++) {
		char b[3] = { h[2 * i], h[2 * i + 1], 0 };
		out[i] = (uint8_t)strtoul(b, NULL, 16);
	}
	return n;
}

/* A ClientHello with the given extensions, in records of at most `split`
 * bytes: its length. */
static size_t hello(uint8_t *out, const uint8_t *ext, size_t ext_len, size_t split)
{
	uint8_t msg[4096];
	size_t m = 4;
	msg[m++] = 3, msg[m++] = 3;   /* legacy_version */
	memset(msg + m, 7, 32), m += 32; /* random */
	msg[m++] = 0;                 /* session id */
	msg[m++] = 0, msg[m++] = 2, msg[m++] = 0x13, msg[m++] = 1; /* one cipher suite */
	msg[m++] = 1, msg[m++] = 0;   /* null compression */
	if (ext) {
		msg[m++] = (uint8_t)(ext_len >> 8), msg[m++] = (uint8_t)ext_len;
		memcpy(msg + m, ext, ext_len), m += ext_len;
	}
	msg[0] = 1, msg[1] = 0, msg[2] = (uint8_t)((m - 4) >> 8), msg[3] = (uint8_t)(m - 4);
	size_t n = 0;
	for (size_t off = 0; off < m; off += split) {
		size_t k = m - off < split ? m - off : split;
		out[n++] = 22, out[n++] = 3, out[n++] = 1, out[n++] = (uint8_t)(k >> 8), out[n++] = (uint8_t)k;
		memcpy(out + n, msg + off, k), n += k;
	}
	return n;
}

/* A server_name extension with one host name (or two). */
static size_t sni_ext(uint8_t *out, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0, list = 3 + la + (b ? 3 + lb : 0), n = 0;
	out[n++] = 0, out[n++] = 0, out[n++] = (uint8_t)((list + 2) >> 8), out[n++] = (uint8_t)(list + 2);
	out[n++] = (uint8_t)(list >> 8), out[n++] = (uint8_t)list;
	out[n++] = 0, out[n++] = (uint8_t)(la >> 8), out[n++] = (uint8_t)la;
	memcpy(out + n, a, la), n += la;
	if (b) {
		out[n++] = 0, out[n++] = (uint8_t)(lb >> 8), out[n++] = (uint8_t)lb;
		memcpy(out + n, b, lb), n += lb;
	}
	return n;
}

static enum first_bytes http(const char *req, char *name)
{
	return http_host((const uint8_t *)req, strlen(req), name);
}

int main(void)
{
	uint8_t buf[20000], ext[1024];
	char name[256];
	size_t n = unhex(real_hex, buf);
	ok(tls_server_name(buf, n, name) == FIRST_NAME && !strcmp(name, "api.example.com"),
	   "OpenSSL's real ClientHello: api.example.com (%zu bytes)", n);
	int more = 1;
	for (size_t k = 0; k < n; k++)
		more &= tls_server_name(buf, k, name) == FIRST_MORE;
	ok(more, "every cut of it is FIRST_MORE");

	size_t e = sni_ext(ext, "Files.Example.ORG.", NULL);
	n = hello(buf, ext, e, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_NAME && !strcmp(name, "files.example.org"),
	   "a hand-built one: the name in lower case, without its trailing dot (%s)", name);
	n = hello(buf, ext, e, 7);
	ok(tls_server_name(buf, n, name) == FIRST_NAME && !strcmp(name, "files.example.org"),
	   "the same split into records of 7 bytes: joined");
	more = 1;
	for (size_t k = 0; k < n; k++)
		more &= tls_server_name(buf, k, name) == FIRST_MORE;
	ok(more, "and every cut of that is FIRST_MORE");

	n = hello(buf, NULL, 0, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_NONE, "no extensions: FIRST_NONE");
	uint8_t other[] = { 0, 10, 0, 2, 0, 0 }; /* supported_groups, empty */
	n = hello(buf, other, sizeof other, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_NONE, "extensions without server_name: FIRST_NONE");

	e = sni_ext(ext, "a.example.com", "b.example.com");
	n = hello(buf, ext, e, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "two host names in one extension: FIRST_BAD");
	e = sni_ext(ext, "a.example.com", NULL);
	e += sni_ext(ext + e, "b.example.com", NULL);
	n = hello(buf, ext, e, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "two server_name extensions: FIRST_BAD");
	e = sni_ext(ext, "a.example.com", NULL);
	uint8_t ech[] = { 0xfe, 0x0d, 0, 1, 0 };
	memcpy(ext + e, ech, sizeof ech);
	n = hello(buf, ext, e + sizeof ech, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_HIDDEN, "Encrypted Client Hello: FIRST_HIDDEN (the outer name is not the real one)");
	e = sni_ext(ext, "a.exa\x01mple.com", NULL);
	n = hello(buf, ext, e, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "a control byte in the name: FIRST_BAD");
	memcpy(ext, "\0\0\0\x09\0\x07\0\0\x04" "a\0bc", 13);
	n = hello(buf, ext, 13, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "a NUL in the name: FIRST_BAD");
	e = sni_ext(ext, "a.example.com", NULL);
	ext[5] += 1; /* the list claims a byte more than there is */
	n = hello(buf, ext, e, 16384);
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "a list length past its extension: FIRST_BAD");

	n = hello(buf, ext, 0, 16384);
	buf[0] = 23; /* application data */
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "not a handshake record: FIRST_BAD");
	n = hello(buf, NULL, 0, 16384);
	buf[5] = 2; /* a ServerHello */
	ok(tls_server_name(buf, n, name) == FIRST_BAD, "a handshake that is not a ClientHello: FIRST_BAD");
	memcpy(buf, "\x16\x03\x01\x00\x04\x01\xff\xff\xff", 9);
	ok(tls_server_name(buf, 9, name) == FIRST_BAD, "a ClientHello claiming 16 MiB: FIRST_BAD at once");
	memcpy(buf, "\x16\x03\x01\x00\x00", 5);
	ok(tls_server_name(buf, 5, name) == FIRST_BAD, "an empty record: FIRST_BAD");
	ok(tls_server_name((const uint8_t *)"GET / HTTP/1.1\r\n", 16, name) == FIRST_BAD, "HTTP is not TLS");

	ok(http("GET /x HTTP/1.1\r\nHost: API.example.com:8080\r\nAccept: */*\r\n\r\n", name) == FIRST_NAME &&
		   !strcmp(name, "api.example.com"),
	   "HTTP: the Host header without its port, lower case (%s)", name);
	ok(http("POST / HTTP/1.1\r\nhOsT:\tapi.example.com \r\n\r\nbody", name) == FIRST_NAME,
	   "any case, tabs and spaces around the value");
	ok(http("GET / HTTP/1.1\r\nHost: api.example.com\r\n", name) == FIRST_MORE, "headers not ended: FIRST_MORE");
	ok(http("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n", name) == FIRST_NONE, "no Host: FIRST_NONE");
	ok(http("GET / HTTP/1.1\r\nHost: a.example.com\r\nHost: b.example.com\r\n\r\n", name) == FIRST_BAD,
	   "two Host headers: FIRST_BAD");
	ok(http("GET / HTTP/1.1\r\nHost : b.example.com\r\n\r\n", name) == FIRST_BAD, "\"Host :\": FIRST_BAD");
	ok(http("GET / HTTP/1.1\r\nX: y\r\n Host: b.example.com\r\n\r\n", name) == FIRST_BAD, "a folded line: FIRST_BAD");
	ok(http("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", name) == FIRST_BAD, "an IPv6 literal: FIRST_BAD");
	ok(http("GET / HTTP/1.1\r\nHost: a.example.com:8x\r\n\r\n", name) == FIRST_BAD, "a port that is not digits");
	ok(http("\x16\x03\x01 GET\r\n\r\n", name) == FIRST_BAD, "not a request line: FIRST_BAD");
	char *big = malloc(FIRST_BYTES_MAX + 100);
	memset(big, 'a', FIRST_BYTES_MAX + 100);
	memcpy(big, "GET / HTTP/1.1\r\nX-Long: ", 24);
	ok(http_host((const uint8_t *)big, FIRST_BYTES_MAX + 100, name) == FIRST_BAD, "headers past 16 KiB: FIRST_BAD");
	ok(http_host((const uint8_t *)big, 1000, name) == FIRST_MORE, "1000 bytes of them: FIRST_MORE");
	free(big);
	return tap_done();
}
