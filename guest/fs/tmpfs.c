/* SPDX-License-Identifier: GPL-2.0-only */
/* /tmp: a file system in guest RAM.  Its pages come from the same arena as
 * the program's memory, so /tmp counts against the guest memory size. */
#include <errno.h>
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"
#include "fs/vfs.h"

#define MAX_FILE (1ull << 40)

struct dent {
	char *name;
	uint16_t len;
	uint32_t ino;
};

struct tnode {
	uint32_t mode, nlink;
	int64_t atime, mtime, ctime;
	uint64_t size;
	uint8_t **pages;      /* files and symlinks: one 4 KiB page each, NULL = hole */
	size_t npages;
	struct dent *ents;    /* directories */
	size_t nents, cap;
	uint32_t parent;
	uint32_t ino;         /* its slot and a serial */
};

struct tmpfs {
	struct tnode **nodes; /* by slot (the inode number's low bits); 1 is the root */
	uint32_t n;
	uint32_t serial;
};

/* An inode number is a slot and a serial, so that a number comes back only
 * after thousands of files: musl's sem_open knows a semaphore it has mapped
 * by its inode number, as a file system that never reuses one lets it. */
#define SLOT_BITS 20
#define SLOT(ino) ((ino) & ((1u << SLOT_BITS) - 1))

static struct tnode *get(struct tmpfs *t, uint32_t ino)
{
	struct tnode *x = ino && SLOT(ino) < t->n ? t->nodes[SLOT(ino)] : 0;
	return x && x->ino == ino ? x : 0;
}

static uint32_t new_node(struct tmpfs *t, uint32_t mode)
{
	uint32_t slot = 1;
	while (slot < t->n && t->nodes[slot])
		slot++;
	if (slot >> SLOT_BITS)
		return 0;
	if (slot >= t->n) {
		uint32_t n = t->n ? 2 * t->n : 64;
		struct tnode **nodes = kalloc(n * sizeof *nodes);
		if (!nodes)
			return 0;
		if (t->nodes) {
			memcpy(nodes, t->nodes, t->n * sizeof *nodes);
			kfree(t->nodes, t->n * sizeof *nodes);
		}
		t->nodes = nodes, t->n = n;
	}
	struct tnode *x = kalloc(sizeof *x);
	if (!x)
		return 0;
	x->mode = mode, x->nlink = 1;
	x->atime = x->mtime = x->ctime = clock_wall_s();
	x->ino = slot | (t->serial++ & ((1u << (32 - SLOT_BITS)) - 1)) << SLOT_BITS; /* the root: 1 */
	t->nodes[slot] = x;
	return x->ino;
}

static void drop_data(struct tnode *x, uint64_t from_page)
{
	for (size_t i = from_page; i < x->npages; i++)
		if (x->pages[i]) {
			kfree(x->pages[i], PAGE_SIZE);
			x->pages[i] = 0;
		}
}

static void free_node(struct tmpfs *t, uint32_t ino)
{
	struct tnode *x = get(t, ino);
	drop_data(x, 0);
	if (x->pages)
		kfree(x->pages, x->npages * sizeof *x->pages);
	if (x->ents)
		kfree(x->ents, x->cap * sizeof *x->ents);
	kfree(x, sizeof *x);
	t->nodes[SLOT(ino)] = 0;
}

void *tmpfs_new(void)
{
	struct tmpfs *t = kalloc(sizeof *t);
	if (!t)
		return 0;
	if (new_node(t, S_IFDIR | 01777) != 1) /* inode 0 is never used; the root is 1 */
		return 0;
	get(t, 1)->nlink = 2, get(t, 1)->parent = 1;
	return t;
}

/* Data pages a file holds (holes are none). */
static size_t pages_held(const struct tnode *x)
{
	size_t n = 0;
	for (size_t i = 0; i < x->npages; i++)
		n += x->pages[i] != 0;
	return n;
}

/* The file data held: what the tmpfs costs in guest memory, besides its
 * small bookkeeping. */
uint64_t tmpfs_used_bytes(void *fs)
{
	struct tmpfs *t = fs;
	uint64_t pages = 0;
	for (uint32_t slot = 1; slot < t->n; slot++)
		if (t->nodes[slot])
			pages += pages_held(t->nodes[slot]);
	return pages * PAGE_SIZE;
}

