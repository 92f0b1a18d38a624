/* SPDX-License-Identifier: GPL-2.0-only */
/* Host directories into ext2 images (copyin.h).  Each name in the tree is
 * opened with O_PATH|O_NOFOLLOW under its directory's fd and fstat'ed; a
 * file's data or a directory's entries are then read through that very
 * inode (reopened by /proc/self/fd), so nothing renamed or swapped in
 * meanwhile is followed or read in its place.  The image is written with
 * libext2fs directly: directories a block at a time as their entries are
 * met (no per-name search of the directory), file data in runs of blocks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>
#include "disks/copyin.h"
#include "errmsg.h"
#include "progress.h"

#define BS 4096u                                /* the image's block size */
#define CHUNK (1u << 20)                        /* file data read and written at once */
#define PATH_BYTES ((COPYIN_MAX_DEPTH + 2) * 256) /* a path from the top, at the deepest */
#define LINKS_MAX 65000                         /* an inode's, as ext4 has it (16 bits) */
#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- opening the top --------------------------------------------------------- */

/* The next component of a path: openat with O_NOFOLLOW (a directory
 * opened for reading if it is the last, else O_PATH), made first if missing
 * and `create`. */
static int next_component(int fd, const char *name, int last, int create)
{
	int flags = (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int next = openat(fd, name, flags);
	if (next < 0 && errno == ENOENT && create && (mkdirat(fd, name, 0755) == 0 || errno == EEXIST))
		next = openat(fd, name, flags);
	return next;
}

/* One component at a time with O_NOFOLLOW: where openat2 is missing, to
 * name the component it refused, and to make missing ones (`create`). */
static int walk_path(const char *path, int create, char *err, size_t n)
{
	if (!*path)
		return errmsg(err, n, "an empty path");
	int fd = open(*path == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errmsg(err, n, "%s: %s", path, strerror(errno));
	for (const char *p = path;;) {
		p += strspn(p, "/");
		size_t len = strcspn(p, "/");
		int last = !p[len + strspn(p + len, "/")];
		char name[NAME_MAX + 1];
		snprintf(name, sizeof name, "%.*s", (int)len, p);
		p += len;
		int next = len < sizeof name ? next_component(fd, len ? name : ".", last, create) : -1;
		int e = len < sizeof name ? errno : ENAMETOOLONG;
		struct stat st;
		int link = next < 0 && len && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
		close(fd);
		if (link)
			return errmsg(err, n, "%.*s is a symlink (give the real path)", (int)(p - path), path);
		if (next < 0)
			return errmsg(err, n, "%.*s: %s", (int)(p - path), path, strerror(e));
		if (last)
			return next;
		fd = next;
	}
}

int copyin_open_dir(const char *path, char *err, size_t n)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	return fd >= 0 ? fd : walk_path(path, 0, err, n);
}

int copyin_make_dir(const char *path, char *err, size_t n)
{
	return walk_path(path, 1, err, n);
}

int copyin_own_dir(const char *path, unsigned create_mode, char *err, size_t n)
{
	if (create_mode && mkdir(path, create_mode) < 0 && errno != EEXIST)
		return errmsg(err, n, "%s: %s", path, strerror(errno));
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return errmsg(err, n, "%s is a symlink", path); /* lstat: for the message only */
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return errmsg(err, n, "%s: %s", path, strerror(e));
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		return errmsg(err, n, "%s is owned by uid %u, not by you (uid %u) or root", path, (unsigned)st.st_uid,
			      (unsigned)geteuid());
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		return errmsg(err, n, "%s is writable by group or others (mode %03o)", path, (unsigned)st.st_mode & 07777);
	}
	return fd;
}

/* ---- the record ---------------------------------------------------------------- */

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct copyin_entry *)a)->path, ((const struct copyin_entry *)b)->path);
}

const struct copyin_entry *copyin_find(const struct copyin_record *rec, const char *path)
{
	struct copyin_entry key = { .path = (char *)path };
	return rec->n ? bsearch(&key, rec->e, rec->n, sizeof *rec->e, by_path) : NULL;
}

void copyin_record_free(struct copyin_record *rec)
{
	for (size_t i = 0; i < rec->n; i++)
		free(rec->e[i].path);
	free(rec->e);
	rec->e = NULL;
	rec->n = 0;
}

/* ---- the walk -------------------------------------------------------------------- */

#define SPARSE_ONLY 2 /* (mapping: only a file with holes is read, for where they are) */

struct walk;
struct walk_ops {
	int read_files; /* files are reopened for reading (else only fstat'ed); SPARSE_ONLY: those with holes */
	int (*dir_in)(struct walk *w, const struct stat *st);
	int (*dir_out)(struct walk *w);
	int (*file)(struct walk *w, int fd, const struct stat *st);
	int (*symlink)(struct walk *w, const struct stat *st, const char *target); /* NULL unless read_files */
};

