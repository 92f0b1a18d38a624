/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdlib.h>
#include <string.h>
#include "errmsg.h"
#include "net/net_config.h"
#include "options.h"

int net_attached(const struct options *o)
{
	for (int i = 0; i < o->nnet_rules; i++)
		if (o->net_rules[i][0] != '!')
			return 1;
	return 0;
}

int net_config_build(const struct options *o, struct broker_config *c, char *err, size_t n)
{
	*c = (struct broker_config){ .dns = 1, .dns_servers = o->net_dns, .check_names = !o->net_no_name_check,
				     .max_open = o->net_max_open, .max_connects = o->net_max_connects,
				     .max_denials = o->net_max_denials, .max_bytes = o->net_max_bytes,
				     .max_rate = o->net_max_rate, .max_resolves = o->net_max_resolves, .record_fd = -1 };
	for (int i = 0; i < o->nnet_rules; i++)
		if (rules_add(&c->rules, o->net_rules[i], err, n))
			goto fail;
	if (o->nnet_hosts && !(c->hosts = calloc((size_t)o->nnet_hosts, sizeof *c->hosts))) {
		errmsg(err, n, "out of memory");
		goto fail;
	}
	for (int i = 0; i < o->nnet_hosts; i++, c->nhosts++)
		if (broker_host_parse(o->net_hosts[i], &c->hosts[i], err, n))
			goto fail;
	return 0;
fail:
	net_config_free(c);
	return -1;
}

void net_config_free(struct broker_config *c)
{
	rules_free(&c->rules);
	free(c->hosts);
	c->hosts = NULL;
	c->nhosts = 0;
}

int net_options_check(const struct options *o, char *err, size_t n)
{
	struct broker_config c;
	if (net_config_build(o, &c, err, n))
		return -1;
	net_config_free(&c);
	return 0;
}

json_t *net_config_json(const struct options *o)
{
	struct broker_config c;
	char err[256];
	if (!net_attached(o))
		return o->net_loopback ? json_pack("{s:b}", "loopback", 1) : json_null();
	if (net_config_build(o, &c, err, sizeof err))
		return json_null();
	json_t *allow = json_array(), *deny = json_array(), *hosts = json_object();
	for (size_t i = 0; i < c.rules.n; i++) {
		char t[NET_NAME_MAX + 64];
		const struct net_rule *r = &c.rules.v[i];
		rule_text(r, t, sizeof t);
		/* "allow api.example.com:443": the entry without its verdict */
		json_array_append_new(r->deny ? deny : allow, json_string(strchr(t, ' ') + 1));
	}
	for (size_t i = 0; i < c.nhosts; i++) {
		json_t *a = json_array();
		for (int k = 0; k < c.hosts[i].n; k++) {
			char t[64];
			json_array_append_new(a, json_string(net_addr_text(&c.hosts[i].addr[k], t, sizeof t)));
		}
		json_object_set_new(hosts, c.hosts[i].name, a);
	}
	json_t *floor = json_object(), *private = json_object();
	const char *cidr, *what;
	for (size_t i = 0; (cidr = rules_range(0, i, &what)); i++)
		json_object_set_new(floor, cidr, json_string(what));
	for (size_t i = 0; (cidr = rules_range(1, i, &what)); i++)
		json_object_set_new(private, cidr, json_string(what));
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:b, s:I, s:I, s:I, s:I, s:I, s:I}", "allow", allow, "deny", deny,
			      "never", floor, "only_by_an_entry_inside", private, "hosts", hosts, "name_check",
			      c.check_names, "max_open", (json_int_t)c.max_open, "max_connects", (json_int_t)c.max_connects,
			      "max_denials", (json_int_t)c.max_denials, "max_bytes", (json_int_t)c.max_bytes,
			      "max_rate", (json_int_t)c.max_rate, "max_resolves", (json_int_t)c.max_resolves);
	json_object_set_new(j, "loopback", json_true()); /* with a network, always */
	json_object_set_new(j, "dns", o->net_dns ? json_string(o->net_dns) : json_string("the host's resolv.conf"));
	net_config_free(&c);
	return j;
}