static struct dent *find(struct tnode *d, const char *name, size_t len)
{
	for (size_t i = 0; i < d->nents; i++)
		if (d->ents[i].len == len && !memcmp(d->ents[i].name, name, len))
			return &d->ents[i];
	return 0;
}

static int t_lookup(void *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	struct tnode *d = get(fs, dir);
	if (!d || (d->mode & S_IFMT) != S_IFDIR)
		return -ENOTDIR;
	if (len == 1 && name[0] == '.')
		return *ino = dir, 0;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return *ino = d->parent, 0;
	struct dent *e = find(d, name, len);
	if (!e)
		return -ENOENT;
	*ino = e->ino;
	return 0;
}

static int t_stat(void *fs, uint32_t ino, struct fs_stat *st)
{
	struct tnode *x = get(fs, ino);
	if (!x)
		return -ENOENT;
	*st = (struct fs_stat){ ino, x->mode, x->nlink, 0, 0, x->size, pages_held(x) * 8, x->atime, x->mtime, x->ctime };
	return 0;
}

static long t_read(void *fs, uint32_t ino, uint64_t off, void *buf, size_t len)
{
	struct tnode *x = get(fs, ino);
	if (!x)
		return -ENOENT;
	if ((x->mode & S_IFMT) == S_IFDIR)
		return -EISDIR;
	if (off >= x->size)
		return 0;
	if (len > x->size - off)
		len = x->size - off;
	for (size_t done = 0; done < len;) {
		uint64_t p = (off + done) / PAGE_SIZE, in = (off + done) % PAGE_SIZE;
		size_t k = PAGE_SIZE - in < len - done ? PAGE_SIZE - in : len - done;
		if (p < x->npages && x->pages[p])
			memcpy((char *)buf + done, x->pages[p] + in, k);
		else
			memset((char *)buf + done, 0, k);
		done += k;
	}
	x->atime = clock_wall_s();
	return len;
}

static int grow_pages(struct tnode *x, size_t n)
{
	if (n <= x->npages)
		return 0;
	size_t cap = x->npages ? x->npages : 16;
	while (cap < n)
		cap *= 2;
	uint8_t **p = kalloc(cap * sizeof *p);
	if (!p)
		return -ENOSPC;
	if (x->pages) {
		memcpy(p, x->pages, x->npages * sizeof *p);
		kfree(x->pages, x->npages * sizeof *p);
	}
	x->pages = p, x->npages = cap;
	return 0;
}

static long t_write(void *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	struct tnode *x = get(fs, ino);
	if (!x)
		return -ENOENT;
	if ((x->mode & S_IFMT) == S_IFDIR)
		return -EISDIR;
	if (off >= MAX_FILE || len > MAX_FILE - off)
		return -EFBIG;
	if (grow_pages(x, (off + len + PAGE_SIZE - 1) / PAGE_SIZE))
		return -ENOSPC;
	size_t done = 0;
	while (done < len) {
		uint64_t p = (off + done) / PAGE_SIZE, in = (off + done) % PAGE_SIZE;
		size_t k = PAGE_SIZE - in < len - done ? PAGE_SIZE - in : len - done;
		if (!x->pages[p] && !(x->pages[p] = kalloc(PAGE_SIZE)))
			break; /* guest memory is full */
		memcpy(x->pages[p] + in, (const char *)buf + done, k);
		done += k;
	}
	if (off + done > x->size)
		x->size = off + done;
	x->mtime = x->ctime = clock_wall_s();
	return done ? (long)done : -ENOSPC;
}

static int t_truncate(void *fs, uint32_t ino, uint64_t size)
{
	struct tnode *x = get(fs, ino);
	if (!x)
		return -ENOENT;
	if (size > MAX_FILE)
		return -EFBIG;
	if (size < x->size) {
		uint64_t keep = (size + PAGE_SIZE - 1) / PAGE_SIZE;
		drop_data(x, keep);
		if (size % PAGE_SIZE && keep - 1 < x->npages && x->pages[keep - 1])
			memset(x->pages[keep - 1] + size % PAGE_SIZE, 0, PAGE_SIZE - size % PAGE_SIZE);
	}
	x->size = size;
	x->mtime = x->ctime = clock_wall_s();
	return 0;
}

