/* SPDX-License-Identifier: GPL-2.0-only */
/* The network policy's rules: parsing "[!]HOST[:PORTS]" entries, and the
 * checks the broker makes before it resolves a name or connects (see
 * docs/network.md).  The floor and the private ranges are the lists below;
 * an IPv6 address that carries an IPv4 one (mapped, NAT64, compatible) is
 * judged as that IPv4 address. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errmsg.h"
#include "net/rules.h"

struct range {
	const char *cidr, *what;
};

/* No rule opens these. */
static const struct range floor_ranges[] = {
	{ "0.0.0.0/8", "\"this network\"" },
	{ "169.254.0.0/16", "link-local: cloud metadata" },
	{ "224.0.0.0/4", "multicast" },
	{ "240.0.0.0/4", "reserved and broadcast" },
	{ "192.0.0.0/24", "IETF protocol assignments" },
	{ "192.0.2.0/24", "documentation" },
	{ "198.18.0.0/15", "benchmarking" },
	{ "198.51.100.0/24", "documentation" },
	{ "203.0.113.0/24", "documentation" },
	{ "::/128", "unspecified" },
	{ "100::/64", "discard" },
	{ "fe80::/10", "link-local" },
	{ "fec0::/10", "site-local" },
	{ "ff00::/8", "multicast" },
	{ "2001:db8::/32", "documentation" },
	{ "fd00:ec2::254/128", "cloud metadata" },
};

/* Only an allow rule that lies inside one of these opens (part of) it; a
 * name that resolves here never does (DNS rebinding). */
static const struct range private_ranges[] = {
	{ "10.0.0.0/8", "private" },	   { "172.16.0.0/12", "private" }, { "192.168.0.0/16", "private" },
	{ "127.0.0.0/8", "loopback" },	   { "100.64.0.0/10", "shared address space" },
	{ "fc00::/7", "unique local" }, { "::1/128", "loopback" },
};

#define NFLOOR (sizeof floor_ranges / sizeof floor_ranges[0])
#define NPRIVATE (sizeof private_ranges / sizeof private_ranges[0])

const char *rules_range(int private, size_t i, const char **what)
{
	const struct range *r = private ? private_ranges : floor_ranges;
	if (i >= (private ? NPRIVATE : NFLOOR))
		return NULL;
	*what = r[i].what;
	return r[i].cidr;
}

static int bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

/* The IPv4 address an IPv6 one carries (::ffff:a.b.c.d, 64:ff9b::a.b.c.d,
 * ::a.b.c.d), so that it is judged as that; others as they are. */
static struct net_addr normal(const struct net_addr *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff }, nat64[12] = { 0, 0x64, 0xff, 0x9b };
	static const uint8_t zero[12];
	if (a->family != AF_INET6)
		return *a;
	int compatible = !memcmp(a->a, zero, 12) && (a->a[12] | a->a[13] | a->a[14] | (a->a[15] & 0xfe));
	if (!memcmp(a->a, mapped, 12) || !memcmp(a->a, nat64, 12) || compatible) {
		struct net_addr v4 = { AF_INET, { 0 } };
		memcpy(v4.a, a->a + 12, 4);
		return v4;
	}
	return *a;
}

/* Whether net/prefix covers a. */
static int covers(const struct net_addr *net, int prefix, const struct net_addr *a)
{
	if (net->family != a->family)
		return 0;
	int full = prefix / 8, rest = prefix % 8;
	if (memcmp(net->a, a->a, (size_t)full))
		return 0;
	return !rest || ((net->a[full] ^ a->a[full]) & (0xff00 >> rest) & 0xff) == 0;
}

static int parse_addr(const char *s, struct net_addr *a)
{
	memset(a, 0, sizeof *a);
	if (inet_pton(AF_INET, s, a->a) == 1)
		return a->family = AF_INET, 0;
	if (inet_pton(AF_INET6, s, a->a) == 1)
		return a->family = AF_INET6, 0;
	return -1;
}

/* "ADDR/PREFIX" or "ADDR" (the whole address). */
static int parse_cidr(const char *s, struct net_addr *a, int *prefix)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	if (len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (parse_addr(buf, a))
		return -1;
	*prefix = bits(a->family);
	if (slash) {
		char *end;
		long p = strtol(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end || p < 0 || p > bits(a->family))
			return -1;
		*prefix = (int)p;
	}
	return 0;
}

/* The range of list that covers a, if any; *prefix its prefix. */
static const struct range *range_of(const struct range *list, size_t n, const struct net_addr *a, int *prefix)
{
	for (size_t i = 0; i < n; i++) {
		struct net_addr net;
		if (parse_cidr(list[i].cidr, &net, prefix))
			abort(); /* the lists above are constants */
		if (covers(&net, *prefix, a))
			return &list[i];
	}
	return NULL;
}

