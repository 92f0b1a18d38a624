/* SPDX-License-Identifier: GPL-2.0-only */
/* The name in a connection's first bytes (sni.h).  A ClientHello may come
 * in several TLS records: their payloads are joined until the handshake
 * message is whole.  Anything the RFCs forbid that could make the broker
 * and the server read different names (two server_name extensions, two
 * host names, two Host headers) is FIRST_BAD. */
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include "net/rules.h"
#include "net/sni.h"

#define TLS_HANDSHAKE 22
#define TLS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define EXT_ECH 0xfe0d /* Encrypted Client Hello (draft-ietf-tls-esni) */
#define HOST_NAME 0

/* A cursor over bytes the guest sent. */
struct cursor {
	const uint8_t *p;
	size_t left;
};

static int take(struct cursor *c, size_t n, struct cursor *part)
{
	if (c->left < n)
		return -1;
	if (part)
		*part = (struct cursor){ c->p, n };
	c->p += n, c->left -= n;
	return 0;
}

static int number(struct cursor *c, size_t bytes, size_t *out)
{
	struct cursor v;
	if (take(c, bytes, &v))
		return -1;
	*out = 0;
	for (size_t i = 0; i < bytes; i++)
		*out = *out << 8 | v.p[i];
	return 0;
}

/* A vector with a length of `bytes` bytes in front. */
static int vector(struct cursor *c, size_t bytes, struct cursor *part)
{
	size_t n;
	return number(c, bytes, &n) || take(c, n, part) ? -1 : 0;
}

/* A name of len bytes from the guest, as rules.h holds names. */
static enum first_bytes name_of(const uint8_t *p, size_t len, char *name)
{
	char raw[NET_NAME_MAX + 2];
	if (!len || len > NET_NAME_MAX + 1 || memchr(p, 0, len))
		return FIRST_BAD;
	memcpy(raw, p, len);
	raw[len] = 0;
	return net_name_normal(raw, name) ? FIRST_BAD : FIRST_NAME;
}

static enum first_bytes server_name(struct cursor ext, char *name)
{
	struct cursor list, host;
	size_t type;
	if (vector(&ext, 2, &list) || ext.left || number(&list, 1, &type) || type != HOST_NAME ||
	    vector(&list, 2, &host) || list.left)
		return FIRST_BAD; /* one host_name and nothing else (RFC 6066: at most one of each type) */
	return name_of(host.p, host.left, name);
}

static enum first_bytes client_hello(struct cursor h, char *name)
{
	struct cursor skip, exts;
	if (take(&h, 2 + 32, NULL) || vector(&h, 1, &skip) || vector(&h, 2, &skip) || vector(&h, 1, &skip))
		return FIRST_BAD; /* version, random, session id, cipher suites, compression methods */
	if (!h.left)
		return FIRST_NONE; /* no extensions at all */
	if (vector(&h, 2, &exts) || h.left)
		return FIRST_BAD;
	enum first_bytes found = FIRST_NONE;
	int hidden = 0;
	while (exts.left) {
		size_t type;
		struct cursor data;
		if (number(&exts, 2, &type) || vector(&exts, 2, &data))
			return FIRST_BAD;
		if (type == EXT_ECH)
			hidden = 1;
		if (type != EXT_SERVER_NAME)
			continue;
		if (found != FIRST_NONE)
			return FIRST_BAD; /* a second server_name */
		if ((found = server_name(data, name)) == FIRST_BAD)
			return FIRST_BAD;
	}
	return hidden ? FIRST_HIDDEN : found;
}

enum first_bytes tls_server_name(const uint8_t *buf, size_t len, char *name)
{
	static uint8_t msg[FIRST_BYTES_MAX]; /* the handshake bytes, joined (the broker is one thread) */
	size_t have = 0, want = 0;
	struct cursor in = { buf, len };
	while (!want || have < want) {
		size_t type, version, n;
		struct cursor body;
		if (in.left < 5)
			return FIRST_MORE;
		if (number(&in, 1, &type) || number(&in, 2, &version) || number(&in, 2, &n))
			return FIRST_BAD;
		if (type != TLS_HANDSHAKE || version >> 8 != 3 || !n || n > 16384)
			return FIRST_BAD;
		if (in.left < n)
			return FIRST_MORE;
		take(&in, n, &body);
		if (have + n > sizeof msg)
			return FIRST_BAD;
		memcpy(msg + have, body.p, n);
		have += n;
		if (!want && have >= 4) {
			if (msg[0] != TLS_CLIENT_HELLO)
				return FIRST_BAD;
			want = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
			if (want > sizeof msg)
				return FIRST_BAD;
		}
	}
	return client_hello((struct cursor){ msg + 4, want - 4 }, name);
}

/* ---- HTTP/1 ---------------------------------------------------------------- */

static const uint8_t *find(const uint8_t *p, size_t len, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(p + i, s, n))
			return p + i;
	return NULL;
}

enum first_bytes http_host(const uint8_t *buf, size_t len, char *name)
{
	size_t scan = len < FIRST_BYTES_MAX ? len : FIRST_BYTES_MAX;
	const uint8_t *end = find(buf, scan, "\r\n\r\n");
	if (!end)
		return len < FIRST_BYTES_MAX ? FIRST_MORE : FIRST_BAD;
	const uint8_t *line = find(buf, (size_t)(end - buf) + 2, "\r\n"); /* after the request line */
	size_t i = 0;
	while (i < (size_t)(line - buf) && (isupper(buf[i]) || buf[i] == '-'))
		i++;
	if (!i || buf[i] != ' ')
		return FIRST_BAD; /* not a request line: METHOD SP ... */
	enum first_bytes found = FIRST_NONE;
	for (const uint8_t *h = line + 2; h < end;) {
		const uint8_t *eol = find(h, (size_t)(end + 2 - h), "\r\n");
		const uint8_t *colon = memchr(h, ':', (size_t)(eol - h));
		if (!colon || colon == h)
			return FIRST_BAD; /* a folded line, or no name: a server may read it otherwise */
		for (const uint8_t *c = h; c < colon; c++)
			if (!isalnum(*c) && !strchr("!#$%&'*+-.^_`|~", *c))
				return FIRST_BAD; /* "Host :" and the like */
		if (colon - h == 4 && !strncasecmp((const char *)h, "host", 4)) {
			if (found != FIRST_NONE)
				return FIRST_BAD; /* two Host headers */
			const uint8_t *v = colon + 1, *ve = eol;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			const uint8_t *port = memchr(v, ':', (size_t)(ve - v));
			if (port) { /* digits only */
				for (const uint8_t *d = port + 1; d < ve; d++)
					if (!isdigit(*d))
						return FIRST_BAD;
				ve = port;
			}
			if ((found = name_of(v, (size_t)(ve - v), name)) == FIRST_BAD)
				return FIRST_BAD;
		}
		h = eol + 2;
	}
	return found;
}