static int add_entry(struct tnode *d, const char *name, size_t len, uint32_t ino)
{
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	if (d->nents == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 8;
		struct dent *e = kalloc(cap * sizeof *e);
		if (!e)
			return -ENOSPC;
		if (d->ents) {
			memcpy(e, d->ents, d->nents * sizeof *e);
			kfree(d->ents, d->cap * sizeof *e);
		}
		d->ents = e, d->cap = cap;
	}
	char *copy = kalloc(len + 1);
	if (!copy)
		return -ENOSPC;
	memcpy(copy, name, len);
	d->ents[d->nents++] = (struct dent){ copy, (uint16_t)len, ino };
	d->mtime = d->ctime = clock_wall_s();
	return 0;
}

static void remove_entry(struct tnode *d, struct dent *e)
{
	kfree(e->name, e->len + 1);
	*e = d->ents[--d->nents];
	d->mtime = d->ctime = clock_wall_s();
}

static int t_create(void *fs, uint32_t dir, const char *name, size_t len, uint32_t mode, uint32_t *ino)
{
	struct tmpfs *t = fs;
	struct tnode *d = get(t, dir);
	if (!d || (d->mode & S_IFMT) != S_IFDIR)
		return -ENOTDIR;
	if (find(d, name, len))
		return -EEXIST;
	if (!(mode & S_IFMT))
		mode |= S_IFREG;
	uint32_t n = new_node(t, mode);
	if (!n)
		return -ENOSPC;
	int r = add_entry(d, name, len, n);
	if (r) {
		free_node(t, n);
		return r;
	}
	if ((mode & S_IFMT) == S_IFDIR) {
		get(t, n)->nlink = 2, get(t, n)->parent = dir;
		d->nlink++;
	}
	*ino = n;
	return 0;
}

static int t_symlink(void *fs, uint32_t dir, const char *name, size_t len, const char *target, size_t tlen,
		     uint32_t *ino)
{
	if (tlen >= PAGE_SIZE)
		return -ENAMETOOLONG;
	int r = t_create(fs, dir, name, len, S_IFLNK | 0777, ino);
	if (!r && t_write(fs, *ino, 0, target, tlen) != (long)tlen)
		r = -ENOSPC;
	return r;
}

static long t_readlink(void *fs, uint32_t ino, char *buf, size_t len)
{
	struct tnode *x = get(fs, ino);
	if (!x || (x->mode & S_IFMT) != S_IFLNK)
		return -EINVAL;
	return t_read(fs, ino, 0, buf, len);
}

static int t_link(void *fs, uint32_t dir, const char *name, size_t len, uint32_t ino)
{
	struct tnode *d = get(fs, dir), *x = get(fs, ino);
	if (!d || !x)
		return -ENOENT;
	if ((x->mode & S_IFMT) == S_IFDIR)
		return -EPERM;
	if (find(d, name, len))
		return -EEXIST;
	int r = add_entry(d, name, len, ino);
	if (!r)
		x->nlink++;
	return r;
}

static void unref(struct tmpfs *t, uint32_t ino)
{
	struct tnode *x = get(t, ino);
	if ((x->mode & S_IFMT) == S_IFDIR || --x->nlink == 0)
		free_node(t, ino);
}

static int t_remove(void *fs, uint32_t dir, const char *name, size_t len, int want_dir)
{
	struct tmpfs *t = fs;
	struct tnode *d = get(t, dir);
	struct dent *e = d ? find(d, name, len) : 0;
	if (!e)
		return -ENOENT;
	struct tnode *x = get(t, e->ino);
	int is_dir = (x->mode & S_IFMT) == S_IFDIR;
	if (want_dir != is_dir)
		return is_dir ? -EISDIR : -ENOTDIR;
	if (is_dir && x->nents)
		return -ENOTEMPTY;
	uint32_t ino = e->ino;
	remove_entry(d, e);
	if (is_dir)
		d->nlink--;
	unref(t, ino);
	return 0;
}

static int t_unlink(void *fs, uint32_t dir, const char *name, size_t len)
{
	return t_remove(fs, dir, name, len, 0);
}

static int t_rmdir(void *fs, uint32_t dir, const char *name, size_t len)
{
	return t_remove(fs, dir, name, len, 1);
}

