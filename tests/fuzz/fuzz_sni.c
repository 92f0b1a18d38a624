/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/net/sni.c on arbitrary first bytes of a connection, read both as a
 * TLS ClientHello and as an HTTP request.  A name found must be one the
 * rules hold as it is (normal already), and what a complete input gave
 * must not change when more bytes follow it. */
#include "fuzz.h"
#include "net/rules.h"
#include "net/sni.h"

static void check_name(enum first_bytes r, const char *name)
{
	char again[NET_NAME_MAX + 1];
	if (r == FIRST_NAME)
		CHECK(!net_name_normal(name, again) && !strcmp(name, again), "name \"%s\"", name);
	CHECK(r == FIRST_MORE || r == FIRST_NAME || r == FIRST_NONE || r == FIRST_BAD || r == FIRST_HIDDEN, "%d", r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], longer[256];
	enum first_bytes t = tls_server_name(data, size, name);
	check_name(t, name);
	if (t == FIRST_NAME && size) { /* the record layer ends the hello: a trailing byte changes nothing */
		uint8_t *more = malloc(size + 1);
		memcpy(more, data, size);
		more[size] = 0x16;
		enum first_bytes t2 = tls_server_name(more, size + 1, longer);
		CHECK(t2 == FIRST_NAME && !strcmp(name, longer), "%d %s %s", t2, name, longer);
		free(more);
	}
	check_name(http_host(data, size, name), name);
	return 0;
}