/* The range of list that holds all of net/prefix, if any. */
static const struct range *range_holding(const struct range *list, size_t n, const struct net_addr *net, int prefix)
{
	int rprefix;
	const struct range *r = range_of(list, n, net, &rprefix);
	return r && prefix >= rprefix ? r : NULL;
}

int net_name_normal(const char *s, char *out)
{
	size_t len = strlen(s);
	if (len && s[len - 1] == '.')
		len--;
	if (!len || len > NET_NAME_MAX)
		return -1;
	size_t label = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '.') {
			if (!label)
				return -1;
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			if (++label > 63)
				return -1;
		} else {
			return -1;
		}
		out[i] = (char)tolower(c);
	}
	out[len] = 0;
	return label ? 0 : -1;
}

/* "443", "8000-8100", "*". */
static int parse_ports(const char *s, uint16_t *lo, uint16_t *hi)
{
	if (!strcmp(s, "*")) {
		*lo = 1, *hi = 65535;
		return 0;
	}
	char *end;
	if (!isdigit((unsigned char)*s))
		return -1;
	long a = strtol(s, &end, 10), b = a;
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return -1;
		b = strtol(end + 1, &end, 10);
	}
	if (*end || a < 1 || b > 65535 || a > b)
		return -1;
	*lo = (uint16_t)a, *hi = (uint16_t)b;
	return 0;
}

static int push(struct net_rules *r, const struct net_rule *rule)
{
	struct net_rule *v = realloc(r->v, (r->n + 1) * sizeof *v);
	if (!v)
		return -1;
	r->v = v;
	r->v[r->n++] = *rule;
	return 0;
}

int rules_add(struct net_rules *r, const char *entry, char *err, size_t n)
{
	struct net_rule rule = { 0 };
	const char *s = entry;
	if (*s == '!')
		rule.deny = 1, s++;
	char host[NET_NAME_MAX + 8];
	const char *ports = NULL;
	if (*s == '[') { /* [IPv6]:PORTS */
		const char *close = strchr(s, ']');
		if (!close || (size_t)(close - s - 1) >= sizeof host || (close[1] && close[1] != ':'))
			return errmsg(err, n, "network entry \"%s\": expected [IPv6 address]:PORTS", entry);
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = 0;
		ports = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strchr(s, ':');
		int v6 = colon && strchr(colon + 1, ':'); /* an IPv6 address without brackets: no port */
		size_t len = colon && !v6 ? (size_t)(colon - s) : strlen(s);
		if (len >= sizeof host)
			return errmsg(err, n, "network entry \"%.40s...\": the name is longer than %d bytes", entry,
				      NET_NAME_MAX);
		memcpy(host, s, len);
		host[len] = 0;
		ports = colon && !v6 ? colon + 1 : NULL;
	}
	if (!*host)
		return errmsg(err, n, "network entry \"%s\": no host", entry);
	if (ports && parse_ports(ports, &rule.port_lo, &rule.port_hi))
		return errmsg(err, n, "network entry \"%s\": ports must be a number 1-65535, a range A-B or *", entry);
	struct net_addr a;
	int prefix;
	if (*s == '[' || strchr(host, '/') || parse_addr(host, &a) == 0) {
		if (parse_cidr(host, &a, &prefix))
			return errmsg(err, n, "network entry \"%s\": not an address or address/prefix", entry);
		struct net_addr v4 = normal(&a);
		if (v4.family != a.family) { /* an IPv6 form of an IPv4 address: as that */
			prefix = prefix >= 96 ? prefix - 96 : 0;
			a = v4;
		}
		struct net_addr masked = a;
		for (int b = prefix; b < bits(a.family); b++)
			masked.a[b / 8] &= (uint8_t) ~(0x80 >> (b % 8));
		if (memcmp(masked.a, a.a, sizeof a.a)) {
			char t[INET6_ADDRSTRLEN];
			return errmsg(err, n, "network entry \"%s\": bits are set below the prefix (did you mean %s/%d?)",
				      entry, net_addr_text(&masked, t, sizeof t), prefix);
		}
		const struct range *f = range_holding(floor_ranges, NFLOOR, &a, prefix);
		if (f && !rule.deny)
			return errmsg(err, n, "network entry \"%s\" is inside %s (%s), which no rule can open", entry,
				      f->cidr, f->what);
		rule.kind = RULE_CIDR, rule.net = a, rule.prefix = prefix;
		if (!ports)
			rule.port_lo = 1, rule.port_hi = 65535;
		return push(r, &rule) ? errmsg(err, n, "out of memory") : 0;
	}
	const char *name = host;
	rule.kind = RULE_NAME;
	if (!strncmp(host, "*.", 2))
		rule.kind = RULE_WILDCARD, name = host + 2;
	if (net_name_normal(name, rule.name))
		return errmsg(err, n,
			      "network entry \"%s\": not a host name (labels of letters, digits and '-', at most %d bytes), "
			      "\"*.\" and a name, an address or address/prefix",
			      entry, NET_NAME_MAX);
	if (ports)
		return push(r, &rule) ? errmsg(err, n, "out of memory") : 0;
	rule.port_lo = rule.port_hi = 443;
	struct net_rule http = rule;
	http.port_lo = http.port_hi = 80;
	return push(r, &rule) || push(r, &http) ? errmsg(err, n, "out of memory") : 0;
}