struct walk {
	const struct walk_ops *ops;
	void *ctx;
	struct copyin_record *rec; /* or NULL */
	size_t cap;                /* of rec->e */
	char path[PATH_BYTES];     /* the current entry's, from the top ("" for it) */
	size_t plen;
	const char *name;          /* its name in its directory */
	int depth;                 /* of the current directory: 0 is the top */
	uint64_t names;            /* met so far, toward COPYIN_MAX_ENTRIES */
	char *err;
	size_t errlen;
};

/* "what PATH: reason", the path escaped (names are anybody's bytes) and
 * named by its last 160 bytes at most (from a '/'), so that the reason
 * still fits the line. */
static int fail(struct walk *w, const char *what, const char *why)
{
	char shown[600];
	str_escape(w->plen ? w->path : ".", w->plen ? w->plen : 1, shown, sizeof shown);
	const char *tail = shown;
	size_t len = strlen(shown);
	if (len > 160) {
		tail = strchr(shown + len - 160, '/');
		tail = tail ? tail : shown + len - 160;
	}
	return errmsg(w->err, w->errlen, "%s %s%s: %s", what, tail == shown ? "" : "...", tail, why);
}

static int fail_errno(struct walk *w, const char *what, int e)
{
	return fail(w, what, strerror(e));
}

/* The current entry goes into the record (if one is kept). */
static int note(struct walk *w, const struct stat *st, uint32_t guest_ino)
{
	struct copyin_record *r = w->rec;
	if (!r)
		return 0;
	if (r->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		struct copyin_entry *e = realloc(r->e, cap * sizeof *e);
		if (!e)
			return fail(w, "cannot record", "out of memory");
		r->e = e, w->cap = cap;
	}
	char *path = strdup(w->path);
	if (!path)
		return fail(w, "cannot record", "out of memory");
	r->e[r->n++] = (struct copyin_entry){ path, guest_ino, st->st_mode, st->st_dev, st->st_ino, (uint64_t)st->st_size,
					      copyin_ns(st->st_mtim), copyin_ns(st->st_ctim) };
	return 0;
}

/* pfd (an O_PATH fd) opened for reading: the same inode, whatever its
 * name is now. */
static int reopen(int pfd, int flags)
{
	char p[40];
	snprintf(p, sizeof p, "/proc/self/fd/%d", pfd);
	return open(p, flags | O_CLOEXEC | O_NOCTTY);
}

static int walk_dir(struct walk *w, int fd);

/* A directory: entered (the top, or one just opened), walked, left. */
static int enter(struct walk *w, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fail_errno(w, "cannot stat", errno);
	if (w->ops->dir_in(w, &st) || walk_dir(w, fd))
		return -1;
	return w->ops->dir_out(w);
}

/* pfd is closed first: a level holds two fds (its own and its reader's). */
static int visit_dir(struct walk *w, int pfd)
{
	int fd = w->depth == COPYIN_MAX_DEPTH ? -1 : reopen(pfd, O_RDONLY | O_DIRECTORY);
	int e = errno;
	close(pfd);
	if (w->depth == COPYIN_MAX_DEPTH)
		return fail(w, "cannot copy", "nested deeper than " STR(COPYIN_MAX_DEPTH) " directories");
	if (fd < 0)
		return fail_errno(w, "cannot open", e);
	w->depth++;
	int r = enter(w, fd);
	w->depth--;
	close(fd);
	return r;
}

