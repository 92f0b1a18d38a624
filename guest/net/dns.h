/* SPDX-License-Identifier: GPL-2.0-only */
/* The DNS messages the guest kernel answers itself (docs/network.md, "DNS
 * in the guest"): a program's resolver (musl's, glibc's) asks 127.0.0.1:53
 * over UDP; the kernel reads the query here, asks the broker (RESOLVE) and
 * builds the answer from its RESOLVED.  The query's bytes are the
 * program's: everything is bounds-checked.  Host-testable (no kernel
 * headers): tests/unit/test_dns.c. */
#ifndef GUEST_NET_DNS_H
#define GUEST_NET_DNS_H
#include <stddef.h>
#include <stdint.h>
#include "husk/net_stream.h"

#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_NOTIMP 4

struct dns_query {
	uint16_t id, qtype, qclass;
	int rd;                /* recursion desired, echoed */
	char name[254];        /* dotted, as asked (the broker normalises it) */
	size_t end;            /* the question's end: header and question are echoed */
};

/* 0: a standard query of one question (IN class); -1: not one (no answer
 * then, or FORMERR when at least the header is there: dns_error). */
int dns_query_parse(const uint8_t *p, size_t len, struct dns_query *q);
/* The answer to q (its header and question echoed from query): rcode, and
 * of addr[0..n) those of q's type as records.  Its length; 0 when cap is
 * too small. */
size_t dns_answer(const struct dns_query *q, const uint8_t *query, int rcode, const struct husk_net_addr *addr, int n,
		  uint8_t *out, size_t cap);
/* A header-only error answer (FORMERR, NOTIMP) to a query of at least 12
 * bytes: its length (12), or 0. */
size_t dns_error(const uint8_t *query, size_t len, int rcode, uint8_t *out, size_t cap);
#endif
