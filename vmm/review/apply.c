/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "errmsg.h"
#include "exit_codes.h"
#include "full_io.h"
#include "disks/copyin.h"
#include "disks/extract.h"
#include "review/apply.h"

struct applier {
	struct stage *s;
	int top;
	/* the directory of the last change, kept open: changes come in tree
	 * order, most beside the one before */
	int last_fd;
	char last_dir[4096];
	mode_t umask;
	int64_t now;
	unsigned tmp_seq;
	struct apply_stats *st;
};

int stage_want_paths(json_t *c, size_t i, void *ctx)
{
	const struct stage_paths *w = ctx;
	const char *p = change_str(c, "path"), *from = change_str(c, "from");
	(void)i;
	for (int k = 0; k < w->n; k++) {
		size_t n = strlen(w->v[k]);
		while (n > 1 && w->v[k][n - 1] == '/')
			n--;
		for (const char *q = p; q; q = q == p ? from : NULL)
			if (!strncmp(q, w->v[k], n) && (q[n] == 0 || q[n] == '/'))
				return 1;
	}
	return w->n == 0;
}

int stage_unchanged(const struct stat *s, json_t *before)
{
	if (!before || (uint64_t)s->st_dev != (uint64_t)change_num(before, "dev") || (uint64_t)s->st_ino != (uint64_t)change_num(before, "ino"))
		return 0;
	return S_ISDIR(s->st_mode) ||
	       ((uint64_t)s->st_size == (uint64_t)change_num(before, "size") && copyin_ns(s->st_mtim) == change_num(before, "mtime_ns") &&
		copyin_ns(s->st_ctim) == change_num(before, "ctime_ns"));
}

static void refuse(struct applier *a, json_t *c, const char *why)
{
	char shown[600];
	const char *p = change_str(c, "path");
	str_escape(p, strlen(p), shown, sizeof shown);
	fprintf(stderr, "husk: apply: %s: %s; left staged\n", shown, why);
	a->st->refused++;
}

static struct timespec clamp_time(struct applier *a, int64_t t)
{
	return extract_clamp_time(t, a->now);
}

static mode_t file_mode(struct applier *a, json_t *c)
{
	json_t *b = json_object_get(c, "before");
	return extract_file_mode((unsigned)change_num(c, "mode"), b ? (int)change_num(b, "mode") : -1, a->umask);
}

/* The staged data into a temporary in dir: a hard link of the stage's copy
 * when both are on one file system, else a copy.  0 or -1 (errno). */
