/* SPDX-License-Identifier: GPL-2.0-only */
/* Mount table and path lookup. */
#include <errno.h>
#include <string.h>
#include "fs/blockdev.h"
#include "kernel.h"
#include "linux_abi.h"
#include "fs/vfs.h"

#define MAX_LINKS 40

static struct mount mounts[MAX_DISKS + 5]; /* the disks, /tmp, /dev/shm, /etc, a scratch /workdir, /proc */
static int nmounts;
static const char *const dev_names[DEV_COUNT] = { "null", "zero", "urandom" };

static struct mount *scratch; /* /workdir in RAM, when there is no workdir disk */

static struct mount *root; /* an image's root file system (a Debian image), or none: "/" is synthetic */

/* The root mount's path is "/" with length 0: a prefix of every path. */
static struct mount *add_mount(const char *path, const struct fs_ops *ops, int read_only, uintptr_t mmio)
{
	struct mount *m = &mounts[nmounts];
	size_t len = strcmp(path, "/") ? strlen(path) : 0;
	*m = (struct mount){ path, len, ops, 0, read_only, mmio, 0, nmounts + 1, 0 };
	nmounts++;
	return m;
}

/* A disk's mount, its path copied: the device tree it comes from is
 * replaced at the snapshot point.  A workdir disk takes the place of a
 * scratch /workdir not used yet (a run restored from a snapshot). */
static void add_disk(const struct disk_info *d)
{
	size_t n = strlen(d->mount) + 1;
	char *path = kalloc(n);
	if (!path)
		panic("no memory for the mount table");
	memcpy(path, d->mount, n);
	if (scratch && !strcmp(path, "/workdir")) {
		if (scratch->fs)
			panic("the scratch /workdir was used before the snapshot point");
		int index = scratch->index;
		*scratch = (struct mount){ path, strlen(path), &ext2_fs_ops, 0, d->read_only, d->mmio, 0, index, 0 };
		scratch = 0;
		return;
	}
	struct mount *m = add_mount(path, &ext2_fs_ops, d->read_only, d->mmio);
	if (!m->len)
		root = m;
}

void vfs_add_disks(int from)
{
	for (int i = from; i < boot.ndisks; i++)
		add_disk(&boot.disk[i]);
}

int vfs_scratch_used(void)
{
	return scratch && scratch->fs;
}

void vfs_init(void)
{
	int workdir_disk = 0;
	for (int i = 0; i < boot.ndisks; i++) {
		add_disk(&boot.disk[i]);
		workdir_disk |= !strcmp(boot.disk[i].mount, "/workdir");
	}
	add_mount("/tmp", &tmpfs_ops, 0, 0);
	add_mount("/dev/shm", &tmpfs_ops, 0, 0); /* POSIX shared memory and semaphores (sem_open) */
	if (!root) /* an image's root has its own /etc, made for a run (vmm/debian/root_fs.c) */
		add_mount("/etc", &tmpfs_ops, 1, 0)->populate = etc_populate;
	if (!workdir_disk) {
		scratch = add_mount("/workdir", &tmpfs_ops, 0, 0);
		scratch->populate = scratch_populate;
	}
	procfs_init(add_mount("/proc", &procfs_ops, 1, 0));
}

const struct mount *vfs_mount_at(int i)
{
	return i >= 0 && i < nmounts ? &mounts[i] : 0;
}

const struct fs_type *vfs_fs_type(const struct mount *m)
{
	static const struct fs_type ext2 = { "ext2", EXT2_SUPER_MAGIC }, tmpfs = { "tmpfs", TMPFS_MAGIC },
				    proc = { "proc", PROC_SUPER_MAGIC };
	return m->ops == &tmpfs_ops ? &tmpfs : m->ops == &procfs_ops ? &proc : &ext2;
}

int vfs_mount_fs(struct mount *m)
{
	if (m->fs || m->error)
		return m->error;
	if (m->ops == &tmpfs_ops) {
		m->fs = tmpfs_new();
		if (!m->fs)
			return m->error = -ENOMEM;
		return m->populate ? (m->error = m->populate(m)) : 0;
	}
	struct blockdev *bd = blk_open(m->mmio, m->read_only);
	if (!bd)
		return m->error = -EIO;
	int r = ext2_mount_dev(&m->fs, bd, m->read_only);
	if (r)
		m->error = r;
	return r;
}

