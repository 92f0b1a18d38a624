/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errmsg.h"
#include "net/net_config.h"
#include "policy.h"

/* key, option, kind: s size (string like "256M" or a whole number of bytes),
 * t seconds (number), n whole number, p path (string), b boolean (false
 * gives the option), B boolean (true gives it), m map of strings, l list of
 * strings (one option each), o an object of these (the network's). */
struct key {
	const char *key, *option;
	char kind;
};

/* The "network" object's keys. */
static const struct key net_keys[] = {
	{ "allow", "allow-net", 'l' }, { "deny", "deny-net", 'l' }, { "dns", "net-dns", 'p' },
	{ "hosts", "net-host", 'm' }, { "name_check", "net-no-name-check", 'b' },
	{ "max_open", "net-max-open", 'n' }, { "max_connects", "net-max-connects", 'n' },
	{ "max_denials", "net-max-denials", 'n' }, { "max_bytes", "net-max-bytes", 's' },
	{ "max_rate", "net-max-rate", 's' }, { "max_resolves", "net-max-resolves", 'n' },
	{ "loopback", "net-loopback", 'B' },
};

/* The "files" object's keys: what the program may change in the workdir. */
static const struct key file_keys[] = {
	{ "allow", "files-allow", 'l' }, { "max_size", "files-max-size", 's' },
	{ "max_total", "files-max-total", 's' }, { "refuse", "files-refuse", 'l' },
};

static const struct key keys[] = {
	{ "memory", "memory", 's' }, { "timeout", "timeout", 't' }, { "cpu_time", "cpu-time", 't' },
	{ "output_limit", "output-limit", 's' }, { "open_files", "open-files", 'n' }, { "pids", "pids", 'n' },
	{ "disk", "disk", 's' }, { "workdir", "workdir", 'p' }, { "env", "env", 'm' }, { "ro", "ro", 'm' },
	{ "pvm", "no-pvm", 'b' }, { "namespaces", "no-namespaces", 'b' }, { "network", NULL, 'o' },
	{ "cold", "cold", 'B' }, { "review", "review", 'B' }, { "files", NULL, 'o' },
};

struct list {
	char **v;
	int n;
};

static int push(struct list *l, const char *option, const char *value)
{
	char **v = realloc(l->v, (l->n + 2) * sizeof *v);
	if (!v)
		return -1;
	l->v = v;
	if (value ? asprintf(&v[l->n], "--%s=%s", option, value) < 0 : asprintf(&v[l->n], "--%s", option) < 0)
		return -1;
	v[++l->n] = NULL;
	return 0;
}

static int one(struct list *l, const struct key *table, size_t nkeys, const char *key, json_t *val, char *err,
	       size_t n)
{
	size_t k = 0;
	while (k < nkeys && strcmp(table[k].key, key))
		k++;
	if (k == nkeys)
		return errmsg(err, n, "unknown key \"%s\"", key);
	const char *opt = table[k].option;
	char buf[64];
	switch (table[k].kind) {
	case 's':
		if (json_is_string(val))
			return push(l, opt, json_string_value(val));
		if (!json_is_integer(val) || json_integer_value(val) < 0)
			return errmsg(err, n, "\"%s\" must be a size like \"256M\" or a number of bytes", key);
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(val));
		return push(l, opt, buf);
	case 'n':
		if (!json_is_integer(val))
			return errmsg(err, n, "\"%s\" must be a whole number", key);
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(val));
		return push(l, opt, buf);
	case 't':
		if (!json_is_number(val))
			return errmsg(err, n, "\"%s\" must be a number of seconds", key);
		snprintf(buf, sizeof buf, "%.17g", json_number_value(val));
		return push(l, opt, buf);
	case 'p':
		if (!json_is_string(val))
			return errmsg(err, n, "\"%s\" must be a string", key);
		return push(l, opt, json_string_value(val));
	case 'b':
	case 'B':
		if (!json_is_boolean(val))
			return errmsg(err, n, "\"%s\" must be true or false", key);
		return json_is_true(val) == (table[k].kind == 'B') ? push(l, opt, NULL) : 0;
	case 'l': {
		size_t i;
		json_t *v;
		if (!json_is_array(val))
			return errmsg(err, n, "\"%s\" must be a list of strings", key);
		json_array_foreach(val, i, v) {
			if (!json_is_string(v))
				return errmsg(err, n, "\"%s\"[%zu] must be a string", key, i);
			if (push(l, opt, json_string_value(v)))
				return -1;
		}
		return 0;
	}
	case 'o': {
		const char *name;
		json_t *v;
		if (!json_is_object(val))
			return errmsg(err, n, "\"%s\" must be an object", key);
		json_object_foreach(val, name, v) {
			char why[200] = "out of memory";
			int net = !strcmp(key, "network");
			if (one(l, net ? net_keys : file_keys, net ? sizeof net_keys / sizeof net_keys[0]
							       : sizeof file_keys / sizeof file_keys[0], name, v, why, sizeof why))
				return errmsg(err, n, "\"%s\": %s", key, why);
		}
		return 0;
	}
	}
	if (!json_is_object(val))
		return errmsg(err, n, "\"%s\" must be an object of strings", key);
	const char *name;
	json_t *v;
	json_object_foreach(val, name, v) {
		char *pair;
		if (!json_is_string(v))
			return errmsg(err, n, "\"%s\".\"%s\" must be a string", key, name);
		if (asprintf(&pair, "%s=%s", name, json_string_value(v)) < 0)
			return -1;
		int r = push(l, opt, pair);
		free(pair);
		if (r)
			return -1;
	}
	return 0;
}