static int visit_file(struct walk *w, int pfd, const struct stat *pst)
{
	if (!w->ops->read_files ||
	    (w->ops->read_files == SPARSE_ONLY && (uint64_t)pst->st_blocks * 512 >= (uint64_t)pst->st_size))
		return w->ops->file(w, -1, pst);
	/* O_NOATIME where allowed (the owner, or CAP_FOWNER): a copy leaves
	 * the host's access times alone. */
	int fd = reopen(pfd, O_RDONLY | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = reopen(pfd, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return fail_errno(w, "cannot open", e);
	}
	int r = w->ops->file(w, fd, &st);
	close(fd);
	return r;
}

static int visit_symlink(struct walk *w, int pfd, const struct stat *st)
{
	char target[BS];
	ssize_t k = readlinkat(pfd, "", target, sizeof target);
	if (k < 0 || k == (ssize_t)sizeof target)
		return fail_errno(w, "cannot read the symlink", k < 0 ? errno : ENAMETOOLONG);
	target[k] = 0;
	return w->ops->symlink(w, st, target);
}

/* Only metadata wanted (measuring), not a directory: fstatat without
 * following, nothing opened.  1: it is a directory after all. */
static int visit_meta(struct walk *w, int dirfd)
{
	struct stat st;
	if (fstatat(dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : fail_errno(w, "cannot stat", errno);
	if (S_ISREG(st.st_mode))
		return w->ops->file(w, -1, &st);
	if (S_ISLNK(st.st_mode))
		return w->ops->symlink(w, &st, NULL);
	return S_ISDIR(st.st_mode);
}

/* One name in the directory dirfd, opened without following it and handled
 * by the type of what was opened; fifos, sockets and devices are skipped. */
static int visit(struct walk *w, int dirfd, unsigned char type)
{
	if (!w->ops->read_files && type != DT_DIR) {
		int r = visit_meta(w, dirfd);
		if (r <= 0)
			return r;
	}
	int pfd = openat(dirfd, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? 0 : fail_errno(w, "cannot open", errno); /* ENOENT: gone since listed */
	struct stat st;
	int r = fstat(pfd, &st) < 0 ? fail_errno(w, "cannot stat", errno) : 0;
	if (!r && S_ISDIR(st.st_mode))
		return visit_dir(w, pfd);
	if (!r && S_ISREG(st.st_mode))
		r = visit_file(w, pfd, &st);
	else if (!r && S_ISLNK(st.st_mode))
		r = visit_symlink(w, pfd, &st);
	close(pfd);
	return r;
}

static int skipped_type(unsigned char t)
{
	return t == DT_FIFO || t == DT_SOCK || t == DT_CHR || t == DT_BLK;
}

/* The current path gets one more component, name. */
static int push(struct walk *w, const char *name)
{
	size_t len = strlen(name), at = w->plen + (w->plen != 0);
	if (at + len > COPYIN_MAX_PATH)
		return fail(w, "cannot copy the entries of", "their paths are longer than " STR(COPYIN_MAX_PATH) " bytes "
			    "(the guest's paths are at most 4095, its mount point included)");
	if (w->plen)
		w->path[w->plen] = '/';
	memcpy(w->path + at, name, len + 1);
	w->plen = at + len;
	w->name = w->path + at;
	return 0;
}

static int walk_dir(struct walk *w, int fd)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return fail_errno(w, "cannot read", errno);
	}
	rewinddir(d); /* the dup shares the offset: the top may have been read before */
	size_t plen = w->plen;
	const char *name = w->name;
	int r = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			r = errno ? fail_errno(w, "cannot read", errno) : 0;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->names > COPYIN_MAX_ENTRIES) {
			r = errmsg(w->err, w->errlen, "the tree holds more than " STR(COPYIN_MAX_ENTRIES) " entries (the limit)");
			break;
		}
		if (!(w->names % 4096))
			progress_show(w->names, "names", 0);
		if (skipped_type(de->d_type))
			continue;
		r = push(w, de->d_name) || visit(w, fd, de->d_type);
		w->plen = plen, w->path[plen] = 0, w->name = name;
		if (r)
			break;
	}
	closedir(d);
	return r ? -1 : 0;
}

/* Walks the tree under dirfd with ops; the record, if kept, sorted by path. */
static int walk_tree(const struct walk_ops *ops, void *ctx, int dirfd, struct copyin_record *rec, char *err, size_t n)
{
	if (rec)
		*rec = (struct copyin_record){ NULL, 0 };
	struct walk *w = calloc(1, sizeof *w); /* PATH_BYTES: not on the stack */
	if (!w)
		return errmsg(err, n, "out of memory");
	*w = (struct walk){ .ops = ops, .ctx = ctx, .rec = rec, .err = err, .errlen = n };
	w->name = w->path;
	int r = enter(w, dirfd);
	if (!r && rec)
		qsort(rec->e, rec->n, sizeof *rec->e, by_path);
	if (r && rec)
		copyin_record_free(rec);
	free(w);
	return r;
}

/* ---- measuring ---------------------------------------------------------------- */

struct measure {
	uint64_t bytes, entries;
};

static int m_count(struct walk *w, const struct stat *st)
{
	struct measure *m = w->ctx;
	m->bytes += ((uint64_t)st->st_size + BS - 1) & ~(uint64_t)(BS - 1);
	m->entries++;
	return note(w, st, 0);
}

static int m_dir_out(struct walk *w)
{
	(void)w;
	return 0;
}

static int m_file(struct walk *w, int fd, const struct stat *st)
{
	(void)fd;
	return m_count(w, st);
}

static int m_symlink(struct walk *w, const struct stat *st, const char *target)
{
	(void)target;
	return m_count(w, st);
}

static const struct walk_ops measure_ops = { 0, m_count, m_dir_out, m_file, m_symlink };

int copyin_measure(int dirfd, uint64_t *bytes, uint64_t *entries, struct copyin_record *rec, char *err, size_t n)
{
	struct measure m = { 0, 0 };
	if (walk_tree(&measure_ops, &m, dirfd, rec, err, n))
		return -1;
	*bytes = m.bytes, *entries = m.entries;
	return 0;
}

/* ---- hard links: host (dev, ino) -> guest inode ---------------------------------- */

struct hlink {
	uint64_t dev, ino;
	ext2_ino_t gino; /* 0: a free slot */
};

struct hlinks {
	struct hlink *t;
	size_t cap, n; /* cap: a power of two */
};

static struct hlink *hl_slot(struct hlinks *h, uint64_t dev, uint64_t ino)
{
	size_t i = (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ dev) & (h->cap - 1);
	while (h->t[i].gino && (h->t[i].dev != dev || h->t[i].ino != ino))
		i = (i + 1) & (h->cap - 1);
	return &h->t[i];
}