static int is_dev_path(const char *path, size_t len)
{
	return len >= 4 && !memcmp(path, "/dev", 4) && (len == 4 || path[4] == '/');
}

/* The mount whose path is path or a prefix of it at a '/', longest first.
 * /dev and its devices are the kernel's own, above any root file system. */
static struct mount *mount_of(const char *path, size_t len)
{
	struct mount *best = is_dev_path(path, len) ? 0 : root;
	for (int i = 0; i < nmounts; i++) {
		struct mount *m = &mounts[i];
		if (m->len && m->len <= len && !memcmp(m->path, path, m->len) && (len == m->len || path[m->len] == '/') &&
		    (!best || m->len > best->len))
			best = m;
	}
	return best;
}

/* A directory above some mount ("/", "/data")? */
static int synth_dir(const char *path, size_t len)
{
	if (len == 1)
		return 1;
	if (len == 4 && !memcmp(path, "/dev", 4))
		return 1;
	for (int i = 0; i < nmounts; i++)
		if (mounts[i].len > len && !memcmp(mounts[i].path, path, len) && mounts[i].path[len] == '/')
			return 1;
	return 0;
}

static int dev_index(const char *path, size_t len)
{
	if (len < 6 || memcmp(path, "/dev/", 5))
		return -1;
	for (int i = 0; i < DEV_COUNT; i++)
		if (strlen(dev_names[i]) == len - 5 && !memcmp(path + 5, dev_names[i], len - 5))
			return i;
	return -1;
}

/* "/bin": a symlink to usr/bin in the synthetic root (Debian's merged /usr:
 * /bin/sh is the system disk's /usr/bin/sh).  Followed in a lookup; the
 * link itself (lstat, readlink) is an inode of a read-only mount of its
 * own, which offers only stat and readlink: every change is refused as on
 * any read-only file system (EROFS) before another operation is asked. */
#define BIN_TARGET "usr/bin"
#define BIN_INO 2 /* the synthetic directories are 1 */

static int bin_stat(void *fs, uint32_t ino, struct fs_stat *st)
{
	(void)fs, (void)ino;
	st->ino = BIN_INO, st->nlink = 1;
	st->mode = S_IFLNK | 0777;
	st->size = sizeof BIN_TARGET - 1;
	st->mtime = st->atime = st->ctime = (int64_t)(boot.wall_ns / NSEC_PER_SEC);
	return 0;
}

static long bin_readlink(void *fs, uint32_t ino, char *buf, size_t len)
{
	(void)fs, (void)ino;
	size_t n = sizeof BIN_TARGET - 1 < len ? sizeof BIN_TARGET - 1 : len;
	memcpy(buf, BIN_TARGET, n);
	return (long)n;
}

static const struct fs_ops bin_link_ops = { .stat = bin_stat, .readlink = bin_readlink, .root = BIN_INO };
static struct mount bin_link = { .path = "/bin", .len = 4, .ops = &bin_link_ops, .read_only = 1 };

