/* SPDX-License-Identifier: GPL-2.0-only */
/* guest/net/dns.c on the host: queries as musl's resolver sends them,
 * answers byte by byte, the malformed queries it must refuse, and 200,000
 * random and mutated ones under ASan. */
#include <stdlib.h>
#include <string.h>
#include "net/dns.h"
#include "tap.h"

/* A query as musl's res_mkquery makes it: id, RD, one question. */
static size_t query(uint8_t *q, const char *name, uint16_t type)
{
	size_t n = 12;
	memset(q, 0, 12);
	q[0] = 0x12, q[1] = 0x34, q[2] = 0x01, q[5] = 1;
	for (const char *s = name; *s;) {
		size_t l = strcspn(s, ".");
		q[n++] = (uint8_t)l;
		memcpy(q + n, s, l);
		n += l, s += l + (s[l] == '.');
	}
	q[n++] = 0;
	q[n++] = (uint8_t)(type >> 8), q[n++] = (uint8_t)type, q[n++] = 0, q[n++] = 1;
	return n;
}

static int refused(const uint8_t *q, size_t len)
{
	struct dns_query d;
	return dns_query_parse(q, len, &d) == -1;
}

int main(void)
{
	uint8_t q[600], a[600];
	struct dns_query d;
	size_t n = query(q, "api.example.com", DNS_TYPE_A);
	ok(!dns_query_parse(q, n, &d) && d.id == 0x1234 && d.rd && d.qtype == DNS_TYPE_A && !strcmp(d.name, "api.example.com") &&
		   d.end == n,
	   "musl's query for api.example.com A: id, RD, the name, the type (%s)", d.name);
	struct husk_net_addr addr[2] = { { 2, 0, { 93, 184, 216, 34 } }, { 10, 0, { 0x26, 0x06, 0x28 } } };
	size_t m = dns_answer(&d, q, 0, addr, 2, a, sizeof a);
	static const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 93, 184, 216, 34 };
	ok(m == n + 16 && a[0] == 0x12 && a[1] == 0x34 && a[2] == 0x85 && a[3] == 0x80 && a[7] == 1 && !memcmp(a + 12, q + 12, n - 12) &&
		   !memcmp(a + n, rr, sizeof rr),
	   "the answer: same id, QR AA RD RA, NOERROR, the question echoed, one A record pointing at it");
	n = query(q, "api.example.com", DNS_TYPE_AAAA);
	dns_query_parse(q, n, &d);
	m = dns_answer(&d, q, 0, addr, 2, a, sizeof a);
	ok(m == n + 28 && a[7] == 1 && a[n + 3] == 28 && a[n + 11] == 16 && a[n + 12] == 0x26, "AAAA: the IPv6 address only");
	m = dns_answer(&d, q, HUSK_NET_NXDOMAIN, NULL, 0, a, sizeof a);
	ok(m == n && (a[3] & 15) == 3 && a[7] == 0, "NXDOMAIN: rcode 3, no records");
	n = query(q, "example.com", 15 /* MX */);
	ok(!dns_query_parse(q, n, &d) && dns_answer(&d, q, 0, addr, 2, a, sizeof a) == n && a[7] == 0,
	   "another type: NOERROR, no records");
	n = query(q, "api.example.com", DNS_TYPE_A);
	dns_query_parse(q, n, &d);
	ok(dns_answer(&d, q, 0, addr, 2, a, n + 15) == 0, "no room for the record: 0");
	ok(dns_error(q, n, DNS_RCODE_FORMERR, a, sizeof a) == 12 && a[0] == 0x12 && a[2] == 0x80 && (a[3] & 15) == 1,
	   "a FORMERR answer keeps the id");

	n = query(q, "api.example.com", DNS_TYPE_A);
	ok(refused(q, 11), "shorter than a header");
	ok(refused(q, n - 1), "the class cut off");
	q[2] |= 0x80;
	ok(refused(q, n), "a response");
	q[2] = 0x01 | 0x10;
	ok(refused(q, n), "opcode 2 (status)");
	q[2] = 0x01, q[5] = 2;
	ok(refused(q, n), "two questions");
	q[5] = 1, q[7] = 1;
	ok(refused(q, n), "an answer in a query");
	q[7] = 0, q[11] = 1;
	ok(!refused(q, n), "one additional record (EDNS's OPT) is let be");
	q[11] = 2;
	ok(refused(q, n), "two are not");
	q[11] = 0;
	q[12] = 0xc0;
	ok(refused(q, n), "a compression pointer in the question");
	q[12] = 3;
	q[n - 1] = 3;
	ok(refused(q, n), "class 3 (CH)");
	n = query(q, "a.b", DNS_TYPE_A);
	q[13] = 0;
	ok(refused(q, n), "a NUL in a label");
	q[13] = '.';
	ok(refused(q, n), "a dot in a label");
	char big[300];
	memset(big, 'a', sizeof big);
	memcpy(big + 63, ".", 1);
	big[64] = 0;
	n = query(q, big, DNS_TYPE_A);
	ok(!refused(q, n), "a 63-byte label");
	memset(big, 'a', 64);
	big[64] = 0;
	n = query(q, big, DNS_TYPE_A);
	ok(refused(q, n), "a 64-byte label");
	for (int i = 0; i < 5; i++)
		memcpy(big + 60 * i, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.", 60);
	big[299] = 0;
	n = query(q, big, DNS_TYPE_A);
	ok(refused(q, n), "a name of 299 bytes");
	memset(q + 12, 0, 1);
	ok(refused(q, 17), "the root name");

	int sane = 1;
	srand(7);
	uint8_t base[600];
	size_t bl = query(base, "files.pythonhosted.org", DNS_TYPE_AAAA);
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)rand() % 80;
		uint8_t r[600];
		if (i % 2) {
			memcpy(r, base, bl);
			len = bl - (size_t)rand() % 4;
			for (int k = 0; k < 3; k++)
				r[rand() % bl] = (uint8_t)rand();
		} else {
			for (size_t k = 0; k < len; k++)
				r[k] = (uint8_t)rand();
		}
		if (dns_query_parse(r, len, &d) == 0) {
			sane &= d.end <= len && strlen(d.name) <= 253;
			sane &= dns_answer(&d, r, 0, addr, 2, a, sizeof a) >= d.end;
		}
	}
	ok(sane, "200,000 random and mutated queries: a parsed one never ends past its bytes, its name fits, its answer is built");
	return tap_done();
}
