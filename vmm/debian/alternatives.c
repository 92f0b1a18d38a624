/* SPDX-License-Identifier: GPL-2.0-only */
/* Debian's alternatives without running maintainer scripts: the lines
 *   update-alternatives --install LINK NAME PATH PRIORITY [--slave LINK NAME PATH]...
 * of the packages' postinst scripts (libblas.so.3 -> OpenBLAS's, for one),
 * the highest priority of each NAME winning as in auto mode, made as
 * update-alternatives makes them: LINK -> /etc/alternatives/NAME -> PATH.
 * A line with a shell variable or quoting in it is not guessed at. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "debian/debian.h"
#include "errmsg.h"

#define MAX_WORDS 64
#define MAX_GROUPS 512

struct link {
	char *link, *name, *path;
};

struct group {
	struct link master, slave[MAX_WORDS / 4];
	int nslaves;
	long priority;
};

struct table {
	struct group g[MAX_GROUPS];
	int n;
};

/* The whole file, its backslash-newlines joined; malloc'd, or NULL. */
static char *read_script(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *s = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&s, &size);
	int c, prev = 0;
	while (m && (c = getc(f)) != EOF) {
		if (prev == '\\' && c == '\n') {
			prev = ' ';
			continue;
		}
		if (prev)
			putc(prev, m);
		prev = c;
	}
	if (m && prev)
		putc(prev, m);
	fclose(f);
	if (m)
		fclose(m);
	return s;
}

static int safe_word(const char *w)
{
	return !strpbrk(w, "$`'\"\\*?;&|<>(){}");
}

static void free_group(struct group *g)
{
	free(g->master.link), free(g->master.name), free(g->master.path);
	for (int i = 0; i < g->nslaves; i++)
		free(g->slave[i].link), free(g->slave[i].name), free(g->slave[i].path);
}

static int take_link(struct link *l, char **w)
{
	if (w[0][0] != '/' || w[2][0] != '/' || !safe_word(w[0]) || !safe_word(w[1]) || !safe_word(w[2]) ||
	    strchr(w[1], '/'))
		return -1;
	l->link = strdup(w[0]), l->name = strdup(w[1]), l->path = strdup(w[2]);
	return l->link && l->name && l->path ? 0 : -1;
}

/* One line's words: a --install group into t, keeping the higher priority
 * for a NAME seen before. */
static void take_line(struct table *t, char **w, int nw)
{
	int i = 0;
	while (i < nw && strcmp(w[i], "--install"))
		i++;
	if (i + 4 >= nw) /* LINK NAME PATH PRIORITY */
		return;
	struct group g = { 0 };
	char *end;
	g.priority = strtol(w[i + 4], &end, 10);
	if (*end || take_link(&g.master, w + i + 1)) {
		free_group(&g);
		return;
	}
	int max = sizeof g.slave / sizeof g.slave[0];
	for (i += 5; i + 3 < nw && !strcmp(w[i], "--slave") && g.nslaves < max; i += 4)
		if (take_link(&g.slave[g.nslaves], w + i + 1) == 0)
			g.nslaves++;
	for (int k = 0; k < t->n; k++)
		if (!strcmp(t->g[k].master.name, g.master.name)) {
			if (g.priority > t->g[k].priority) {
				free_group(&t->g[k]);
				t->g[k] = g;
			} else {
				free_group(&g);
			}
			return;
		}
	if (t->n < MAX_GROUPS)
		t->g[t->n++] = g;
	else
		free_group(&g);
}

static void scan_script(struct table *t, const char *path)
{
	char *s = read_script(path);
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (strstr(line, "update-alternatives") && strstr(line, "--install")) {
			char *w[MAX_WORDS], *save;
			int nw = 0;
			for (char *tok = strtok_r(line, " \t", &save); tok && nw < MAX_WORDS; tok = strtok_r(NULL, " \t", &save))
				w[nw++] = tok;
			take_line(t, w, nw);
		}
		line = nl ? nl + 1 : NULL;
	}
	free(s);
}

/* path as a symlink to target, its directory made if missing (an
 * existing entry is left alone: a package's own file wins). */
static int make_link(int rootfd, const char *path, const char *target)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path + 1);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	int dfd = root_mkdirs(rootfd, dir);
	if (dfd < 0)
		return -1;
	int r = symlinkat(target, dfd, slash + 1);
	close(dfd);
	return r < 0 && errno != EEXIST ? -1 : 0;
}

int alternatives_apply(int rootfd, const char *ctrl, const struct deb_list *debs, char *err, size_t len)
{
	struct table *t = calloc(1, sizeof *t);
	if (!t)
		return errmsg(err, len, "out of memory");
	for (int i = 0; i < debs->n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s/postinst", ctrl, debs->v[i].name);
		scan_script(t, path);
	}
	int made = 0;
	for (int k = 0; k < t->n; k++) {
		struct group *g = &t->g[k];
		struct link *all[1 + sizeof g->slave / sizeof g->slave[0]];
		int nl = 0;
		all[nl++] = &g->master;
		for (int i = 0; i < g->nslaves; i++)
			all[nl++] = &g->slave[i];
		struct stat st;
		/* a link whose file is missing (a slave's manual page not shipped) is left out, as Debian does */
		for (int i = 0; i < nl; i++) {
			int fd = root_open(rootfd, all[i]->path + 1, O_PATH, 0);
			if (fd < 0 || fstat(fd, &st) < 0) {
				if (fd >= 0)
					close(fd);
				if (i == 0)
					break;
				continue;
			}
			close(fd);
			char alt[4096];
			snprintf(alt, sizeof alt, "/etc/alternatives/%s", all[i]->name);
			if (make_link(rootfd, alt, all[i]->path) || make_link(rootfd, all[i]->link, alt)) {
				errmsg(err, len, "cannot make the alternative %s -> %s", all[i]->link, all[i]->path);
				for (int j = 0; j < t->n; j++)
					free_group(&t->g[j]);
				free(t);
				return -1;
			}
			made += i == 0;
		}
	}
	for (int j = 0; j < t->n; j++)
		free_group(&t->g[j]);
	free(t);
	return made;
}