static int hl_add(struct hlinks *h, uint64_t dev, uint64_t ino, ext2_ino_t gino)
{
	if (2 * (h->n + 1) > h->cap) {
		struct hlinks g = { calloc(h->cap ? 2 * h->cap : 64, sizeof *g.t), h->cap ? 2 * h->cap : 64, h->n };
		if (!g.t)
			return -1;
		for (size_t i = 0; i < h->cap; i++)
			if (h->t[i].gino)
				*hl_slot(&g, h->t[i].dev, h->t[i].ino) = h->t[i];
		free(h->t);
		*h = g;
	}
	*hl_slot(h, dev, ino) = (struct hlink){ dev, ino, gino };
	h->n++;
	return 0;
}

static ext2_ino_t hl_find(struct hlinks *h, uint64_t dev, uint64_t ino)
{
	return h->cap ? hl_slot(h, dev, ino)->gino : 0;
}

/* ---- building the image ---------------------------------------------------------- */

/* A directory of the image being written: its entries fill blk, which goes
 * to the image when full, so a directory costs one pass however big. */
struct gdir {
	ext2_ino_t ino;
	uint32_t links;      /* 2 + its subdirectories */
	blk64_t nblocks;     /* written so far */
	unsigned used, last; /* bytes of blk in use; where its last entry starts */
	struct ext2_inode_large inode;
	char blk[BS];
};

struct build {
	ext2_filsys fs;
	struct gdir dirs[COPYIN_MAX_DEPTH + 1]; /* [depth] */
	struct hlinks links;
	blk64_t goal;        /* where the next blocks go: the tree laid out in order */
	struct copyin_map *map; /* file data mapped here, not copied (NULL: copied) */
	char data[CHUNK];    /* file data */
	char bmap[2 * BS];   /* ext2fs_bmap2's scratch */
	uint32_t ind[BS / 4]; /* an indirect block being filled */
};

static int efail(struct walk *w, const char *what, errcode_t e)
{
	return fail(w, what, error_message(e));
}

static void set_time(__u32 *sec, __u32 *extra, struct timespec t)
{
	*sec = (__u32)t.tv_sec;
	/* the epoch bits: how many times 2^32 seconds sec lies beyond int32 */
	*extra = (__u32)((((int64_t)t.tv_sec - (int32_t)(uint32_t)t.tv_sec) >> 32) & 3) | (__u32)t.tv_nsec << 2;
}

/* Mode, owner and times from the host; i_generation stays 0: the guest
 * sets HUSK_EXT2_TOUCHED there in the inodes it writes. */
static void fill_inode(struct ext2_inode_large *in, const struct stat *st, int root)
{
	uint32_t uid = root ? 0 : st->st_uid, gid = root ? 0 : st->st_gid;
	in->i_mode = (__u16)st->st_mode;
	in->i_uid = (__u16)uid, ext2fs_set_i_uid_high(*in, uid >> 16);
	in->i_gid = (__u16)gid, ext2fs_set_i_gid_high(*in, gid >> 16);
	in->i_extra_isize = sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	set_time(&in->i_atime, &in->i_atime_extra, st->st_atim);
	set_time(&in->i_mtime, &in->i_mtime_extra, st->st_mtim);
	set_time(&in->i_ctime, &in->i_ctime_extra, st->st_ctim);
	in->i_generation = 0;
}

static errcode_t put_inode(struct build *b, ext2_ino_t ino, struct ext2_inode_large *in)
{
	return ext2fs_write_inode_full(b->fs, ino, (struct ext2_inode *)in, sizeof *in);
}

static errcode_t map_block(struct build *b, ext2_ino_t ino, struct ext2_inode_large *in, blk64_t lblk, blk64_t pblk)
{
	return ext2fs_bmap2(b->fs, ino, (struct ext2_inode *)in, b->bmap, BMAP_ALLOC | BMAP_SET, lblk, NULL, &pblk);
}

/* The indirect block holding the pointer of lblk (past the direct ones,
 * its chain made): i_block[IND], or down the chain from DIND or TIND. */
static errcode_t leaf_of(struct build *b, const struct ext2_inode_large *in, blk64_t lblk, blk64_t *leaf)
{
	const blk64_t per = BS / 4;
	blk64_t l = lblk - EXT2_NDIR_BLOCKS, at;
	int levels;
	if (l < per) {
		*leaf = in->i_block[EXT2_IND_BLOCK];
		return 0;
	}
	l -= per;
	if (l < per * per) {
		at = in->i_block[EXT2_DIND_BLOCK], levels = 1;
	} else {
		l -= per * per;
		at = in->i_block[EXT2_TIND_BLOCK], levels = 2;
	}
	for (; levels > 0; levels--) {
		errcode_t e = io_channel_read_blk64(b->fs->io, at, 1, b->ind);
		if (e)
			return e;
		blk64_t span = levels == 2 ? per * per : per;
		at = ext2fs_le32_to_cpu(b->ind[(l / span) % per]);
	}
	*leaf = at;
	return 0;
}

