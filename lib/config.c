/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk: a run's configuration, kept as the husk command line it becomes
 * (husk_run_argv).  Option names are checked against husk's own table
 * (vmm/option_table.c); their values are husk's to check. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "lib_internal.h"
#include "option_table.h"

/* Set through their own calls, or the library's to give: not by name. */
static const char *const not_by_name[] = { "env", "ro", "workdir", "audit", "stats", "help", "version",
					   "kernel-selftest" };

static int in(const char *name, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, set[i]))
			return 1;
	return 0;
}

int husk_lib_fail(struct husk_error *err, int code, int errno_value, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		err->status = 0;
		err->errno_value = errno_value;
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int no_memory(struct husk_error *err)
{
	return husk_lib_fail(err, HUSK_E_SYSTEM, ENOMEM, "out of memory");
}

/* s, appended to the list (a copy). */
static int push(struct strlist *l, const char *s, struct husk_error *err)
{
	char *copy = strdup(s);
	char **v = copy ? realloc(l->v, (l->n + 2) * sizeof *l->v) : NULL;
	if (!v) {
		free(copy);
		return no_memory(err);
	}
	l->v = v;
	l->v[l->n++] = copy;
	l->v[l->n] = NULL;
	return 0;
}

static void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct strlist){ 0 };
}

husk_config *husk_config_new(const char *program)
{
	if (!program)
		return NULL;
	husk_config *c = calloc(1, sizeof *c);
	if (!c || !(c->program = strdup(program))) {
		free(c);
		return NULL;
	}
	c->stdin_fd = -1;
	for (int s = 1; s <= 2; s++)
		c->out[s].fd = -1;
	return c;
}

void husk_config_free(husk_config *c)
{
	if (!c)
		return;
	free(c->program);
	free(c->husk_path);
	free(c->stdin_data);
	strlist_free(&c->args);
	strlist_free(&c->options);
	free(c);
}

int husk_config_arg(husk_config *c, const char *arg, struct husk_error *err)
{
	if (!c || !arg)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_arg: no config or no argument");
	return push(&c->args, arg, err);
}

/* "--NAME" and VALUE (if any) in the options, replacing an earlier one
 * unless the option is a list. */
static int put_option(husk_config *c, const char *name, const char *value, int list, struct husk_error *err)
{
	char flag[64];
	snprintf(flag, sizeof flag, "--%s", name);
	if (!list)
		for (size_t i = 0; i < c->options.n; i++)
			if (!strcmp(c->options.v[i], flag)) {
				if (!value)
					return 0;
				char *copy = strdup(value);
				if (!copy)
					return no_memory(err);
				free(c->options.v[i + 1]);
				c->options.v[i + 1] = copy;
				return 0;
			}
	if (push(&c->options, flag, err) || (value && push(&c->options, value, err)))
		return -1;
	return 0;
}

int husk_config_env(husk_config *c, const char *name, const char *value, struct husk_error *err)
{
	if (!c || !name || !value || !name[0] || strchr(name, '='))
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_env: a variable needs a name without '=' and a value");
	char *var;
	if (asprintf(&var, "%s=%s", name, value) < 0)
		return no_memory(err);
	int r = push(&c->options, "--env", err) || push(&c->options, var, err) ? -1 : 0;
	free(var);
	return r;
}

int husk_config_set(husk_config *c, const char *option, const char *value, struct husk_error *err)
{
	if (!c || !option)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_set: no config or no option");
	const struct option *o = husk_option_find(option);
	if (!o || in(option, not_by_name, sizeof not_by_name / sizeof *not_by_name))
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "unknown option '%s'%s", option,
				 o ? " (it has a call of its own, or is the library's)" : "");
	if (o->has_arg == required_argument && !value)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "option '%s' needs a value", option);
	if (o->has_arg == no_argument && value)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "option '%s' takes no value", option);
	return put_option(c, option, value, husk_option_repeats(option), err);
}

int husk_config_ro(husk_config *c, const char *name, const char *dir, struct husk_error *err)
{
	if (!c || !dir || !dir[0] || !name || !name[0] || strchr(name, '=') || strchr(name, '/'))
		return husk_lib_fail(err, HUSK_E_INVALID, 0,
				     "husk_config_ro: a dataset needs a name (no '=' or '/') and a directory");
	char *spec;
	if (asprintf(&spec, "%s=%s", name, dir) < 0)
		return no_memory(err);
	int r = push(&c->options, "--ro", err) || push(&c->options, spec, err) ? -1 : 0;
	free(spec);
	return r;
}

int husk_config_workdir(husk_config *c, const char *dir, struct husk_error *err)
{
	if (!c || !dir || !dir[0])
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_workdir: no directory");
	return put_option(c, "workdir", dir, 0, err);
}

int husk_config_stdin_bytes(husk_config *c, const void *data, size_t len, struct husk_error *err)
{
	if (!c || (!data && len))
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_stdin_bytes: no config or no data");
	void *copy = malloc(len ? len : 1);
	if (!copy)
		return no_memory(err);
	memcpy(copy, data, len);
	free(c->stdin_data);
	c->stdin_data = copy;
	c->stdin_len = len;
	c->stdin_fd = -1;
	c->stdin_mode = STDIN_BYTES;
	return 0;
}

int husk_config_stdin_fd(husk_config *c, int fd, struct husk_error *err)
{
	if (!c || fd < 0)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_stdin_fd: no config or a negative fd");
	free(c->stdin_data);
	c->stdin_data = NULL;
	c->stdin_len = 0;
	c->stdin_fd = fd;
	c->stdin_mode = STDIN_FD;
	return 0;
}

int husk_config_output_fd(husk_config *c, int stream, int fd, struct husk_error *err)
{
	if (!c || (stream != 1 && stream != 2) || fd < 0)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_output_fd: stream 1 or 2, and an fd");
	c->out[stream] = (struct output){ .fd = fd };
	return 0;
}

int husk_config_output_callback(husk_config *c, int stream, husk_output_fn fn, void *arg, struct husk_error *err)
{
	if (!c || (stream != 1 && stream != 2) || !fn)
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_output_callback: stream 1 or 2, and a function");
	c->out[stream] = (struct output){ .fd = -1, .fn = fn, .arg = arg };
	return 0;
}

int husk_config_husk_path(husk_config *c, const char *path, struct husk_error *err)
{
	char *copy = c && path ? strdup(path) : NULL;
	if (!copy)
		return c && path ? no_memory(err) : husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_config_husk_path: no path");
	free(c->husk_path);
	c->husk_path = copy;
	return 0;
}

const char *husk_version(void)
{
	return HUSK_VERSION;
}
