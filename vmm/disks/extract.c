/* SPDX-License-Identifier: GPL-2.0-only */
/* The workdir writer: applies what the program changed (see extract.h).
 * Each guest entry is compared with the copy-in record: an entry still at
 * the inode it was copied to, which the guest never wrote, is left alone;
 * any other is written, beside the host's version if the host changed that
 * path during the run.  A recorded name the guest no longer has is deleted
 * if the host left it as it was. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "errmsg.h"
#include "full_io.h"
#include "progress.h"
#include "disks/extract.h"
#include "disks/extract_stream.h"
#include "disks/workdir_reader.h"

#define CHUNK 65536
#define WARN_LINES 20 /* then only counted */

/* Host files by a key (open addressing; key 0: a free slot). */
struct host_files {
	struct host_file { uint64_t key; dev_t dev; ino_t ino; } *v;
	size_t n, cap;
};

struct writer {
	int in; /* the record stream */
	int root;
	const struct copyin_record *rec;
	const struct extract_limits *lim;
	struct extract_stats *st;
	unsigned char *seen; /* per record entry: the guest still has that name */
	mode_t umask;
	int64_t now;
	uint64_t entries, warned;
	unsigned tmp_seq;
	struct host_files written;  /* for each guest inode written, the host file */
	struct host_files relinked; /* host files with several names this write-back unlinked one of */
	char path[MAX_PATH]; /* guest path of the current entry, from the top */
};

struct level {
	int fd;         /* the host directory; -1 in a skipped subtree */
	size_t plen;    /* length of its guest path */
	int recorded;   /* it is the directory copied in: deletions apply */
	int fresh;      /* made by this write-back: no host version to respect */
	int conflict;   /* a NAME.husk-conflict directory */
	char host[256]; /* its name in the parent directory on the host */
};

/* ---- messages ------------------------------------------------------------ */

static void warn(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct writer *w, const char *fmt, ...)
{
	if (w->warned++ >= WARN_LINES)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("husk: workdir: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static const char *shown(const char *path, char buf[600])
{
	return str_escape(path, strlen(path), buf, 600);
}

static void conflict(struct writer *w, const char *path, const char *what)
{
	char b[600];
	if (w->st->conflicts < EXTRACT_NOTED)
		str_escape(path, strlen(path), w->st->conflict[w->st->conflicts], sizeof w->st->conflict[0]);
	w->st->conflicts++;
	warn(w, "conflict: %s %s", shown(path, b), what);
}

static void failure(struct writer *w, const char *path, int e)
{
	char b[600];
	w->st->failed++;
	warn(w, "cannot write back %s: %s", shown(path, b), strerror(e));
}

/* ---- the record and the host's state -------------------------------------- */

static int same_inode(const struct stat *s, const struct copyin_entry *e)
{
	return s->st_dev == e->dev && s->st_ino == e->ino && (s->st_mode & S_IFMT) == (e->mode & S_IFMT);
}

static struct host_file *host_files_slot(struct host_files *l, uint64_t key, dev_t dev, ino_t ino)
{
	size_t i = l->cap ? key % l->cap : 0;
	while (l->cap && l->v[i].key && !(l->v[i].key == key && (!dev || (l->v[i].dev == dev && l->v[i].ino == ino))))
		i = (i + 1) % l->cap;
	return l->cap ? &l->v[i] : NULL;
}

/* dev 0: looked up by key alone. */
static void host_files_add(struct host_files *l, uint64_t key, const struct stat *s)
{
	if (2 * (l->n + 1) > l->cap) {
		struct host_files bigger = { calloc(l->cap ? 2 * l->cap : 64, sizeof *l->v), l->n, l->cap ? 2 * l->cap : 64 };
		if (!bigger.v)
			return; /* only an optimisation is lost */
		for (size_t i = 0; i < l->cap; i++)
			if (l->v[i].key)
				*host_files_slot(&bigger, l->v[i].key, l->v[i].dev, l->v[i].ino) = l->v[i];
		free(l->v);
		*l = bigger;
	}
	struct host_file *f = host_files_slot(l, key, s->st_dev, s->st_ino);
	l->n += !f->key;
	*f = (struct host_file){ key, s->st_dev, s->st_ino };
}

static uint64_t inode_key(const struct stat *s)
{
	return ((uint64_t)s->st_ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)s->st_dev) | 1;
}

/* Removing one name of a host file with several changes the others' ctime:
 * that change is the write-back's own, not the host's. */
static int relinked_here(struct writer *w, const struct stat *s)
{
	struct host_file *f = host_files_slot(&w->relinked, inode_key(s), s->st_dev, s->st_ino);
	return f && f->key;
}

static void note_unlink(struct writer *w, int dirfd, const char *name)
{
	struct stat s;
	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && s.st_nlink > 1 && !S_ISDIR(s.st_mode))
		host_files_add(&w->relinked, inode_key(&s), &s);
}