/* Blocks [pblk, pblk+n) become the inode's [lblk, lblk+n).  libext2fs'
 * bmap sets the first pointer of each indirect block (making the chain),
 * the rest of it is filled here at once: one read and one write per 1,024
 * blocks instead of a bmap each (which copies the indirect block twice). */
static errcode_t map_run(struct build *b, ext2_ino_t ino, struct ext2_inode_large *in, blk64_t lblk, blk64_t pblk,
			 blk64_t n)
{
	const blk64_t per = BS / 4;
	while (n) {
		errcode_t e = map_block(b, ino, in, lblk, pblk);
		blk64_t more = 0;
		if (!e && lblk >= EXT2_NDIR_BLOCKS) {
			more = per - 1 - (lblk - EXT2_NDIR_BLOCKS) % per; /* the rest of its indirect block */
			if (more > n - 1)
				more = n - 1;
		}
		blk64_t leaf = 0;
		if (!e && more && !(e = leaf_of(b, in, lblk, &leaf)) && !(e = io_channel_read_blk64(b->fs->io, leaf, 1, b->ind))) {
			for (blk64_t i = 1; i <= more; i++)
				b->ind[(lblk + i - EXT2_NDIR_BLOCKS) % per] = ext2fs_cpu_to_le32((uint32_t)(pblk + i));
			e = io_channel_write_blk64(b->fs->io, leaf, 1, b->ind);
		}
		if (e)
			return e;
		lblk += more + 1, pblk += more + 1, n -= more + 1;
	}
	return 0;
}

/* The piece of the current file (the map's last) at byte off is image
 * blocks [at, at+n). */
static errcode_t add_extent(struct copyin_map *m, blk64_t at, blk64_t n, uint64_t off)
{
	struct copyin_extent *last = m->nx ? &m->x[m->nx - 1] : NULL;
	uint32_t file = (uint32_t)(m->nf - 1);
	if (last && last->file == file && last->block + last->blocks == at && last->offset + last->blocks * BS == off &&
	    last->blocks + n <= UINT32_MAX) {
		last->blocks += (uint32_t)n;
		return 0;
	}
	if (m->nx == m->capx) {
		size_t cap = m->capx ? 2 * m->capx : 1024;
		struct copyin_extent *x = realloc(m->x, cap * sizeof *x);
		if (!x)
			return EXT2_ET_NO_MEMORY;
		m->x = x, m->capx = cap;
	}
	m->x[m->nx++] = (struct copyin_extent){ at, off, (uint32_t)n, file };
	return 0;
}

/* n blocks become the inode's blocks from lblk on, in as few runs of free
 * blocks as there are: written from buf, or (buf NULL) mapped to the
 * current file at lblk's offset. */
static errcode_t put_blocks(struct build *b, ext2_ino_t ino, struct ext2_inode_large *in, blk64_t lblk,
			    const char *buf, blk64_t n)
{
	while (n) {
		blk64_t at, got;
		errcode_t e = ext2fs_new_range(b->fs, 0, b->goal, n, NULL, &at, &got);
		if (e)
			return e;
		ext2fs_block_alloc_stats_range(b->fs, at, got, +1);
		e = buf ? io_channel_write_blk64(b->fs->io, at, (int)got, buf) : add_extent(b->map, at, got, lblk * BS);
		if (!e)
			e = map_run(b, ino, in, lblk, at, got);
		if (!e)
			e = ext2fs_iblk_add_blocks(b->fs, (struct ext2_inode *)in, got);
		if (e)
			return e;
		b->goal = at + got;
		if (buf)
			buf += got * BS;
		lblk += got, n -= got;
	}
	return 0;
}

/* The extent of data at or after *start, from SEEK_DATA/SEEK_HOLE (holes
 * stay holes), in whole blocks within size; *start = size if none. */
static void data_range(int fd, uint64_t size, uint64_t *start, uint64_t *end)
{
	*end = size;
	off_t d = lseek(fd, (off_t)*start, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO)
			*start = size;
		return; /* else: no SEEK_DATA here, all of it is data */
	}
	off_t h = lseek(fd, d, SEEK_HOLE);
	*start = (uint64_t)d & ~(uint64_t)(BS - 1);
	if (h >= 0 && ((uint64_t)h + BS - 1) / BS * BS < size)
		*end = ((uint64_t)h + BS - 1) / BS * BS;
}

