/* SPDX-License-Identifier: GPL-2.0-only */
/* The name a connection's first bytes ask for: a TLS ClientHello's
 * server_name (RFC 8446 4.1.2, RFC 6066 3), an HTTP/1 request's Host
 * header.  The broker compares it with the name the address was pinned to
 * and resets the connection on a mismatch (domain fronting).  The bytes are
 * the guest's: everything is bounds-checked, nothing is trusted. */
#ifndef HUSK_NET_SNI_H
#define HUSK_NET_SNI_H
#include <stddef.h>
#include <stdint.h>

enum first_bytes {
	FIRST_MORE = 0,  /* not all of the ClientHello or headers yet: wait for more */
	FIRST_NAME = 1,  /* the name is in name (lower case, no trailing dot) */
	FIRST_NONE = 2,  /* complete, and no name in it */
	FIRST_BAD = -1,  /* not a ClientHello or request, malformed, twice the name, or too long */
	FIRST_HIDDEN = 3 /* TLS with Encrypted Client Hello: the real name cannot be read */
};

/* How much a ClientHello (all its records) or a request's headers may take
 * before FIRST_BAD. */
#define FIRST_BYTES_MAX 16384

/* name: at least 254 bytes. */
enum first_bytes tls_server_name(const uint8_t *buf, size_t len, char *name);
enum first_bytes http_host(const uint8_t *buf, size_t len, char *name);
#endif
