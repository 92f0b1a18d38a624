/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/net/rules.c: entries parsed or refused with a reason, names resolved
 * or not, connects allowed or denied for the reason docs/network.md gives
 * (the floor, private ranges, deny over allow, rebinding). */
#include <arpa/inet.h>
#include <string.h>
#include "net/rules.h"
#include "tap.h"

static struct net_addr A(const char *s)
{
	struct net_addr a = { 0 };
	a.family = strchr(s, ':') ? AF_INET6 : AF_INET;
	inet_pton(a.family, s, a.a);
	return a;
}

/* rules from entries; 0 when all parsed */
static int make(struct net_rules *r, const char *const *entries)
{
	char err[256];
	*r = (struct net_rules){ 0 };
	for (; *entries; entries++)
		if (rules_add(r, *entries, err, sizeof err)) {
			printf("# %s\n", err);
			return -1;
		}
	return 0;
}

static enum net_verdict check(const struct net_rules *r, const char *addr, int port, const char *name)
{
	struct net_addr a = A(addr);
	return rules_check(r, &a, (uint16_t)port, name, NULL);
}

static int refused(const char *entry, const char *reason_part)
{
	struct net_rules r = { 0 };
	char err[256] = "";
	int bad = rules_add(&r, entry, err, sizeof err) == -1 && r.n == 0 && strstr(err, reason_part);
	if (!bad)
		printf("# \"%s\": got \"%s\"\n", entry, err);
	rules_free(&r);
	return bad;
}

