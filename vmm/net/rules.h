/* SPDX-License-Identifier: GPL-2.0-only */
/* The network policy's rules (docs/network.md, "The rules"): which names may
 * be resolved and which addresses and ports connected to, with the floor no
 * rule can open.  Pure functions over parsed entries: the broker asks them,
 * `husk policy show` prints them. */
#ifndef HUSK_NET_RULES_H
#define HUSK_NET_RULES_H
#include <stddef.h>
#include <stdint.h>

#define NET_NAME_MAX 253

struct net_addr {
	int family;    /* AF_INET or AF_INET6 */
	uint8_t a[16]; /* network order; AF_INET in a[0..3] */
};

enum net_rule_kind { RULE_NAME, RULE_WILDCARD, RULE_CIDR };

struct net_rule {
	int deny;
	enum net_rule_kind kind;
	char name[NET_NAME_MAX + 1]; /* RULE_NAME: the name; RULE_WILDCARD: the suffix after "*." (lower case) */
	struct net_addr net;         /* RULE_CIDR */
	int prefix;
	uint16_t port_lo, port_hi;
};

struct net_rules {
	struct net_rule *v;
	size_t n;
};

/* A host name as the rules hold it: lower case, one trailing dot dropped,
 * labels of letters, digits, '-' and '_' of 1 to 63 bytes, at most
 * NET_NAME_MAX in all.  out: NET_NAME_MAX + 1 bytes.  0, or -1: not a name. */
int net_name_normal(const char *s, char *out);

/* Adds the rules of one entry, "[!]HOST[:PORTS]" (a name gives two rules by
 * default: ports 443 and 80).  0, or -1 with a one-line reason in err: a
 * malformed entry, or one inside the floor. */
int rules_add(struct net_rules *r, const char *entry, char *err, size_t errlen);
void rules_free(struct net_rules *r);

/* Whether name may be resolved: an allow rule names it (or a wildcard covers
 * it) and no deny rule for it covers every port.  name: as the program gave
 * it (case and one trailing dot do not matter). */
int rules_name_allowed(const struct net_rules *r, const char *name);

enum net_verdict {
	NET_ALLOW,
	NET_DENY_FLOOR,   /* metadata, multicast, reserved...: never */
	NET_DENY_PRIVATE, /* private or loopback, and no allow rule inside such a range covers it */
	NET_DENY_RULE,    /* a deny rule matches */
	NET_DENY_UNLISTED /* no allow rule matches */
};
/* Whether a connect to a, port may go ahead.  name: the allowed name a was
 * pinned to by resolving it (NULL: the program gave the address).  *why (if
 * not NULL): the rule that decided, or NULL. */
enum net_verdict rules_check(const struct net_rules *r, const struct net_addr *a, uint16_t port, const char *name,
			     const struct net_rule **why);
const char *net_verdict_text(enum net_verdict v);

/* The i-th range of the floor (private 0) or of the private and loopback
 * ranges (private 1), as CIDR text, and *what it is; NULL past the last. */
const char *rules_range(int private, size_t i, const char **what);

/* "allow api.example.com:443", "deny 10.0.0.0/8:*": out, always terminated. */
char *rule_text(const struct net_rule *rule, char *out, size_t n);
/* An address as text ("192.0.2.1", "2001:db8::1"). */
char *net_addr_text(const struct net_addr *a, char *out, size_t n);
#endif