static int put_data(struct applier *a, json_t *c, int dir, const char *tmp)
{
	int in = stage_data_open(a->s, c);
	if (in < 0)
		return -1;
	char name[48];
	snprintf(name, sizeof name, "data/%lld", (long long)change_num(c, "data"));
	int fd = -1, r = 0;
	if (linkat(a->s->dir, name, dir, tmp, 0) == 0)
		fd = openat(dir, tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	else if ((fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
		for (ssize_t k; (k = copy_file_range(in, NULL, fd, NULL, 1 << 30, 0)) != 0;) {
			if (k > 0)
				continue;
			if (errno == EINTR)
				continue;
			static char buf[65536]; /* copy_file_range refused: by hand */
			ssize_t m;
			while ((m = read(in, buf, sizeof buf)) > 0 && !(r = full_write(fd, buf, (size_t)m)))
				;
			r = r || m < 0 ? -1 : 0;
			break;
		}
	}
	int e = errno;
	close(in);
	if (fd < 0)
		return errno = e, -1;
	struct timespec t[2] = { clamp_time(a, change_num(c, "mtime")), clamp_time(a, change_num(c, "mtime")) };
	if (!r && (fchmod(fd, file_mode(a, c)) < 0 || futimens(fd, t) < 0))
		r = -1;
	e = errno;
	if (close(fd) < 0 && !r)
		r = -1, e = errno;
	return r ? (errno = e, -1) : 0;
}

/* A hard link to a file of the workdir the program left alone (link_to). */
static int put_link(struct applier *a, json_t *c, int dir, const char *tmp)
{
	char last[256];
	int at = extract_host_parent(a->top, change_str(c, "link_to"), 0, last);
	if (at < 0)
		return -1;
	int r = linkat(at, last, dir, tmp, 0);
	int e = errno;
	if (at != a->top)
		close(at);
	return r ? (errno = e, -1) : 0;
}

static int put(struct applier *a, json_t *c, int dir, const char *tmp)
{
	const char *type = change_str(c, "type");
	if (!strcmp(type, "symlink")) {
		struct timespec t[2] = { clamp_time(a, change_num(c, "mtime")), clamp_time(a, change_num(c, "mtime")) };
		return symlinkat(change_str(c, "target"), dir, tmp) < 0 || utimensat(dir, tmp, t, AT_SYMLINK_NOFOLLOW) < 0 ? -1 : 0;
	}
	if (!strcmp(type, "dir"))
		return mkdirat(dir, tmp, ((mode_t)change_num(c, "mode") & 0777 & ~a->umask) | 0700);
	return json_object_get(c, "data") ? put_data(a, c, dir, tmp) : put_link(a, c, dir, tmp);
}

/* Removes the host's entry, a directory only when empty (and then the
 * directory kept open is no longer to be trusted). */
static int remove_entry(struct applier *a, int dir, const char *name, const struct stat *s)
{
	if (!S_ISDIR(s->st_mode))
		return unlinkat(dir, name, 0);
	if (a->last_fd >= 0 && a->last_fd != dir) {
		close(a->last_fd);
		a->last_fd = -1;
	}
	return unlinkat(dir, name, AT_REMOVEDIR);
}

static void applied(struct applier *a, json_t *c)
{
	a->st->applied++;
	if (!strcmp(change_str(c, "type"), "file") && strcmp(change_str(c, "action"), "delete"))
		a->st->bytes += (uint64_t)change_num(c, "size");
	json_object_set_new(c, "state", json_string("applied"));
}

/* extract_host_parent, through the last change's directory when it is this
 * one's: the fd is the applier's (never to close). */
static int parent(struct applier *a, const char *path, int make, char name[256])
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	if (a->last_fd >= 0 && len < sizeof a->last_dir && strlen(a->last_dir) == len && !strncmp(path, a->last_dir, len)) {
		extract_host_name(slash ? slash + 1 : path, name);
		return a->last_fd;
	}
	int fd = extract_host_parent(a->top, path, make, name);
	if (fd < 0 || fd == a->top || len >= sizeof a->last_dir)
		return fd;
	if (a->last_fd >= 0)
		close(a->last_fd);
	a->last_fd = fd;
	memcpy(a->last_dir, path, len);
	a->last_dir[len] = 0;
	return fd;
}

static void apply_one(struct applier *a, json_t *c)
{
	const char *action = change_str(c, "action"), *type = change_str(c, "type");
	json_t *before = json_object_get(c, "before");
	char name[256], tmp[64], why[300];
	int dir = parent(a, change_str(c, "path"), strcmp(action, "delete") != 0, name);
	if (dir < 0) {
		snprintf(why, sizeof why, "its directory on the host: %s", strerror(errno));
		refuse(a, c, why);
		return;
	}
	struct stat s;
	int have = fstatat(dir, name, &s, AT_SYMLINK_NOFOLLOW) == 0;
	const char *no = NULL;
	if (!strcmp(action, "create") || !strcmp(action, "rename")) {
		if (have && !strcmp(type, "dir") && S_ISDIR(s.st_mode) && !strcmp(action, "create"))
			goto applied; /* made already, for what went in it */
		if (have)
			no = "the host has made this path since the run started";
	} else if (!have) {
		no = strcmp(action, "delete") ? "the host has removed it since the run started" : NULL;
		if (!no)
			goto applied; /* gone on the host too */
	} else if (!stage_unchanged(&s, before)) {
		no = "the host has changed it since the run started";
	}
	if (no) {
		refuse(a, c, no);
		return;
	}
	if (!strcmp(action, "delete")) {
		if (remove_entry(a, dir, name, &s) < 0) {
			refuse(a, c, errno == ENOTEMPTY || errno == EEXIST ? "the host has added to this directory since the run started"
									    : strerror(errno));
			return;
		}
		goto applied;
	}
	if (!strcmp(action, "mode")) {
		if (fchmodat(dir, name, (mode_t)change_num(c, "mode") & 0777, 0) < 0) {
			refuse(a, c, strerror(errno));
			return;
		}
		goto applied;
	}
	snprintf(tmp, sizeof tmp, ".husk-tmp-%d-%u", (int)getpid(), a->tmp_seq++);
	if (!strcmp(action, "rename")) { /* the new name made, then the old one goes */
		char last[256];
		struct stat from;
		int fdir = extract_host_parent(a->top, change_str(c, "from"), 0, last);
		if (fdir < 0 || fstatat(fdir, last, &from, AT_SYMLINK_NOFOLLOW) < 0 || !stage_unchanged(&from, before))
			refuse(a, c, "its old name on the host has changed or gone since the run started");
		else if (put(a, c, dir, tmp) == 0 && extract_rename_noreplace(dir, tmp, name) == 0 &&
			 unlinkat(fdir, last, 0) == 0)
			applied(a, c);
		else {
			refuse(a, c, strerror(errno));
			unlinkat(dir, tmp, 0);
		}
		if (fdir >= 0 && fdir != a->top)
			close(fdir);
		return;
	}
	/* create, modify, replace: a temporary, renamed into place */
	if (put(a, c, dir, tmp) < 0) {
		refuse(a, c, strerror(errno));
		unlinkat(dir, tmp, !strcmp(type, "dir") ? AT_REMOVEDIR : 0);
		return;
	}
	int r;
	if (!have)
		r = extract_rename_noreplace(dir, tmp, name);
	else if (S_ISDIR(s.st_mode) != !strcmp(type, "dir"))
		r = remove_entry(a, dir, name, &s) < 0 ? -1 : extract_rename_noreplace(dir, tmp, name);
	else
		r = renameat(dir, tmp, dir, name);
	if (r < 0) {
		int e = errno;
		unlinkat(dir, tmp, !strcmp(type, "dir") ? AT_REMOVEDIR : 0);
		refuse(a, c, e == EEXIST ? "the host has made this path during the apply" : strerror(e));
		return;
	}
applied:
	applied(a, c);
}

/* Deletions first, deepest first (a directory's entries before it), then
 * the rest in the stage's order (a directory before what goes in it). */
struct step {
	json_t *c;
	size_t i;
	int deletes;
};

static int by_order(const void *x, const void *y)
{
	const struct step *a = x, *b = y;
	if (a->deletes != b->deletes)
		return b->deletes - a->deletes;
	if (a->deletes)
		return strcmp(change_str(b->c, "path"), change_str(a->c, "path"));
	return (a->i > b->i) - (a->i < b->i);
}

int stage_apply(struct stage *s, stage_want *want, void *ctx, struct apply_stats *st, char *err, size_t n)
{
	memset(st, 0, sizeof *st);
	struct applier a = { .s = s, .st = st, .now = time(NULL), .last_fd = -1 };
	a.umask = umask(0);
	umask(a.umask);
	const char *workdir = change_str(s->manifest, "workdir");
	a.top = copyin_open_dir(workdir, err, n);
	struct stat t;
	if (a.top < 0)
		return EXIT_USAGE;
	size_t i, k = 0, total = json_array_size(s->changes);
	struct step *order = calloc(total ? total : 1, sizeof *order);
	int bad = fstat(a.top, &t) < 0 || (uint64_t)t.st_dev != (uint64_t)change_num(s->manifest, "workdir_dev") ||
		  (uint64_t)t.st_ino != (uint64_t)change_num(s->manifest, "workdir_ino");
	if (bad || !order) {
		close(a.top);
		free(order);
		if (bad)
			errmsg(err, n, "%s is no longer the directory this stage was made from", workdir);
		else
			errmsg(err, n, "out of memory");
		return bad ? EXIT_USAGE : EXIT_INTERNAL;
	}
	json_t *c;
	json_array_foreach(s->changes, i, c) if (change_pending(c) && want(c, i, ctx))
		order[k++] = (struct step){ c, i, !strcmp(change_str(c, "action"), "delete") };
	qsort(order, k, sizeof *order, by_order);
	for (i = 0; i < k; i++)
		apply_one(&a, order[i].c);
	free(order);
	if (a.last_fd >= 0)
		close(a.last_fd);
	close(a.top);
	if (stage_settle(s, err, n))
		return EXIT_WORKDIR;
	return st->refused ? EXIT_WORKDIR : 0;
}

void stage_drop(struct stage *s, stage_want *want, void *ctx)
{
	size_t i;
	json_t *c;
	json_array_foreach(s->changes, i, c) if (change_pending(c) && want(c, i, ctx))
		json_object_set_new(c, "state", json_string("dropped"));
}

int stage_settle(struct stage *s, char *err, size_t n)
{
	if (!stage_pending(s))
		return stage_remove(s, err, n);
	return stage_save(s, err, n);
}
