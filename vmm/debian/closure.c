/* SPDX-License-Identifier: GPL-2.0-only */
/* The packages an image needs: apt-get's simulation of installing them on
 * an empty system (a dpkg status file of its own, no recommendations), so
 * what is installed on the host changes nothing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "debian/debian.h"
#include "errmsg.h"

char *deb_file_name(const struct deb *d)
{
	/* apt-get download: NAME_VERSION_ARCH.deb, the version's ':' as %3a */
	size_t n = strlen(d->name) + 3 * strlen(d->version) + strlen(d->arch) + 8;
	char *s = malloc(n), *o = s;
	if (!s)
		return NULL;
	o += sprintf(o, "%s_", d->name);
	for (const char *v = d->version; *v; v++)
		o += *v == ':' ? sprintf(o, "%%3a") : sprintf(o, "%c", *v);
	sprintf(o, "_%s.deb", d->arch);
	return s;
}

void deb_list_free(struct deb_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].version);
		free(l->v[i].arch);
	}
	free(l->v);
	*l = (struct deb_list){ 0 };
}

/* A field of apt's names: letters, digits and + - . : ~ only. */
static int plain(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.:~_", s[i]))
			return 0;
	return 1;
}

/* "Inst NAME (VERSION ORIGIN [ARCH])", maybe more after the ')': 0, or -1
 * if the line is not one. */
static int parse_inst(const char *line, size_t len, struct deb *d)
{
	const char *end = line + len, *name = line + 5, *e = memchr(name, ' ', end - name);
	const char *paren = e ? memchr(e, '(', end - e) : NULL;
	const char *close = paren ? memchr(paren, ')', end - paren) : NULL;
	const char *ve = paren ? memchr(paren, ' ', end - paren) : NULL;
	const char *arch = NULL, *ae = NULL;
	for (const char *p = close; p && p > paren; p--)
		if (p[-1] == '[') {
			arch = p;
			break;
		}
	ae = arch ? memchr(arch, ']', close - arch) : NULL;
	if (!close || !ve || ve > close || !ae || !plain(name, e - name) || !plain(paren + 1, ve - paren - 1) ||
	    !plain(arch, ae - arch))
		return -1;
	d->name = strndup(name, e - name);
	d->version = strndup(paren + 1, ve - paren - 1);
	d->arch = strndup(arch, ae - arch);
	return d->name && d->version && d->arch ? 0 : -1;
}

int closure_resolve(char *const packages[], int n, const char *work, struct deb_list *out, char *err, size_t len)
{
	*out = (struct deb_list){ 0 };
	char status[4096], opt[4200];
	snprintf(status, sizeof status, "%s/status", work);
	int fd = open(status, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return errmsg(err, len, "cannot create %s", status);
	close(fd);
	snprintf(opt, sizeof opt, "Dir::State::status=%s", status);
	char **argv = calloc(n + 16, sizeof *argv);
	if (!argv)
		return errmsg(err, len, "out of memory");
	int k = 0;
	argv[k++] = "/usr/bin/apt-get";
	argv[k++] = "-s";
	argv[k++] = "-qq";
	argv[k++] = "--no-install-recommends";
	argv[k++] = "-o";
	argv[k++] = opt;
	argv[k++] = "-o";
	argv[k++] = "Debug::NoLocking=1";
	argv[k++] = "install";
	for (int i = 0; i < n; i++)
		argv[k++] = packages[i];
	char *text;
	int st = tool_output(argv, &text);
	free(argv);
	if (st) {
		free(text);
		return errmsg(err, len, st < 0 ? "cannot run /usr/bin/apt-get (is apt installed?)"
					       : "apt-get cannot resolve these packages (its message is above; a fresh machine may need apt-get update)");
	}
	int cap = 0;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		if (ll > 5 && !memcmp(line, "Inst ", 5)) {
			if (out->n == cap) {
				cap = cap ? 2 * cap : 256;
				struct deb *v = realloc(out->v, cap * sizeof *v);
				if (!v) {
					free(text);
					deb_list_free(out);
					return errmsg(err, len, "out of memory");
				}
				out->v = v;
			}
			if (parse_inst(line, ll, &out->v[out->n])) {
				errmsg(err, len, "apt-get said something husk does not understand: %.*s", (int)ll, line);
				free(text);
				deb_list_free(out);
				return -1;
			}
			out->n++;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	if (!out->n)
		return errmsg(err, len, "apt-get gave no package to install");
	return 0;
}