int main(void)
{
	struct net_rules r;
	char t[128];

	/* parsing */
	ok(!make(&r, (const char *[]){ "api.example.com", 0 }) && r.n == 2 && r.v[0].port_lo == 443 &&
		   r.v[1].port_lo == 80 && r.v[0].kind == RULE_NAME,
	   "a name alone: two rules, ports 443 and 80");
	rules_free(&r);
	ok(!make(&r, (const char *[]){ "API.Example.COM.:8443", "*.pypi.org:443", "10.1.2.0/24:8000-8100",
				       "[2001:4860::/32]:*", "2a00:1450::1", "!evil.example.com", 0 }) &&
		   r.n == 7,
	   "names (case, trailing dot), a wildcard, a CIDR with a port range, [IPv6/prefix]:*, a bare IPv6, a deny");
	ok(!strcmp(rule_text(&r.v[0], t, sizeof t), "allow api.example.com:8443"), "printed back: %s", t);
	ok(!strcmp(rule_text(&r.v[1], t, sizeof t), "allow *.pypi.org:443"), "printed back: %s", t);
	ok(!strcmp(rule_text(&r.v[2], t, sizeof t), "allow 10.1.2.0/24:8000-8100"), "printed back: %s", t);
	ok(!strcmp(rule_text(&r.v[3], t, sizeof t), "allow [2001:4860::/32]:*"), "printed back: %s", t);
	ok(!strcmp(rule_text(&r.v[4], t, sizeof t), "allow [2a00:1450::1/128]:*"), "printed back: %s", t);
	ok(!strcmp(rule_text(&r.v[5], t, sizeof t), "deny evil.example.com:443"), "printed back: %s", t);
	rules_free(&r);

	ok(refused("169.254.169.254/32", "inside 169.254.0.0/16"), "the metadata address is refused as an entry");
	ok(refused("169.254.169.254", "which no rule can open"), "the metadata address without a prefix too");
	ok(refused("::ffff:169.254.169.254", "inside 169.254.0.0/16"), "its IPv4-mapped form too");
	ok(refused("[fd00:ec2::254]:80", "cloud metadata"), "AWS's IPv6 metadata address too");
	ok(refused("224.0.0.0/8", "multicast"), "a multicast range");
	ok(refused("10.1.2.3/24", "did you mean 10.1.2.0/24"), "bits below the prefix: the fix is suggested");
	ok(refused("10.0.0.0/33", "not an address"), "a prefix too long");
	ok(refused("example.com:0", "ports must be"), "port 0");
	ok(refused("example.com:70000", "ports must be"), "port 70000");
	ok(refused("example.com:90-80", "ports must be"), "a backwards range");
	ok(refused("example.com:http", "ports must be"), "a port by name");
	ok(refused("exa mple.com", "not a host name"), "a space in a name");
	ok(refused("a..b", "not a host name"), "an empty label");
	ok(refused("*", "not a host name"), "a lone *");
	ok(refused("", "no host"), "nothing");
	ok(refused("[::1", "expected [IPv6 address]"), "an unclosed bracket");
	ok(refused("[example.com]:80", "not an address"), "a name in brackets");
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	ok(refused(longname, "longer than 253"), "a 299-byte name");
	memset(longname, 'a', 64);
	strcpy(longname + 64, ".com");
	ok(refused(longname, "not a host name"), "a 64-byte label");

	/* broad entries are accepted, the floor subtracted */
	ok(!make(&r, (const char *[]){ "0.0.0.0/0", "[::/0]", 0 }), "0.0.0.0/0 and ::/0 are accepted");
	ok(check(&r, "93.184.216.34", 443, NULL) == NET_ALLOW, "allow-all: a public address");
	ok(check(&r, "2606:2800:220:1::1", 443, NULL) == NET_ALLOW, "allow-all: a public IPv6 address");
	ok(check(&r, "169.254.169.254", 80, NULL) == NET_DENY_FLOOR, "allow-all: the metadata address is not");
	ok(check(&r, "::ffff:169.254.169.254", 80, NULL) == NET_DENY_FLOOR, "nor its IPv4-mapped form");
	ok(check(&r, "64:ff9b::a9fe:a9fe", 80, NULL) == NET_DENY_FLOOR, "nor its NAT64 form");
	ok(check(&r, "fe80::1", 80, NULL) == NET_DENY_FLOOR, "nor IPv6 link-local");
	ok(check(&r, "255.255.255.255", 80, NULL) == NET_DENY_FLOOR, "nor broadcast");
	ok(check(&r, "239.1.1.1", 80, NULL) == NET_DENY_FLOOR, "nor multicast");
	ok(check(&r, "0.0.0.0", 80, NULL) == NET_DENY_FLOOR, "nor 0.0.0.0");
	ok(check(&r, "10.0.0.5", 80, NULL) == NET_DENY_PRIVATE, "allow-all does not open 10/8");
	ok(check(&r, "127.0.0.1", 80, NULL) == NET_DENY_PRIVATE, "nor loopback");
	ok(check(&r, "::1", 80, NULL) == NET_DENY_PRIVATE, "nor IPv6 loopback");
	ok(check(&r, "::ffff:127.0.0.1", 80, NULL) == NET_DENY_PRIVATE, "nor loopback IPv4-mapped");
	ok(check(&r, "fd12::1", 80, NULL) == NET_DENY_PRIVATE, "nor unique local IPv6");
	ok(check(&r, "100.64.1.1", 80, NULL) == NET_DENY_PRIVATE, "nor the shared address space");
	rules_free(&r);

	/* private ranges open only by a rule inside them */
	ok(!make(&r, (const char *[]){ "127.0.0.1/32:8080", "10.0.0.0/8:5432", 0 }), "loopback and 10/8 entries");
	ok(check(&r, "127.0.0.1", 8080, NULL) == NET_ALLOW, "127.0.0.1:8080 listed: allowed");
	ok(check(&r, "127.0.0.1", 8081, NULL) == NET_DENY_UNLISTED, "another port: denied");
	ok(check(&r, "127.0.0.2", 8080, NULL) == NET_DENY_UNLISTED, "another loopback address: denied");
	ok(check(&r, "10.9.8.7", 5432, NULL) == NET_ALLOW, "10.9.8.7:5432 under 10/8: allowed");
	ok(check(&r, "192.168.1.1", 5432, NULL) == NET_DENY_UNLISTED, "192.168.1.1: denied");
	rules_free(&r);

	/* names, wildcards, pinning, rebinding, deny over allow */
	ok(!make(&r, (const char *[]){ "api.example.com", "*.cdn.example.net:443", "!bad.cdn.example.net",
				       "!*.internal.example.net:*", "*.example.net", 0 }),
	   "names, wildcards and denies");
	ok(rules_name_allowed(&r, "api.example.com"), "api.example.com resolves");
	ok(rules_name_allowed(&r, "API.EXAMPLE.COM."), "in capitals with a trailing dot too");
	ok(!rules_name_allowed(&r, "example.com"), "example.com does not (not listed)");
	ok(!rules_name_allowed(&r, "evil-api.example.com"), "evil-api.example.com does not");
	ok(rules_name_allowed(&r, "img.cdn.example.net"), "img.cdn.example.net resolves (wildcard)");
	ok(rules_name_allowed(&r, "cdn.example.net"), "cdn.example.net resolves by *.example.net (not *.cdn.example.net)");
	ok(!rules_name_allowed(&r, "example.net"), "example.net itself does not: a wildcard is for subdomains");
	ok(!rules_name_allowed(&r, "db.internal.example.net"), "a deny for every port keeps a name unresolved");
	ok(rules_name_allowed(&r, "bad.cdn.example.net"), "a deny for some ports still lets the name resolve");
	ok(!rules_name_allowed(&r, "xcdn.example.netx"), "a name that only contains the suffix does not");
	ok(!rules_name_allowed(&r, "bad name"), "an invalid name does not");
	ok(check(&r, "93.184.216.34", 443, "api.example.com") == NET_ALLOW, "a pinned address of an allowed name: 443");
	ok(check(&r, "93.184.216.34", 80, "api.example.com") == NET_ALLOW, "and 80");
	ok(check(&r, "93.184.216.34", 8443, "api.example.com") == NET_DENY_UNLISTED, "not 8443");
	ok(check(&r, "93.184.216.34", 443, NULL) == NET_DENY_UNLISTED, "the same address given directly: denied");
	ok(check(&r, "127.0.0.1", 443, "api.example.com") == NET_DENY_PRIVATE, "a name resolving to 127.0.0.1: rebinding, denied");
	ok(check(&r, "10.0.0.1", 443, "api.example.com") == NET_DENY_PRIVATE, "to 10.0.0.1: denied");
	ok(check(&r, "169.254.169.254", 443, "api.example.com") == NET_DENY_FLOOR, "to the metadata address: the floor");
	ok(check(&r, "93.184.216.34", 443, "bad.cdn.example.net") == NET_DENY_RULE, "a denied name on its port: the deny wins");
	const struct net_rule *why;
	struct net_addr pub = A("93.184.216.34");
	ok(rules_check(&r, &pub, 443, "img.cdn.example.net", &why) == NET_ALLOW && why && why->kind == RULE_WILDCARD,
	   "the rule that allowed is given: %s", why ? rule_text(why, t, sizeof t) : "none");
	rules_free(&r);

	ok(!make(&r, (const char *[]){ "0.0.0.0/0", "!93.184.216.0/24:443", 0 }), "allow-all with a deny CIDR");
	ok(check(&r, "93.184.216.34", 443, NULL) == NET_DENY_RULE, "the denied range on 443: denied");
	ok(check(&r, "93.184.216.34", 80, NULL) == NET_ALLOW, "on 80: allowed");
	rules_free(&r);

	ok(!make(&r, (const char *[]){ 0 }) && check(&r, "93.184.216.34", 443, NULL) == NET_DENY_UNLISTED &&
		   !rules_name_allowed(&r, "example.com"),
	   "no rules: nothing resolves, nothing connects");
	ok(strstr(net_verdict_text(NET_DENY_FLOOR), "metadata") != NULL, "a verdict's text: %s", net_verdict_text(NET_DENY_FLOOR));
	return tap_done();
}