/* The host's entry is the one copied in, unchanged since (a directory: the
 * same directory, whatever its entries). */
static int host_unchanged(struct writer *w, const struct stat *s, const struct copyin_entry *e)
{
	if (!same_inode(s, e))
		return 0;
	return S_ISDIR(s->st_mode) || ((uint64_t)s->st_size == e->size && copyin_ns(s->st_mtim) == e->mtime_ns &&
				       (copyin_ns(s->st_ctim) == e->ctime_ns || relinked_here(w, s)));
}

static const struct copyin_entry *recorded(struct writer *w, const char *path)
{
	const struct copyin_entry *e = w->rec ? copyin_find(w->rec, path) : NULL;
	if (e)
		w->seen[e - w->rec->e] = 1;
	return e;
}

/* Record entries under path: [*lo, *hi) holds its descendants, the
 * entries that start with "path/" (all but "" itself for the top). */
static void descendants(const struct copyin_record *rec, const char *path, size_t *lo, size_t *hi)
{
	static char prefix[MAX_PATH + 1];
	size_t plen = strlen(path);
	memcpy(prefix, path, plen);
	prefix[plen] = '/';
	plen += plen != 0; /* the top's descendants start with any name */
	prefix[plen] = 0;
	size_t a = 0, b = rec->n;
	while (a < b) { /* the first entry not before the prefix */
		size_t m = (a + b) / 2;
		if (strcmp(rec->e[m].path, prefix) < 0)
			a = m + 1;
		else
			b = m;
	}
	if (plen == 0 && a < rec->n && !rec->e[a].path[0])
		a++;
	*lo = a;
	while (a < rec->n && !strncmp(rec->e[a].path, prefix, plen))
		a++;
	*hi = a;
}

/* The name of a record entry within its directory, if it is a direct child
 * of a directory whose path is plen long. */
static const char *child_name(const struct copyin_entry *e, size_t plen)
{
	const char *name = e->path + plen + (plen != 0);
	return strchr(name, '/') ? NULL : name;
}

static void delete_children(struct writer *w, int dirfd, size_t lo, size_t hi, size_t plen, int only_unseen);

/* The program deleted this recorded entry: so does the host, unless the
 * host changed it meanwhile. */