void rules_free(struct net_rules *r)
{
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static int name_matches(const struct net_rule *rule, const char *name)
{
	if (rule->kind == RULE_NAME)
		return !strcmp(rule->name, name);
	if (rule->kind != RULE_WILDCARD)
		return 0;
	size_t len = strlen(name), suffix = strlen(rule->name);
	return len > suffix + 1 && name[len - suffix - 1] == '.' && !strcmp(name + len - suffix, rule->name);
}

static int port_matches(const struct net_rule *rule, uint16_t port)
{
	return port >= rule->port_lo && port <= rule->port_hi;
}

int rules_name_allowed(const struct net_rules *r, const char *given)
{
	char name[NET_NAME_MAX + 1];
	if (net_name_normal(given, name))
		return 0;
	int allowed = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct net_rule *rule = &r->v[i];
		if (!name_matches(rule, name))
			continue;
		if (rule->deny && rule->port_lo == 1 && rule->port_hi == 65535)
			return 0;
		allowed |= !rule->deny;
	}
	return allowed;
}

enum net_verdict rules_check(const struct net_rules *r, const struct net_addr *given, uint16_t port, const char *pinned,
			     const struct net_rule **why)
{
	const struct net_rule *dummy;
	why = why ? why : &dummy;
	*why = NULL;
	struct net_addr a = normal(given);
	char name[NET_NAME_MAX + 1];
	int named = pinned && !net_name_normal(pinned, name);
	int prefix;
	if (range_of(floor_ranges, NFLOOR, &a, &prefix))
		return NET_DENY_FLOOR;
	for (size_t i = 0; i < r->n; i++) { /* deny rules win */
		const struct net_rule *rule = &r->v[i];
		if (rule->deny && port_matches(rule, port) &&
		    (rule->kind == RULE_CIDR ? covers(&rule->net, rule->prefix, &a) : named && name_matches(rule, name))) {
			*why = rule;
			return NET_DENY_RULE;
		}
	}
	const struct range *private = range_of(private_ranges, NPRIVATE, &a, &prefix);
	enum net_verdict v = NET_DENY_UNLISTED;
	for (size_t i = 0; i < r->n; i++) {
		const struct net_rule *rule = &r->v[i];
		if (rule->deny || !port_matches(rule, port))
			continue;
		if (rule->kind != RULE_CIDR) {
			if (named && name_matches(rule, name)) {
				*why = rule;
				if (!private)
					return NET_ALLOW;
				v = NET_DENY_PRIVATE; /* a name never reaches a private address */
			}
			continue;
		}
		if (!covers(&rule->net, rule->prefix, &a))
			continue;
		*why = rule;
		if (!private || range_holding(private_ranges, NPRIVATE, &rule->net, rule->prefix))
			return NET_ALLOW;
		v = NET_DENY_PRIVATE; /* a broad rule does not open private ranges */
	}
	return v;
}

const char *net_verdict_text(enum net_verdict v)
{
	switch (v) {
	case NET_ALLOW:
		return "allowed";
	case NET_DENY_FLOOR:
		return "inside the floor no rule can open (metadata, multicast, reserved)";
	case NET_DENY_PRIVATE:
		return "a private or loopback address no rule inside such a range lists";
	case NET_DENY_RULE:
		return "a deny rule";
	case NET_DENY_UNLISTED:
		return "no allow rule lists it";
	}
	return "?";
}

char *net_addr_text(const struct net_addr *a, char *out, size_t n)
{
	if (!inet_ntop(a->family, a->a, out, (socklen_t)n))
		snprintf(out, n, "?");
	return out;
}

char *rule_text(const struct net_rule *rule, char *out, size_t n)
{
	char host[NET_NAME_MAX + 8], ports[16];
	if (rule->kind == RULE_CIDR) {
		char t[INET6_ADDRSTRLEN];
		net_addr_text(&rule->net, t, sizeof t);
		snprintf(host, sizeof host, rule->net.family == AF_INET6 ? "[%s/%d]" : "%s/%d", t, rule->prefix);
	} else {
		snprintf(host, sizeof host, "%s%s", rule->kind == RULE_WILDCARD ? "*." : "", rule->name);
	}
	if (rule->port_lo == 1 && rule->port_hi == 65535)
		snprintf(ports, sizeof ports, "*");
	else if (rule->port_lo == rule->port_hi)
		snprintf(ports, sizeof ports, "%u", rule->port_lo);
	else
		snprintf(ports, sizeof ports, "%u-%u", rule->port_lo, rule->port_hi);
	snprintf(out, n, "%s %s:%s", rule->deny ? "deny" : "allow", host, ports);
	return out;
}