/* Lexical normalization of base + path into out: no ".", "..", "//". */
int vfs_normalize(const char *base, const char *path, char *out)
{
	char tmp[2 * PATH_MAX];
	size_t bl = path[0] == '/' ? 0 : strlen(base), pl = strlen(path);
	if (bl + pl + 2 > sizeof tmp)
		return -ENAMETOOLONG;
	memcpy(tmp, base, bl);
	tmp[bl] = '/';
	memcpy(tmp + bl + 1, path, pl + 1);
	size_t o = 0;
	for (char *p = tmp; *p;) {
		while (*p == '/')
			p++;
		char *e = p;
		while (*e && *e != '/')
			e++;
		size_t n = e - p;
		if (n == 0 || (n == 1 && p[0] == '.')) {
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
		} else {
			if (n > NAME_MAX)
				return -ENAMETOOLONG;
			if (o + n + 2 > PATH_MAX)
				return -ENAMETOOLONG;
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	return 0;
}

static int is_symlink(struct mount *m, uint32_t ino, int *err)
{
	struct fs_stat st;
	*err = m->ops->stat(m->fs, ino, &st);
	return !*err && (st.mode & S_IFMT) == S_IFLNK;
}

/* Walk a normalized absolute path.  A symlink is expanded in place and the
 * walk starts over, so ".." after it is lexical on the expanded path. */
static int walk(const char *base, const char *path, int flags, struct node *out)
{
	char *cur = out->path;
	int r = vfs_normalize(base, path, cur);
	for (int links = 0; !r; links++) {
		if (links > MAX_LINKS)
			return -ELOOP;
		size_t len = strlen(cur);
		const char *last = cur + len;
		while (last > cur && last[-1] != '/')
			last--;
		out->name = last, out->name_len = cur + len - last;
		out->m = 0, out->ino = out->dir = 0;
		if (!root && len >= 4 && !memcmp(cur, "/bin", 4) && (len == 4 || cur[4] == '/')) {
			if (len == 4 && !(flags & LOOKUP_FOLLOW)) {
				out->kind = NODE_FS, out->m = &bin_link, out->ino = BIN_INO;
				return 0;
			}
			size_t tl = sizeof "/" BIN_TARGET - 1; /* "/bin..." -> "/usr/bin..." */
			if (len - 4 + tl + 1 > PATH_MAX)
				return -ENAMETOOLONG;
			memmove(cur + tl, cur + 4, len - 4 + 1);
			memcpy(cur, "/" BIN_TARGET, tl);
			continue;
		}
		struct mount *m = mount_of(cur, len);
		if (!m) {
			if (synth_dir(cur, len)) {
				out->kind = NODE_SYNTH;
				return 0;
			}
			out->dev = dev_index(cur, len);
			out->kind = out->dev >= 0 ? NODE_DEV : NODE_SYNTH;
			return out->dev >= 0 ? 0 : -ENOENT;
		}
		if ((r = vfs_mount_fs(m)))
			return r;
		out->kind = NODE_FS;
		out->m = m;
		uint32_t ino = m->ops->root, dir = 0;
		const char *p = cur + m->len + (!m->len && len == 1); /* the root's "/" itself: no name to look up */
		int restarted = 0;
		while (*p == '/') {
			const char *name = ++p, *e = p;
			while (*e && *e != '/')
				e++;
			dir = ino;
			r = m->ops->lookup(m->fs, dir, name, e - name, &ino);
			if (r == -ENOENT && !*e) { /* only the last may be missing */
				out->dir = dir, out->ino = 0;
				return 0;
			}
			if (r)
				return r;
			int is_last = !*e, err = 0;
			if ((!is_last || (flags & LOOKUP_FOLLOW)) && is_symlink(m, ino, &err)) {
				char target[PATH_MAX], next[PATH_MAX];
				long n = m->ops->readlink(m->fs, ino, target, sizeof target - 1);
				if (n < 0)
					return (int)n;
				target[n] = 0;
				/* base: the directory holding the link */
				size_t dl = name - 1 - cur; /* 0 in the root: vfs_normalize("", ...) is "/..." */
				char dirpath[PATH_MAX];
				memcpy(dirpath, cur, dl);
				dirpath[dl] = 0;
				char joined[PATH_MAX];
				if (strlen(target) + strlen(e) + 1 > sizeof joined)
					return -ENAMETOOLONG;
				memcpy(joined, target, n);
				memcpy(joined + n, e, strlen(e) + 1);
				r = vfs_normalize(dirpath, joined, next);
				if (!r)
					memcpy(cur, next, strlen(next) + 1);
				restarted = 1;
				break;
			}
			if (err)
				return err;
			if (!is_last) {
				struct fs_stat st;
				if ((r = m->ops->stat(m->fs, ino, &st)))
					return r;
				if ((st.mode & S_IFMT) != S_IFDIR)
					return -ENOTDIR;
			}
			p = e;
		}
		if (restarted)
			continue;
		out->ino = ino, out->dir = dir;
		return 0;
	}
	return r;
}

int vfs_lookup(const char *base, const char *path, int flags, struct node *out)
{
	static int first = 1;
	if (first) { /* pid 1's /proc/1/exe is looked up once, here: at boot the stack is too small for a
		      * lookup, and inside another lookup (following /proc/1/exe) a second one's would not fit */
		first = 0;
		procfs_find_first_exe();
	}
	return walk(base, path, flags, out);
}

int vfs_stat(const struct node *n, struct fs_stat *st)
{
	memset(st, 0, sizeof *st);
	if (n->kind == NODE_FS)
		return n->ino ? n->m->ops->stat(n->m->fs, n->ino, st) : -ENOENT;
	st->nlink = 1;
	st->ino = 1;
	st->mode = n->kind == NODE_DEV ? S_IFCHR | 0666 : S_IFDIR | 0555;
	st->mtime = st->atime = st->ctime = (int64_t)(boot.wall_ns / NSEC_PER_SEC);
	return 0;
}

/* Entries of a synthetic directory: the next path component of each mount
 * below it (deduplicated), or the device nodes. */
static int synth_readdir(const struct node *n, uint64_t *pos, struct fs_dirent *out)
{
	size_t len = strlen(n->path), plen = len == 1 ? 0 : len;
	int in_dev = len == 4 && !memcmp(n->path, "/dev", 4);
	if (in_dev && *pos < DEV_COUNT) {
		const char *name = dev_names[(*pos)++];
		out->ino = 100 + (uint32_t)*pos, out->type = DT_CHR, out->name_len = (uint16_t)strlen(name);
		memcpy(out->name, name, out->name_len + 1);
		return 1;
	}
	/* candidates: the devices (in /dev), the mounts, then "dev" under "/"
	 * unless a mount below /dev named it already, then the link "bin" under
	 * "/" */
	uint64_t first = in_dev ? DEV_COUNT : 0;
	for (; *pos < first + (uint64_t)nmounts + 2; (*pos)++) {
		uint64_t i = *pos - first;
		const char *name;
		size_t nl;
		if (i == (uint64_t)nmounts + 1) {
			if (plen)
				continue;
			(*pos)++;
			out->ino = BIN_INO, out->type = DT_LNK, out->name_len = 3;
			memcpy(out->name, "bin", 4);
			return 1;
		} else if (i == (uint64_t)nmounts) {
			int dev_mount = 0;
			for (int j = 0; j < nmounts; j++)
				dev_mount |= mounts[j].len > 5 && !memcmp(mounts[j].path, "/dev/", 5);
			if (plen || dev_mount)
				continue;
			name = "dev", nl = 3;
		} else {
			const struct mount *m = &mounts[i];
			if (m->len <= plen || memcmp(m->path, n->path, plen) || m->path[plen] != '/')
				continue;
			name = m->path + plen + 1;
			const char *e = strchr(name, '/');
			nl = e ? (size_t)(e - name) : strlen(name);
			int dup = 0; /* an earlier mount gave the same name */
			for (uint64_t j = 0; j < i; j++)
				dup |= mounts[j].len > plen + nl && !memcmp(mounts[j].path, m->path, plen + 1 + nl) &&
				       (mounts[j].path[plen + 1 + nl] == '/' || !mounts[j].path[plen + 1 + nl]);
			if (dup)
				continue;
		}
		(*pos)++;
		out->ino = 10 + (uint32_t)*pos, out->type = DT_DIR, out->name_len = (uint16_t)nl;
		memcpy(out->name, name, nl);
		out->name[nl] = 0;
		return 1;
	}
	return 0;
}

int vfs_readdir(const struct node *n, uint64_t *pos, struct fs_dirent *out)
{
	if (n->kind == NODE_SYNTH)
		return synth_readdir(n, pos, out);
	if (n->kind != NODE_FS)
		return -ENOTDIR;
	int r;
	do /* files unlinked while open live on in a hidden directory */
		r = n->m->ops->readdir(n->m->fs, n->ino, pos, out);
	while (r == 1 && n->ino == n->m->ops->root && !strcmp(out->name, ".husk-unlinked"));
	return r;
}

void vfs_sync_all(void)
{
	for (int i = 0; i < nmounts; i++)
		if (mounts[i].fs && !mounts[i].read_only && mounts[i].ops->sync)
			mounts[i].ops->sync(mounts[i].fs);
}

void vfs_finish(void)
{
	vfs_sync_all();
	if (scratch && scratch->fs)
		REPORT->scratch_bytes = tmpfs_used_bytes(scratch->fs);
}