/* Is `a` the directory `b` or one of its ancestors? */
static int ancestor(struct tmpfs *t, uint32_t a, uint32_t b)
{
	for (;;) {
		if (a == b)
			return 1;
		if (b == 1)
			return 0;
		b = get(t, b)->parent;
	}
}

static int t_rename(void *fs, uint32_t odir, const char *on, size_t ol, uint32_t ndir, const char *nn, size_t nl)
{
	struct tmpfs *t = fs;
	struct tnode *od = get(t, odir), *nd = get(t, ndir);
	struct dent *e = od ? find(od, on, ol) : 0;
	if (!e || !nd)
		return -ENOENT;
	uint32_t ino = e->ino;
	struct tnode *x = get(t, ino);
	int is_dir = (x->mode & S_IFMT) == S_IFDIR;
	if (is_dir && ancestor(t, ino, ndir))
		return -EINVAL;
	struct dent *old = find(nd, nn, nl);
	if (old) {
		if (old->ino == ino)
			return 0;
		struct tnode *y = get(t, old->ino);
		int y_dir = (y->mode & S_IFMT) == S_IFDIR;
		if (is_dir != y_dir)
			return is_dir ? -ENOTDIR : -EISDIR;
		if (y_dir && y->nents)
			return -ENOTEMPTY;
		int r = t_remove(fs, ndir, nn, nl, y_dir);
		if (r)
			return r;
	}
	int r = add_entry(nd, nn, nl, ino);
	if (r)
		return r;
	remove_entry(od, find(od, on, ol));
	if (is_dir && odir != ndir) {
		od->nlink--, nd->nlink++;
		x->parent = ndir;
	}
	x->ctime = clock_wall_s();
	return 0;
}

static int t_readdir(void *fs, uint32_t dir, uint64_t *pos, struct fs_dirent *out)
{
	struct tnode *d = get(fs, dir);
	if (!d || (d->mode & S_IFMT) != S_IFDIR)
		return -ENOTDIR;
	if (*pos < 2) {
		out->ino = *pos ? d->parent : dir, out->type = DT_DIR, out->name_len = (uint16_t)(*pos + 1);
		memcpy(out->name, "..", out->name_len);
		out->name[out->name_len] = 0;
		(*pos)++;
		return 1;
	}
	if (*pos - 2 >= d->nents)
		return 0;
	struct dent *e = &d->ents[*pos - 2];
	struct tnode *x = get(fs, e->ino);
	uint32_t type = x->mode & S_IFMT;
	out->ino = e->ino, out->name_len = e->len;
	out->type = (uint8_t)(type >> 12); /* DT_* is the mode's type */
	memcpy(out->name, e->name, e->len);
	out->name[e->len] = 0;
	(*pos)++;
	return 1;
}

static int t_set_times(void *fs, uint32_t ino, int64_t a, int64_t m)
{
	struct tnode *x = get(fs, ino);
	if (!x)
		return -ENOENT;
	if (a >= 0)
		x->atime = a;
	if (m >= 0)
		x->mtime = m;
	x->ctime = clock_wall_s();
	return 0;
}

static int t_chmod(void *fs, uint32_t ino, uint32_t mode)
{
	struct tnode *x = get(fs, ino);
	if (!x)
		return -ENOENT;
	x->mode = (x->mode & S_IFMT) | (mode & 07777);
	return 0;
}

static int t_sync(void *fs)
{
	(void)fs;
	return 0;
}

static uint64_t t_free_bytes(void *fs)
{
	(void)fs;
	return mem_free_bytes();
}

/* A page stays the file's; a mapping takes a share of it (pmem_share), so
 * a truncate or unlink leaves it to the mappings until they go. */
static void *t_page(void *fs, uint32_t ino, uint64_t index)
{
	struct tnode *x = get(fs, ino);
	if (!x || (x->mode & S_IFMT) != S_IFREG || index >= MAX_FILE / PAGE_SIZE || grow_pages(x, index + 1))
		return 0;
	if (!x->pages[index])
		x->pages[index] = kalloc(PAGE_SIZE);
	return x->pages[index];
}

const struct fs_ops tmpfs_ops = {
	t_lookup, t_stat, t_read, t_write, t_truncate, t_create, t_symlink, t_readlink, t_link, t_unlink,
	t_rmdir, t_rename, t_readdir, t_set_times, t_chmod, t_sync, t_free_bytes, t_page, 1,
};