static void delete_recorded(struct writer *w, int dirfd, const char *name, size_t i)
{
	const struct copyin_entry *e = &w->rec->e[i];
	struct stat s;
	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* gone on the host too */
	if (!host_unchanged(w, &s, e)) {
		conflict(w, e->path, "was deleted by the program and changed on the host: the host's is kept");
		return;
	}
	if (S_ISDIR(s.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat again;
		if (fd < 0 || fstat(fd, &again) < 0 || !same_inode(&again, e)) {
			if (fd >= 0)
				close(fd);
			return;
		}
		size_t lo, hi;
		descendants(w->rec, e->path, &lo, &hi);
		delete_children(w, fd, lo, hi, strlen(e->path), 0);
		close(fd);
		if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
			w->st->removed++;
		else if (errno == ENOTEMPTY || errno == EEXIST)
			conflict(w, e->path, "was deleted by the program; the host added to it: the host's is kept");
		else
			failure(w, e->path, errno);
	} else if (note_unlink(w, dirfd, name), unlinkat(dirfd, name, 0) == 0) {
		w->st->removed++;
	} else {
		failure(w, e->path, errno);
	}
}

static void delete_children(struct writer *w, int dirfd, size_t lo, size_t hi, size_t plen, int only_unseen)
{
	for (size_t i = lo; i < hi; i++) {
		const char *name = child_name(&w->rec->e[i], plen);
		if (name && !(only_unseen && w->seen[i]))
			delete_recorded(w, dirfd, name, i);
	}
}

/* ---- where a changed entry goes ------------------------------------------- */

/* Names as written on the host: control characters become '_' (a name
 * with a newline would surprise the user's scripts and tools). */
void extract_host_name(const char *name, char out[256])
{
	size_t i = 0;
	for (; name[i] && i < 255; i++)
		out[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '_' : name[i];
	out[i] = 0;
}

int extract_host_parent(int top, const char *path, int make, char name[256])
{
	int at = top;
	const char *p = path;
	for (const char *slash; (slash = strchr(p, '/')); p = slash + 1) {
		char part[256], hn[256];
		snprintf(part, sizeof part, "%.*s", (int)(slash - p), p);
		extract_host_name(part, hn);
		int sub = openat(at, hn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 && errno == ENOENT && make && mkdirat(at, hn, 0777) == 0)
			sub = openat(at, hn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (at != top)
			close(at);
		if (sub < 0)
			return errno = e == ELOOP ? ENOTDIR : e, -1;
		at = sub;
	}
	extract_host_name(p, name);
	return at;
}

int extract_host_open(int top, const char *path)
{
	char name[256];
	int dir = extract_host_parent(top, path, 0, name);
	int fd = dir < 0 ? -1 : openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (dir >= 0 && dir != top)
		close(dir);
	return fd;
}

/* name becomes NAME.husk-conflict, or .2, .3 ... if that is taken; 0 or
 * an errno. */
static int conflict_name(int dirfd, char name[256])
{
	char base[256], *out = name;
	size_t len = strlen(name);
	memcpy(base, name, len);
	for (int i = 1; i <= 100; i++) {
		char suffix[32];
		int k = i == 1 ? snprintf(suffix, sizeof suffix, ".husk-conflict")
			       : snprintf(suffix, sizeof suffix, ".husk-conflict.%d", i);
		if (len + (size_t)k >= 256)
			return ENAMETOOLONG;
		memcpy(out, base, len);
		memcpy(out + len, suffix, (size_t)k + 1);
		struct stat s;
		if (fstatat(dirfd, out, &s, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return 0;
	}
	return EEXIST;
}

enum place { P_NEW, P_REPLACE, P_CONFLICT, P_DONE, P_FAILED };

static struct timespec clamp_time(struct writer *w, int64_t t)
{
	return extract_clamp_time(t, w->now);
}

/* The host already holds what the program made there (a retried
 * write-back, or the host made the same change). */
static int already_there(struct writer *w, const struct stat *s, const struct rec *r)
{
	if (r->type == R_LINK) {
		struct host_file *f = host_files_slot(&w->written, r->ino, 0, 0);
		return f && f->key && s->st_dev == f->dev && s->st_ino == f->ino;
	}
	int type = r->type == R_SYMLINK ? S_IFLNK : S_IFREG;
	struct timespec t = clamp_time(w, r->mtime);
	return (s->st_mode & S_IFMT) == (mode_t)type && (uint64_t)s->st_size == r->size && s->st_mtim.tv_sec == t.tv_sec &&
	       s->st_mtim.tv_nsec == 0;
}

/* Decides where a changed non-directory entry goes: its own name (new, or
 * replacing the unchanged recorded one) or a conflict name in out. */
static enum place place(struct writer *w, struct level *l, const char *name, const struct copyin_entry *e,
			const struct rec *r, char out[256])
{
	extract_host_name(name, out);
	if (l->fresh)
		return P_NEW;
	struct stat s;
	if (fstatat(l->fd, out, &s, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT) {
			failure(w, w->path, errno);
			return P_FAILED;
		}
		if (!e)
			return P_NEW;
		conflict(w, w->path, "was deleted on the host and changed by the program: the program's is beside it");
	} else if (e && host_unchanged(w, &s, e) && S_ISDIR(s.st_mode)) {
		/* a directory the program replaced: goes if the host added nothing */
		delete_recorded(w, l->fd, out, (size_t)(e - w->rec->e));
		if (fstatat(l->fd, out, &s, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return P_NEW;
	} else if (e && host_unchanged(w, &s, e)) {
		return P_REPLACE;
	} else if (already_there(w, &s, r)) {
		w->st->unchanged++;
		return P_DONE;
	} else {
		conflict(w, w->path, "was changed on the host and by the program: the program's is beside it");
	}
	int err = conflict_name(l->fd, out);
	if (err) {
		failure(w, w->path, err);
		return P_FAILED;
	}
	return P_CONFLICT;
}

/* ---- writing --------------------------------------------------------------- */

static void tmp_name(struct writer *w, char out[48])
{
	snprintf(out, 48, ".husk-tmp-%d-%u", (int)getpid(), w->tmp_seq++);
}

/* A rename that fails with EEXIST where name exists.  File systems without
 * RENAME_NOREPLACE (FUSE 2, some network ones) get a check, then a rename. */
int extract_rename_noreplace(int dirfd, const char *tmp, const char *name)
{
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	struct stat s;
	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0)
		return errno = EEXIST, -1;
	return renameat(dirfd, tmp, dirfd, name);
}

/* The temporary into its place: over the recorded entry, or only where
 * nothing is (else beside it, as a conflict). */
static int move_into_place(struct writer *w, struct level *l, const char *tmp, char name[256], enum place p)
{
	if (p == P_REPLACE) {
		note_unlink(w, l->fd, name);
		return renameat(l->fd, tmp, l->fd, name);
	}
	for (int retried = 0; extract_rename_noreplace(l->fd, tmp, name) < 0; retried = 1) {
		if (errno != EEXIST || retried)
			return -1;
		conflict(w, w->path, "appeared on the host during the write-back: the program's is beside it");
		if ((errno = conflict_name(l->fd, name)))
			return -1;
	}
	return 0;
}

static mode_t file_mode(struct writer *w, const struct rec *r, const struct copyin_entry *e)
{
	return extract_file_mode(r->mode, e ? (int)e->mode : -1, w->umask);
}

static void remember(struct writer *w, uint32_t gino, int dirfd, const char *name)
{
	struct stat s;
	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0)
		host_files_add(&w->written, gino, &s);
}

/* Data into a fresh temporary, then renamed into place: whatever was there
 * (a symlink included) is replaced, never written through.  0, or -1 when
 * the stream broke (host errors are reported and counted). */
static int write_file(struct writer *w, struct level *l, const char *name, const struct rec *r,
		      const struct copyin_entry *e)
{
	char target[256], tmp[48];
	enum place p = place(w, l, name, e, r, target);
	if (p == P_DONE || p == P_FAILED)
		return full_skip(w->in, r->size);
	tmp_name(w, tmp);
	int fd = openat(l->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int err = fd < 0 ? errno : 0;
	static char buf[CHUNK];
	uint64_t left = r->size;
	/* straight from the stream into the file: splice (one copy, not two) */
	while (!err && left) {
		ssize_t k = splice(w->in, NULL, fd, NULL, left < (1u << 30) ? left : (1u << 30), SPLICE_F_MOVE);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* not a pipe, a file that refuses it, a write error, or the stream's end: as below */
		left -= (uint64_t)k;
		progress_show(w->entries, "entries", w->st->bytes + (r->size - left));
	}
	for (; left;) {
		size_t k = left < CHUNK ? left : CHUNK;
		if (full_read(w->in, buf, k)) {
			if (fd >= 0)
				close(fd), unlinkat(l->fd, tmp, 0);
			return -1;
		}
		for (size_t done = 0; !err && done < k;) {
			ssize_t n = write(fd, buf + done, k - done);
			if (n < 0 && errno != EINTR)
				err = errno;
			done += n > 0 ? (size_t)n : 0;
		}
		left -= k;
	}
	struct timespec t[2] = { clamp_time(w, r->mtime), clamp_time(w, r->mtime) };
	if (!err && (fchmod(fd, file_mode(w, r, e)) < 0 || futimens(fd, t) < 0))
		err = errno;
	if (fd >= 0 && close(fd) < 0 && !err)
		err = errno;
	if (!err && move_into_place(w, l, tmp, target, p) < 0)
		err = errno;
	if (err) {
		unlinkat(l->fd, tmp, 0);
		failure(w, w->path, err);
		return 0;
	}
	remember(w, r->ino, l->fd, target);
	w->st->files++;
	w->st->bytes += r->size;
	return 0;
}

static int write_symlink(struct writer *w, struct level *l, const char *name, const struct rec *r,
			 const struct copyin_entry *e)
{
	char target[4096], where[256], tmp[48];
	if (r->size >= sizeof target || full_read(w->in, target, r->size))
		return -1;
	target[r->size] = 0;
	if (strlen(target) != r->size || !r->size) {
		w->st->skipped++;
		return 0;
	}
	enum place p = place(w, l, name, e, r, where);
	if (p == P_DONE || p == P_FAILED)
		return 0;
	tmp_name(w, tmp);
	struct timespec t[2] = { clamp_time(w, r->mtime), clamp_time(w, r->mtime) };
	if (symlinkat(target, l->fd, tmp) < 0 || utimensat(l->fd, tmp, t, AT_SYMLINK_NOFOLLOW) < 0 ||
	    move_into_place(w, l, tmp, where, p) < 0) {
		int err = errno;
		unlinkat(l->fd, tmp, 0);
		failure(w, w->path, err);
		return 0;
	}
	w->st->symlinks++;
	return 0;
}

/* The host file the first name of a guest inode became: one this write-back
 * wrote for it, or the recorded one if it was left alone.  An fd of its
 * directory (*dirfd, to close) and its name in last, or -1. */
static int link_source(struct writer *w, char *first, uint32_t gino, int *dirfd, char **last)
{
	const struct copyin_entry *e = w->rec ? copyin_find(w->rec, first) : NULL;
	static char hn[256];
	int at = extract_host_parent(w->root, first, 0, hn);
	struct stat s;
	int ok = at >= 0 && fstatat(at, hn, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
	if (ok) {
		struct rec want = { .type = R_LINK, .ino = gino };
		ok = already_there(w, &s, &want) || (e && e->guest_ino == gino && host_unchanged(w, &s, e));
	}
	if (!ok) {
		if (at >= 0 && at != w->root)
			close(at);
		return -1;
	}
	*dirfd = at, *last = hn;
	return 0;
}

/* Another name for a file sent before: a hard link to its first name. */
static int write_link(struct writer *w, struct level *l, const char *name, const struct rec *r,
		      const struct copyin_entry *e)
{
	static char first[MAX_PATH];
	if (r->size >= sizeof first || full_read(w->in, first, r->size))
		return -1;
	first[r->size] = 0;
	char where[256], tmp[48], *last;
	int at;
	if (strlen(first) != r->size || link_source(w, first, r->ino, &at, &last) < 0) {
		conflict(w, w->path, "is a hard link to a file that was not written back as the program left it: not made");
		return 0;
	}
	enum place p = place(w, l, name, e, r, where);
	if (p != P_DONE && p != P_FAILED) {
		tmp_name(w, tmp);
		if (linkat(at, last, l->fd, tmp, 0) < 0 || move_into_place(w, l, tmp, where, p) < 0) {
			int err = errno;
			unlinkat(l->fd, tmp, 0);
			failure(w, w->path, err);
		} else {
			w->st->files++;
		}
	}
	if (at != w->root)
		close(at);
	return 0;
}

/* ---- directories ----------------------------------------------------------- */

static int make_dir(struct writer *w, int parent, const char *name, const struct rec *r, struct level *out)
{
	mode_t m = ((r->mode & 0777) & ~w->umask) | 0700;
	if (mkdirat(parent, name, m) < 0)
		return -1;
	out->fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (out->fd < 0)
		return -1;
	out->fresh = 1;
	w->st->dirs++;
	return 0;
}

/* The host directory for a guest directory: the recorded one, one the host
 * made there too, a new one, or NAME.husk-conflict where the host removed
 * or replaced the recorded one. */
static void enter_dir(struct writer *w, struct level *parent, const char *name, const struct rec *r,
		      const struct copyin_entry *e, struct level *out)
{
	*out = (struct level){ .fd = -1, .plen = strlen(w->path) };
	char *hn = out->host;
	extract_host_name(name, hn);
	if (parent->fd < 0)
		return;
	if (parent->fresh) {
		if (make_dir(w, parent->fd, hn, r, out) < 0)
			failure(w, w->path, errno);
		return;
	}
	struct stat s;
	int have = fstatat(parent->fd, hn, &s, AT_SYMLINK_NOFOLLOW) == 0;
	if (have && S_ISDIR(s.st_mode)) {
		out->fd = openat(parent->fd, hn, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (out->fd < 0 || fstat(out->fd, &s) < 0) {
			failure(w, w->path, errno);
			return;
		}
		out->recorded = e && same_inode(&s, e);
		if (out->recorded && r->touched && (r->mode & 0777) != (e->mode & 0777))
			fchmod(out->fd, r->mode & 0777);
		return;
	}
	if (!have && !e) {
		if (make_dir(w, parent->fd, hn, r, out) < 0)
			failure(w, w->path, errno);
		return;
	}
	if (have && e && host_unchanged(w, &s, e) &&
	    (note_unlink(w, parent->fd, hn), unlinkat(parent->fd, hn, 0) == 0)) {
		w->st->removed++; /* a file the program replaced by a directory */
		if (make_dir(w, parent->fd, hn, r, out) < 0)
			failure(w, w->path, errno);
		return;
	}
	int err = conflict_name(parent->fd, hn);
	if (err || make_dir(w, parent->fd, hn, r, out) < 0) {
		failure(w, w->path, err ? err : errno);
		return;
	}
	out->conflict = 1;
}

static void leave_dir(struct writer *w, struct level *l, struct level *parent)
{
	if (l->recorded) {
		size_t lo, hi;
		w->path[l->plen] = 0;
		descendants(w->rec, w->path, &lo, &hi);
		delete_children(w, l->fd, lo, hi, l->plen, 1);
	}
	if (l->fd >= 0 && l->fd != w->root)
		close(l->fd);
	l->fd = -1;
	/* a conflict directory is kept only if the program changed something in it */
	if (l->conflict && unlinkat(parent->fd, l->host, AT_REMOVEDIR) == 0)
		w->st->dirs--;
	else if (l->conflict)
		conflict(w, w->path, "was removed or replaced on the host: the program's changes in it are beside it");
}

/* ---- the walk -------------------------------------------------------------- */

/* The program left this entry alone: the name it was copied to, the inode
 * it was copied into, never written by the guest. */
static int untouched(const struct rec *r, const struct copyin_entry *e)
{
	return stream_untouched(e, r->ino, r->mode, r->touched);
}

static const char *reader_error(uint64_t why)
{
	switch (why) {
	case RE_ENTRIES: return "the workdir holds more entries than the limit; the rest was not written back";
	case RE_BYTES: return "the workdir holds more data than its disk; the rest was not written back";
	case RE_DEPTH: return "the workdir is nested deeper than 128 levels; the rest was not written back";
	case RE_LOOP: return "the workdir image is corrupt (a directory loop); the rest was not written back";
	case RE_MEMORY: return "the workdir image needs more memory to read than allowed; the rest was not written back";
	default: return "the workdir image is corrupt or unreadable; the rest was not written back";
	}
}

static int one_entry(struct writer *w, struct level *l, const struct rec *r, const char *name)
{
	const struct copyin_entry *e = recorded(w, w->path);
	if ((r->flags & R_WITHHELD) && !(r->type == R_FILE && untouched(r, e)))
		return -1; /* the reader's rule is the writer's: a broken stream */
	if (l->fd >= 0 && (r->flags & R_LOST)) {
		conflict(w, w->path, "was changed by the program, but the parts it left were in the host's file, "
				     "replaced or removed on the host during the run: the program's version cannot be "
				     "rebuilt; the host's is kept");
		return full_skip(w->in, r->size);
	}
	if (l->fd >= 0 && untouched(r, e) && r->type != R_DIR) {
		w->st->unchanged++;
		return full_skip(w->in, r->size);
	}
	if (l->fd < 0) /* inside a directory that could not be written */
		return full_skip(w->in, r->size);
	switch (r->type) {
	case R_FILE: return write_file(w, l, name, r, e);
	case R_SYMLINK: return write_symlink(w, l, name, r, e);
	case R_LINK: return write_link(w, l, name, r, e);
	default: {
		char b[600];
		w->st->skipped++;
		warn(w, "skipped %s (a device, fifo or socket)", shown(w->path, b));
		return full_skip(w->in, r->size);
	}
	}
}

static struct level stack[MAX_DEPTH + 2];
static int depth;

/* One record; 1 at the end of the stream, 0 to go on, -1 with err. */
static int step(struct writer *w, char *err, size_t n)
{
	struct rec r;
	char name[256];
	if (full_read(w->in, &r, sizeof r))
		return errmsg(err, n, "the workdir image ended early (corrupt or unreadable)");
	if (r.type == R_END)
		return 1;
	if (r.type == R_ERROR)
		return errmsg(err, n, "%s", reader_error(r.size));
	if (r.type == R_UP) {
		if (!depth)
			return errmsg(err, n, "malformed workdir stream");
		leave_dir(w, &stack[depth], &stack[depth - 1]);
		depth--;
		w->path[stack[depth].plen] = 0;
		return 0;
	}
	if (r.name_len >= sizeof name || full_read(w->in, name, r.name_len))
		return errmsg(err, n, "malformed workdir stream");
	name[r.name_len] = 0;
	if (++w->entries > w->lim->max_files)
		return errmsg(err, n, "%s", reader_error(RE_ENTRIES));
	progress_show(w->entries, "entries", w->st->bytes);
	if (r.size > w->lim->max_bytes - w->st->bytes)
		return errmsg(err, n, "%s", reader_error(RE_BYTES));
	size_t plen = stack[depth].plen;
	if (plen + 1 + r.name_len >= MAX_PATH)
		return errmsg(err, n, "%s", reader_error(RE_DEPTH));
	if (plen)
		w->path[plen++] = '/';
	memcpy(w->path + plen, name, r.name_len + 1);
	int valid = stream_valid_name(name, r.name_len);
	if (r.type == R_DIR) {
		if (depth == MAX_DEPTH)
			return errmsg(err, n, "%s", reader_error(RE_DEPTH));
		struct level *l = &stack[++depth];
		if (valid)
			enter_dir(w, &stack[depth - 1], name, &r, recorded(w, w->path), l);
		else
			*l = (struct level){ .fd = -1, .plen = strlen(w->path) };
		w->st->skipped += !valid;
		return 0;
	}
	int k = valid ? one_entry(w, &stack[depth], &r, name) : full_skip(w->in, r.size);
	w->st->skipped += !valid;
	w->path[stack[depth].plen] = 0;
	return k < 0 ? errmsg(err, n, "the workdir image ended early (corrupt or unreadable)") : 0;
}

/* The whole stream; directories left open by a broken one are closed, and
 * nothing is deleted in them. */
static int write_tree(struct writer *w, char *err, size_t n)
{
	depth = 0;
	stack[0] = (struct level){ .fd = w->root, .recorded = w->rec != NULL };
	w->path[0] = 0;
	int k;
	while (!(k = step(w, err, n)))
		;
	if (k > 0 && depth == 0) {
		leave_dir(w, &stack[0], NULL);
		return 0;
	}
	if (k > 0)
		errmsg(err, n, "malformed workdir stream");
	for (; depth > 0; depth--)
		if (stack[depth].fd >= 0)
			close(stack[depth].fd);
	return -1;
}

int workdir_extract(const struct workdir_image *img, int dirfd, const struct copyin_record *rec, const struct extract_limits *lim,
		    struct extract_stats *st, char *err, size_t n)
{
	memset(st, 0, sizeof *st);
	struct writer w = { .root = dirfd, .rec = rec, .lim = lim, .st = st };
	w.umask = umask(0);
	umask(w.umask);
	w.now = time(NULL);
	if (rec && !(w.seen = calloc(rec->n ? rec->n : 1, 1)))
		return errmsg(err, n, "out of memory");
	pid_t pid = workdir_reader_start(img, rec, lim, &w.in);
	if (pid < 0) {
		free(w.seen);
		return errmsg(err, n, "cannot start the workdir reader: %s", strerror(errno));
	}
	int rc = write_tree(&w, err, n);
	close(w.in);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = errmsg(err, n, "reading the workdir image failed (%s %d)", WIFSIGNALED(status) ? "signal" : "status",
			    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (w.warned > WARN_LINES)
		fprintf(stderr, "husk: workdir: %llu more warnings not shown\n", (unsigned long long)(w.warned - WARN_LINES));
	free(w.seen);
	free(w.written.v);
	free(w.relinked.v);
	if (rc)
		return EXTRACT_BAD_IMAGE;
	if (st->failed) {
		errmsg(err, n, "%llu path%s could not be written back", (unsigned long long)st->failed,
		       st->failed == 1 ? "" : "s");
		return EXTRACT_HOST_ERROR;
	}
	return EXTRACT_OK;
}