static ssize_t read_at(int fd, char *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t k = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break; /* shrunk meanwhile: the rest reads as zeros */
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static int copy_data(struct walk *w, struct build *b, int fd, ext2_ino_t ino, struct ext2_inode_large *in,
		     const struct stat *st)
{
	uint64_t size = (uint64_t)st->st_size;
	int sparse = (uint64_t)st->st_blocks * 512 < size; /* else no hole to look for */
	for (uint64_t off = 0; off < size;) {
		uint64_t start = off, end = size;
		if (sparse)
			data_range(fd, size, &start, &end);
		if (start >= size)
			break;
		if (b->map) { /* the range's blocks, mapped to the file: nothing read */
			errcode_t e = put_blocks(b, ino, in, start / BS, NULL, (end - start + BS - 1) / BS);
			if (e)
				return efail(w, "cannot map", e);
			off = end;
			continue;
		}
		size_t len = end - start < CHUNK ? (size_t)(end - start) : CHUNK;
		ssize_t k = read_at(fd, b->data, len, start);
		if (k < 0)
			return fail_errno(w, "cannot read", errno);
		size_t blocks = (len + BS - 1) / BS;
		memset(b->data + k, 0, blocks * BS - (size_t)k);
		errcode_t e = put_blocks(b, ino, in, start / BS, b->data, blocks);
		if (e)
			return efail(w, "cannot copy", e);
		off = start + len;
	}
	return 0;
}

/* The block so far goes to the image, its last entry stretched to the end. */
static errcode_t dir_flush(struct build *b, struct gdir *d)
{
	errcode_t e = ext2fs_set_rec_len(b->fs, BS - d->last, (struct ext2_dir_entry *)(d->blk + d->last));
	blk64_t at;
	if (!e)
		e = ext2fs_new_block2(b->fs, b->goal, NULL, &at);
	if (e)
		return e;
	ext2fs_block_alloc_stats2(b->fs, at, +1);
	e = ext2fs_write_dir_block4(b->fs, at, d->blk, 0, d->ino);
	if (!e)
		e = map_block(b, d->ino, &d->inode, d->nblocks, at);
	if (!e)
		e = ext2fs_iblk_add_blocks(b->fs, (struct ext2_inode *)&d->inode, 1);
	d->nblocks++, d->used = 0, b->goal = at + 1;
	memset(d->blk, 0, sizeof d->blk);
	return e;
}

static errcode_t dir_add(struct build *b, struct gdir *d, const char *name, ext2_ino_t ino, int ftype)
{
	size_t len = strlen(name);
	unsigned need = (unsigned)(8 + len + 3) & ~3u;
	errcode_t e = d->used + need > BS ? dir_flush(b, d) : 0;
	if (e)
		return e;
	struct ext2_dir_entry *de = (struct ext2_dir_entry *)(d->blk + d->used);
	de->inode = ino;
	ext2fs_dirent_set_name_len(de, (int)len);
	ext2fs_dirent_set_file_type(de, ftype);
	memcpy(de->name, name, len);
	d->last = d->used;
	d->used += need;
	return ext2fs_set_rec_len(b->fs, need, de);
}

/* The directory the current entry is in (for a directory being entered:
 * the one above it). */
static struct gdir *parent(struct walk *w, int entering)
{
	return &((struct build *)w->ctx)->dirs[w->depth - entering];
}

static int file_type(mode_t mode)
{
	return S_ISDIR(mode) ? EXT2_FT_DIR : S_ISLNK(mode) ? EXT2_FT_SYMLINK : EXT2_FT_REG_FILE;
}

/* A name for the current entry in directory d, and its record entry. */
static int link_name(struct walk *w, struct gdir *d, const struct stat *st, ext2_ino_t ino)
{
	errcode_t e = dir_add(w->ctx, d, w->name, ino, file_type(st->st_mode));
	return e ? efail(w, "cannot copy", e) : note(w, st, ino);
}

/* Another name of a file already copied: one more link to its inode. */
static int link_again(struct walk *w, const struct stat *st, ext2_ino_t ino)
{
	struct build *b = w->ctx;
	struct ext2_inode_large in;
	errcode_t e = ext2fs_read_inode_full(b->fs, ino, (struct ext2_inode *)&in, sizeof in);
	if (e)
		return efail(w, "cannot copy", e);
	if (in.i_links_count >= LINKS_MAX)
		return fail(w, "cannot copy", "more than " STR(LINKS_MAX) " links");
	in.i_links_count++;
	e = put_inode(b, ino, &in);
	return e ? efail(w, "cannot copy", e) : link_name(w, parent(w, 0), st, ino);
}

/* The inode a host file with more than one name already has, or 0. */
static ext2_ino_t linked(struct build *b, const struct stat *st)
{
	return st->st_nlink > 1 ? hl_find(&b->links, st->st_dev, st->st_ino) : 0;
}

static int remember_links(struct walk *w, const struct stat *st, ext2_ino_t ino)
{
	struct build *b = w->ctx;
	if (st->st_nlink > 1 && hl_add(&b->links, st->st_dev, st->st_ino, ino))
		return fail(w, "cannot copy", "out of memory");
	return 0;
}

/* A free inode near directory d; marked used unless `later` (ext2fs_symlink
 * marks its own). */
static int new_inode(struct walk *w, struct gdir *d, const struct stat *st, int later, ext2_ino_t *ino)
{
	struct build *b = w->ctx;
	errcode_t e = ext2fs_new_inode(b->fs, d->ino, (int)st->st_mode, NULL, ino);
	if (e)
		return efail(w, "cannot copy", e);
	if (!later)
		ext2fs_inode_alloc_stats2(b->fs, *ino, +1, S_ISDIR(st->st_mode));
	return 0;
}

static int b_dir_in(struct walk *w, const struct stat *st)
{
	struct build *b = w->ctx;
	struct gdir *d = &b->dirs[w->depth], *up = w->depth ? parent(w, 1) : d;
	if (w->depth && up->links >= LINKS_MAX)
		return fail(w, "cannot copy", "more than " STR(LINKS_MAX) " subdirectories in one directory");
	memset(d, 0, sizeof *d);
	d->ino = EXT2_ROOT_INO;
	if (w->depth == 0)
		ext2fs_inode_alloc_stats2(b->fs, d->ino, +1, 1);
	if (w->depth ? new_inode(w, up, st, 0, &d->ino) || link_name(w, up, st, d->ino) : note(w, st, d->ino))
		return -1;
	if (w->depth)
		up->links++;
	d->links = 2;
	fill_inode(&d->inode, st, w->depth == 0);
	errcode_t e = dir_add(b, d, ".", d->ino, EXT2_FT_DIR);
	if (!e)
		e = dir_add(b, d, "..", up->ino, EXT2_FT_DIR);
	return e ? efail(w, "cannot copy", e) : 0;
}

static int b_dir_out(struct walk *w)
{
	struct build *b = w->ctx;
	struct gdir *d = &b->dirs[w->depth];
	errcode_t e = d->used ? dir_flush(b, d) : 0;
	d->inode.i_links_count = (__u16)d->links;
	if (!e)
		e = ext2fs_inode_size_set(b->fs, (struct ext2_inode *)&d->inode, d->nblocks * BS);
	if (!e)
		e = put_inode(b, d->ino, &d->inode);
	return e ? efail(w, "cannot copy", e) : 0;
}

/* The current file becomes the map's last (its extents follow). */
static int map_file(struct walk *w, struct copyin_map *m, const struct stat *st)
{
	if (m->nf == m->capf) {
		size_t cap = m->capf ? 2 * m->capf : 1024;
		struct copyin_file *f = realloc(m->f, cap * sizeof *f);
		if (!f)
			return fail(w, "cannot map", "out of memory");
		m->f = f, m->capf = cap;
	}
	char *path = strdup(w->path);
	if (!path)
		return fail(w, "cannot map", "out of memory");
	m->f[m->nf++] = (struct copyin_file){ path, st->st_dev, st->st_ino, (uint64_t)st->st_size };
	return 0;
}

static int write_file(struct walk *w, const struct stat *st, ext2_ino_t ino, int fd)
{
	struct build *b = w->ctx;
	struct ext2_inode_large in;
	memset(&in, 0, sizeof in);
	fill_inode(&in, st, 0);
	in.i_links_count = 1;
	if (b->map && st->st_size && map_file(w, b->map, st))
		return -1;
	if (copy_data(w, b, fd, ino, &in, st))
		return -1;
	errcode_t e = ext2fs_inode_size_set(b->fs, (struct ext2_inode *)&in, (uint64_t)st->st_size);
	if (!e)
		e = put_inode(b, ino, &in);
	return e ? efail(w, "cannot copy", e) : 0;
}

/* ext2fs_symlink makes a fast symlink (in the inode) when it is short, and
 * counts the inode as used itself. */
static int write_symlink(struct walk *w, const struct stat *st, ext2_ino_t ino, const char *target)
{
	struct build *b = w->ctx;
	struct ext2_inode_large in;
	errcode_t e = ext2fs_symlink(b->fs, parent(w, 0)->ino, ino, NULL, target);
	if (!e)
		e = ext2fs_read_inode_full(b->fs, ino, (struct ext2_inode *)&in, sizeof in);
	if (!e) {
		fill_inode(&in, st, 0);
		e = put_inode(b, ino, &in);
	}
	return e ? efail(w, "cannot copy", e) : 0;
}

/* A file (data in fd) or a symlink (target): another name of one already
 * copied, or a new inode; then its name. */
static int b_leaf(struct walk *w, const struct stat *st, int fd, const char *target)
{
	ext2_ino_t ino = linked(w->ctx, st);
	if (ino)
		return link_again(w, st, ino);
	if (new_inode(w, parent(w, 0), st, target != NULL, &ino))
		return -1;
	int r = target ? write_symlink(w, st, ino, target) : write_file(w, st, ino, fd);
	return r || link_name(w, parent(w, 0), st, ino) || remember_links(w, st, ino) ? -1 : 0;
}

static int b_file(struct walk *w, int fd, const struct stat *st)
{
	return b_leaf(w, st, fd, NULL);
}

static int b_symlink(struct walk *w, const struct stat *st, const char *target)
{
	return b_leaf(w, st, -1, target);
}

static const struct walk_ops build_ops = { 1, b_dir_in, b_dir_out, b_file, b_symlink };
static const struct walk_ops map_ops = { SPARSE_ONLY, b_dir_in, b_dir_out, b_file, b_symlink };

/* An empty ext2 file system in image_fd, as `mke2fs -t ext2 -b 4096 -I 256
 * -m 0 -O ^resize_inode,^dir_index,^ext_attr` makes it, without
 * lost+found.  libext2fs does not keep a directory index up to date for
 * the names added here, so dir_index is left out; nothing needs the rest. */
static int make_fs(int image_fd, uint64_t bytes, uint64_t inodes, ext2_filsys *fs, char *err, size_t n)
{
	if (bytes / BS > 0xffffffffu || inodes > 0xffffffffu)
		return errmsg(err, n, "an image of %llu bytes and %llu inodes is too big for ext2",
			      (unsigned long long)bytes, (unsigned long long)inodes);
	if (ftruncate(image_fd, 0) < 0 || ftruncate(image_fd, (off_t)bytes) < 0)
		return errmsg(err, n, "cannot size the image: %s", strerror(errno));
	int fd = fcntl(image_fd, F_DUPFD_CLOEXEC, 0); /* the io channel closes its fd */
	if (fd < 0)
		return errmsg(err, n, "cannot make the image: %s", strerror(errno));
	char name[16];
	snprintf(name, sizeof name, "%d", fd);
	struct ext2_super_block p;
	memset(&p, 0, sizeof p);
	ext2fs_blocks_count_set(&p, bytes / BS);
	p.s_log_block_size = 2; /* 1024 << 2 */
	p.s_inodes_count = (__u32)inodes;
	p.s_rev_level = EXT2_DYNAMIC_REV;
	p.s_inode_size = 256;
	p.s_feature_incompat = EXT2_FEATURE_INCOMPAT_FILETYPE;
	p.s_feature_ro_compat = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE;
	errcode_t e = ext2fs_initialize(name, EXT2_FLAG_RW | EXT2_FLAG_64BITS, &p, unixfd_io_manager, fs);
	if (e)
		return errmsg(err, n, "cannot make the image: %s", error_message(e));
	if (getrandom((*fs)->super->s_uuid, sizeof (*fs)->super->s_uuid, 0) < 0)
		memset((*fs)->super->s_uuid, 0x48, sizeof (*fs)->super->s_uuid);
	e = ext2fs_allocate_tables(*fs);
	if (e) {
		ext2fs_free(*fs);
		return errmsg(err, n, "cannot make the image: %s", error_message(e));
	}
	/* The inode tables read as zeros already (a fresh sparse file). */
	for (ext2_ino_t i = 1; i < EXT2_FIRST_INODE((*fs)->super); i++)
		if (i != EXT2_ROOT_INO)
			ext2fs_inode_alloc_stats2(*fs, i, +1, 0);
	return 0;
}

static int by_block(const void *a, const void *b)
{
	uint64_t x = ((const struct copyin_extent *)a)->block, y = ((const struct copyin_extent *)b)->block;
	return x < y ? -1 : x > y;
}

static int build(int dirfd, int image_fd, uint64_t bytes, uint64_t inodes, struct copyin_record *rec,
		 struct copyin_map *map, char *err, size_t n)
{
	if (rec)
		*rec = (struct copyin_record){ NULL, 0 };
	static int tables;
	if (!tables++)
		initialize_ext2_error_table(); /* error_message() names libext2fs's codes */
	struct build *b = calloc(1, sizeof *b);
	if (!b)
		return errmsg(err, n, "cannot make the image: out of memory");
	b->map = map;
	int r = make_fs(image_fd, bytes, inodes, &b->fs, err, n);
	if (!r && walk_tree(map ? &map_ops : &build_ops, b, dirfd, rec, err, n)) {
		ext2fs_free(b->fs);
		r = -1;
	} else if (!r) {
		errcode_t e = ext2fs_close_free(&b->fs);
		if (e && rec)
			copyin_record_free(rec);
		if (e)
			r = errmsg(err, n, "cannot write the image: %s", error_message(e));
	}
	free(b->links.t);
	free(b);
	return r;
}

int copyin_build(int dirfd, int image_fd, uint64_t bytes, uint64_t inodes, struct copyin_record *rec, char *err,
		 size_t n)
{
	return build(dirfd, image_fd, bytes, inodes, rec, NULL, err, n);
}

int copyin_build_mapped(int dirfd, int image_fd, uint64_t bytes, uint64_t inodes, struct copyin_record *rec,
			struct copyin_map *map, char *err, size_t n)
{
	*map = (struct copyin_map){ 0 };
	if (build(dirfd, image_fd, bytes, inodes, rec, map, err, n)) {
		copyin_map_free(map);
		return -1;
	}
	qsort(map->x, map->nx, sizeof *map->x, by_block); /* in order unless the allocator wrapped around */
	return 0;
}

void copyin_map_free(struct copyin_map *map)
{
	for (size_t i = 0; i < map->nf; i++)
		free(map->f[i].path);
	free(map->f);
	free(map->x);
	*map = (struct copyin_map){ 0 };
}
