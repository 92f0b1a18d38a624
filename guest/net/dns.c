/* SPDX-License-Identifier: GPL-2.0-only */
/* DNS queries in, answers out (dns.h).  RFC 1035 4.1: a 12-byte header,
 * the question (labels of 1 to 63 bytes, a name of at most 255 on the
 * wire), then records; an answer points back at the question's name
 * (0xc00c).  A query with compression, more than one question, or answers
 * in it is not one a resolver sends: refused.  An OPT record (EDNS) after
 * the question is let be and not echoed. */
#include <string.h>
#include "net/dns.h"

#define HEADER 12
#define TTL 60 /* seconds: the broker pinned the answer for the run anyway */

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v;
}

int dns_query_parse(const uint8_t *p, size_t len, struct dns_query *q)
{
	if (len < HEADER)
		return -1;
	uint16_t flags = be16(p + 2);
	if ((flags & 0x8000) || (flags >> 11 & 15) || be16(p + 4) != 1 || be16(p + 6) || be16(p + 8) || be16(p + 10) > 1)
		return -1; /* a response, not a standard query, not one question, or records besides one OPT */
	size_t at = HEADER, out = 0;
	for (;;) {
		if (at >= len)
			return -1;
		uint8_t l = p[at++];
		if (!l)
			break;
		if (l > 63 || l > len - at || out + l + 1 > sizeof q->name - 1)
			return -1; /* compression (0xc0), a label too long, past the end, a name too long */
		if (memchr(p + at, '.', l) || memchr(p + at, 0, l))
			return -1; /* a dot or a NUL inside a label: not a host name */
		if (out)
			q->name[out++] = '.';
		memcpy(q->name + out, p + at, l);
		out += l, at += l;
	}
	if (!out || len - at < 4)
		return -1; /* the root, or no type and class */
	q->name[out] = 0;
	q->id = be16(p);
	q->rd = (flags & 0x0100) != 0;
	q->qtype = be16(p + at);
	q->qclass = be16(p + at + 2);
	q->end = at + 4;
	return q->qclass == 1 ? 0 : -1;
}

size_t dns_answer(const struct dns_query *q, const uint8_t *query, int rcode, const struct husk_net_addr *addr, int n,
		  uint8_t *out, size_t cap)
{
	uint16_t family = q->qtype == DNS_TYPE_A ? 2 : q->qtype == DNS_TYPE_AAAA ? 10 : 0;
	size_t rdlen = family == 2 ? 4 : 16, at = q->end, answers = 0;
	if (cap < q->end)
		return 0;
	memcpy(out, query, q->end); /* the header's id and the question */
	for (int i = 0; i < n && !rcode; i++) {
		if (!family || addr[i].family != family)
			continue;
		if (cap - at < 12 + rdlen)
			return 0;
		put16(out + at, 0xc00c);             /* the question's name */
		put16(out + at + 2, q->qtype);
		put16(out + at + 4, 1);              /* IN */
		put16(out + at + 6, 0), put16(out + at + 8, TTL);
		put16(out + at + 10, (uint16_t)rdlen);
		memcpy(out + at + 12, addr[i].addr, rdlen);
		at += 12 + rdlen, answers++;
	}
	put16(out + 2, (uint16_t)(0x8000 | 0x0400 | (q->rd ? 0x0100 : 0) | 0x0080 | (rcode & 15))); /* QR AA RD RA */
	put16(out + 4, 1);
	put16(out + 6, (uint16_t)answers);
	put16(out + 8, 0), put16(out + 10, 0);
	return at;
}

size_t dns_error(const uint8_t *query, size_t len, int rcode, uint8_t *out, size_t cap)
{
	if (len < HEADER || cap < HEADER)
		return 0;
	memset(out, 0, HEADER);
	out[0] = query[0], out[1] = query[1];
	put16(out + 2, (uint16_t)(0x8000 | (query[2] << 8 & 0x7800) | (rcode & 15))); /* QR, the opcode asked */
	return HEADER;
}