int policy_to_args(const char *path, char ***args, char *err, size_t n)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return errmsg(err, n, "policy %s: %s (line %d)", path, je.text, je.line);
	struct list l = { NULL, 0 };
	char why[256] = "out of memory";
	int r = json_is_object(root) ? 0 : errmsg(why, sizeof why, "the top level must be an object");
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val) {
		if (r || (r = one(&l, keys, sizeof keys / sizeof keys[0], key, val, why, sizeof why)))
			break;
	}
	if (r)
		errmsg(err, n, "policy %s: %s", path, why);
	json_decref(root);
	if (r)
		return -1;
	*args = l.v;
	return l.n;
}

json_t *policy_json(const struct options *o)
{
	json_t *env = json_object(), *ro = json_object();
	for (int i = 0; i < o->nenv; i++) {
		const char *eq = strchr(o->env[i], '=');
		char *k = strndup(o->env[i], eq - o->env[i]);
		json_object_set_new(env, k, json_string(eq + 1));
		free(k);
	}
	for (int i = 0; i < o->nro; i++) {
		const char *eq = strchr(o->ro[i], '=');
		char *k = strndup(o->ro[i], eq - o->ro[i]);
		json_object_set_new(ro, k, json_string(eq + 1));
		free(k);
	}
	json_t *p = json_pack("{s:I, s:f, s:f, s:I, s:i, s:i, s:I, s:b, s:b, s:o, s:o}", "memory", (json_int_t)o->memory,
			      "timeout", o->timeout, "cpu_time", o->cpu_time, "output_limit", (json_int_t)o->output_limit,
			      "open_files", (int)o->open_files, "pids", (int)o->pids, "disk", (json_int_t)o->disk_size,
			      "pvm", !o->no_pvm, "namespaces", !o->no_namespaces, "env", env, "ro", ro);
	json_object_set_new(p, "workdir", o->workdir ? json_string(o->workdir) : json_null());
	json_object_set_new(p, "cold", json_boolean(o->cold));
	json_object_set_new(p, "network", net_config_json(o));
	json_object_set_new(p, "review", json_boolean(o->review));
	if (file_policy_set(&o->files)) {
		json_t *allow = json_array(), *refuse = json_array();
		static const char *const kinds[] = { "symlinks", "executables", "hidden" };
		for (int i = 0; i < o->files.nglobs; i++)
			json_array_append_new(allow, json_string(o->files.globs[i]));
		for (int i = 0; i < 3; i++)
			if (o->files.refuse & (1u << i))
				json_array_append_new(refuse, json_string(kinds[i]));
		json_object_set_new(p, "files", json_pack("{s:o, s:I, s:I, s:o}", "allow", allow, "max_size",
							  (json_int_t)o->files.max_file, "max_total",
							  (json_int_t)o->files.max_total, "refuse", refuse));
	}
	return p;
}
