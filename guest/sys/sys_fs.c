/* SPDX-License-Identifier: GPL-2.0-only */
/* File system calls over the VFS and the fd table. */
#include <errno.h>
#include <string.h>
#include "fs/file.h"
#include "fs/lock.h"
#include "ipc/fifo.h"
#include "ipc/pipe.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "mm/mm.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "linux_abi.h"
#include "sys/sys_fs.h"

/* The program starts in /workdir: the workdir disk, or a scratch directory
 * in RAM (vfs.c). */
#define cwd (current->proc->cwd) /* the process's working directory */
#define umask_bits (current->proc->umask)

void fs_init(void)
{
	vfs_init();
}

/* --- arguments from the program ---------------------------------------- */

static int copy_path(char *dst, const char *u)
{
	for (size_t i = 0; i < PATH_MAX; i++) {
		if (!user_ok(u + i, 1))
			return -EFAULT;
		if (!(dst[i] = u[i]))
			return i ? 0 : -ENOENT;
	}
	return -ENAMETOOLONG;
}

/* The directory a *at call's relative path starts from. */
static int base_dir(long dirfd, const char **base)
{
	if (dirfd == AT_FDCWD) {
		*base = cwd;
		return 0;
	}
	struct file *f = fd_get(dirfd);
	if (!f)
		return -EBADF;
	if (!f->is_dir || !f->path)
		return -ENOTDIR;
	*base = f->path;
	return 0;
}

/* Resolves (dirfd, path in the kernel) into *n. */
static int lookup_path(long dirfd, const char *path, int follow, struct node *n)
{
	const char *base = "/";
	int r = path[0] == '/' ? 0 : base_dir(dirfd, &base);
	return r ? r : vfs_lookup(base, path, follow ? LOOKUP_FOLLOW : 0, n);
}

/* Resolves (dirfd, user path) into *n. */
static int lookup_at(long dirfd, const char *upath, int follow, struct node *n)
{
	char path[PATH_MAX];
	int r = copy_path(path, upath);
	return r ? r : lookup_path(dirfd, path, follow, n);
}

static struct node *node_buf(void)
{
	static struct node n; /* one at a time: the kernel is not reentrant */
	return &n;
}

/* A write refused on a read-only file system is counted for the audit. */
static int writable(const struct node *n)
{
	if (n->kind == NODE_FS && !n->m->read_only)
		return 0;
	REPORT->denied_erofs++;
	return -EROFS;
}

/* --- open, close, dup ------------------------------------------------------ */

/* /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name
 * one of the caller's fds (Linux's links to /proc/self/fd): its number, or
 * -1 for any other path. */
static int fd_alias(const char *path)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(path, std[i]))
			return i;
	const char *p = !strncmp(path, "/dev/fd/", 8) ? path + 8 : !strncmp(path, "/proc/self/fd/", 14) ? path + 14 : 0;
	int v = 0;
	if (!p || !*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v >= MAX_FDS)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* Opening such an alias: a file in a file system is opened again by its
 * path (a new open file, as Linux); a pipe, console or device is shared as
 * dup shares it (Linux reopens the pipe itself: the same bytes either way);
 * a socket cannot be opened (ENXIO).  Returns the new fd, -errno, or
 * BY_PATH with *path the file's path, to be opened as any path. */
#define BY_PATH (1l << 30) /* no fd is this large */
static long open_alias(int fd, const char **path, long flags)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -ENOENT;
	if (f->kind == FILE_FS && f->path) {
		*path = f->path;
		return BY_PATH;
	}
	if (f->kind == FILE_STREAM && f->ops->type == S_IFSOCK)
		return -ENXIO;
	f->refs++;
	int nfd = fd_install(f, 0, flags & O_CLOEXEC);
	if (nfd < 0)
		file_put(f);
	return nfd;
}

long sys_openat(long dirfd, const char *upath, long flags, long mode)
{
	struct node *n = node_buf();
	int follow = !(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
	char given[PATH_MAX];
	const char *path = given;
	int r = copy_path(given, upath), alias = r ? -1 : fd_alias(given);
	if (alias >= 0) {
		long a = open_alias(alias, &path, flags);
		if (a != BY_PATH)
			return a;
	}
	if (!r)
		r = lookup_path(dirfd, path, follow, n);
	if (r == -ENOENT && (flags & O_CREAT) && n->kind == NODE_SYNTH)
		return -EROFS; /* creating in /, /data or /dev */
	if (r)
		return r;
	if ((flags & O_TMPFILE) == (O_TMPFILE & ~O_DIRECTORY)) /* O_TMPFILE's bit without O_DIRECTORY */
		return -EOPNOTSUPP;
	int acc = flags & O_ACCMODE, wants_write = acc == O_WRONLY || acc == O_RDWR || (flags & O_TRUNC);
	struct fs_stat st;
	if (n->kind == NODE_FS && !n->ino) {
		if (!(flags & O_CREAT))
			return -ENOENT;
		if ((r = writable(n)))
			return r;
		r = n->m->ops->create(n->m->fs, n->dir, n->name, n->name_len, S_IFREG | (mode & 07777 & ~umask_bits),
				      &n->ino);
		if (r)
			return r;
	} else if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		return -EEXIST;
	}
	if ((r = vfs_stat(n, &st)))
		return r;
	uint32_t type = st.mode & S_IFMT;
	if (type == S_IFLNK)
		return -ELOOP; /* O_NOFOLLOW on a symlink */
	if ((flags & O_DIRECTORY) && type != S_IFDIR)
		return -ENOTDIR;
	if (type == S_IFSOCK && !(flags & O_PATH))
		return -ENXIO; /* a socket is reached by connect */
	if (type == S_IFIFO && n->kind == NODE_FS && !(flags & O_PATH))
		return fifo_open(n->m, n->ino, (int)flags);
	if (type == S_IFDIR && wants_write)
		return -EISDIR;
	if (wants_write && n->kind != NODE_DEV && (r = writable(n)))
		return r;
	if ((flags & O_TRUNC) && type == S_IFREG && n->kind == NODE_FS && st.size &&
	    (r = n->m->ops->truncate(n->m->fs, n->ino, 0)))
		return r;
	struct file *f = file_new(n->kind == NODE_FS ? FILE_FS : n->kind == NODE_DEV ? FILE_DEV : FILE_SYNTH);
	if (!f)
		return -ENOMEM;
	f->flags = flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_PATH);
	f->m = n->m, f->ino = n->ino, f->dev = n->dev, f->is_dir = type == S_IFDIR;
	file_track(f);
	if (file_set_path(f, n->path)) { /* a directory's: *at calls start there; any: /proc/PID/fd */
		file_put(f);
		return -ENOMEM;
	}
	int fd = fd_install(f, 0, flags & O_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}

/* memfd_create: a file in RAM with no name, on /dev/shm's file system
 * (its size counts there), made as an unlinked open file is kept: in the
 * mount's orphan directory until its last close.  MAP_SHARED shares its
 * pages.  File seals are not offered: MFD_ALLOW_SEALING is EINVAL. */
long sys_memfd_create(const char *uname, long flags)
{
	char name[MEMFD_NAME_MAX + 1], tmp[32];
	static unsigned serial;
	size_t len = 0;
	for (;; len++) {
		if (len > MEMFD_NAME_MAX)
			return -EINVAL;
		if (!user_ok(uname + len, 1))
			return -EFAULT;
		if (!(name[len] = uname[len]))
			break;
	}
	if (flags & ~(long)MFD_CLOEXEC)
		return -EINVAL;
	struct node *n = node_buf();
	int r = vfs_lookup("/", "/dev/shm", LOOKUP_FOLLOW, n);
	if (r || (r = vfs_mount_fs(n->m)))
		return r;
	struct mount *m = n->m;
	int tlen = ksnprintf(tmp, sizeof tmp, ".memfd-%u", serial++);
	uint32_t ino;
	if ((r = m->ops->create(m->fs, m->ops->root, tmp, (size_t)tlen, S_IFREG | 0777, &ino)))
		return r;
	struct file *f = file_new(FILE_FS);
	if (!f) {
		m->ops->unlink(m->fs, m->ops->root, tmp, (size_t)tlen);
		return -ENOMEM;
	}
	f->flags = O_RDWR, f->m = m, f->ino = ino;
	file_track(f);
	if ((r = orphan(m, m->ops->root, tmp, (size_t)tlen, ino))) {
		m->ops->unlink(m->fs, m->ops->root, tmp, (size_t)tlen);
		file_put(f);
		return r;
	}
	char *path = n->path; /* what /proc/PID/fd shows, as Linux */
	ksnprintf(path, sizeof n->path, "/memfd:%s (deleted)", name);
	int fd = file_set_path(f, path) ? -ENOMEM : fd_install(f, 0, flags & MFD_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}

long sys_close(long fd)
{
	return fd_close(fd);
}

long sys_dup3(long old, long new, long flags, int dup2)
{
	struct file *f = fd_get(old);
	if (!f || new < 0 || new >= fd_limit())
		return -EBADF;
	if (old == new)
		return dup2 ? new : -EINVAL;
	if (flags & ~O_CLOEXEC)
		return -EINVAL;
	if (fd_get(new))
		fd_close(new);
	f->refs++;
	return fd_install(f, (int)new, flags & O_CLOEXEC);
}

long sys_dup(long fd, long min, int cloexec)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (min < 0 || min >= fd_limit())
		return -EINVAL;
	f->refs++;
	long r = fd_install(f, (int)min, cloexec);
	if (r < 0)
		file_put(f);
	return r;
}

/* --- read and write ------------------------------------------------------ */

/* buf is the program's (checked here) or, for a copy between two files,
 * the kernel's. */
static long file_io_at(struct file *f, void *buf, size_t len, uint64_t *pos, int writing, int user)
{
	int acc = f->flags & O_ACCMODE;
	if (writing ? acc == O_RDONLY : acc == O_WRONLY)
		return -EBADF;
	if (f->is_dir || f->kind == FILE_SYNTH)
		return -EISDIR;
	if (!len)
		return 0;
	if (user && !user_ok(buf, len))
		return -EFAULT;
	switch (f->kind) {
	case FILE_CONSOLE:
		return writing ? console_write(f->dev, buf, len) : console_read(f->dev, buf, len, f->flags & O_NONBLOCK);
	case FILE_STREAM: {
		long (*rd)(struct file *, void *, size_t) = f->ops->read;
		long (*wr)(struct file *, const void *, size_t) = f->ops->write;
		if (writing ? !wr : !rd)
			return -EINVAL;
		f->refs++; /* another thread may close the fd while this one waits */
		long n = writing ? wr(f, buf, len) : rd(f, buf, len);
		file_put(f);
		return n;
	}
	case FILE_DEV:
		if (writing)
			return len;
		if (f->dev == DEV_NULL)
			return 0;
		if (f->dev == DEV_ZERO)
			memset(buf, 0, len);
		else
			random_fill(buf, len);
		return len;
	}
	struct mount *m = f->m;
	if (writing && (f->flags & O_APPEND) && pos == &f->pos) {
		struct fs_stat st;
		int r = m->ops->stat(m->fs, f->ino, &st);
		if (r)
			return r;
		f->pos = st.size;
	}
	long n = writing ? m->ops->write(m->fs, f->ino, *pos, buf, len) : m->ops->read(m->fs, f->ino, *pos, buf, len);
	if (n > 0)
		*pos += n;
	return n;
}

static long file_io(struct file *f, void *buf, size_t len, uint64_t *pos, int writing)
{
	return file_io_at(f, buf, len, pos, writing, 1);
}

/* --- copies between files: copy_file_range, splice, sendfile ------------- */

static int is_pipe(const struct file *f)
{
	return f->kind == FILE_STREAM && f->ops->pipe;
}

static int is_regular(const struct file *f)
{
	return f->kind == FILE_FS && !f->is_dir;
}

/* Up to len bytes from in to out through a kernel buffer, at *in_pos and
 * *out_pos.  Only the first read may wait: once bytes have moved, a pipe
 * with nothing more ends the copy.  A short write puts a file source's
 * position back over what was not written. */
static long copy_between(struct file *in, uint64_t *in_pos, struct file *out, uint64_t *out_pos, size_t len,
			 int nonblock)
{
	size_t chunk = len < (64u << 10) ? len : (64u << 10), done = 0;
	if (!len)
		return 0;
	char *buf = kalloc(chunk);
	if (!buf)
		return -ENOMEM;
	int in_flags = in->flags, out_flags = out->flags;
	in->refs++, out->refs++; /* another thread may close them while this one waits */
	long r = 0;
	while (done < len) {
		if (nonblock || done)
			in->flags |= O_NONBLOCK;
		if (nonblock)
			out->flags |= O_NONBLOCK;
		size_t want = len - done < chunk ? len - done : chunk;
		if ((r = file_io_at(in, buf, want, in_pos, 0, 0)) <= 0)
			break;
		long w = file_io_at(out, buf, (size_t)r, out_pos, 1, 0);
		if (w < r && is_regular(in))
			*in_pos -= (uint64_t)(r - (w > 0 ? w : 0));
		if (w > 0)
			done += (size_t)w;
		if (w < r) {
			r = w;
			break;
		}
	}
	in->flags = in_flags, out->flags = out_flags;
	file_put(in), file_put(out);
	kfree(buf, chunk);
	return done ? (long)done : r;
}

/* An offset the program passes by pointer (NULL: the file's own). */
static int offset_in(const int64_t *u, struct file *f, uint64_t *pos, uint64_t **use)
{
	if (!u) {
		*use = &f->pos;
		return 0;
	}
	if (!user_ok(u, sizeof *u))
		return -EFAULT;
	if (*u < 0)
		return -EINVAL;
	*pos = (uint64_t)*u, *use = pos;
	return 0;
}

/* copy_between at offsets passed by pointer (NULL: the file's own), the
 * pointed ones updated after; overlapping ranges of one file refused. */
static long copy_at(struct file *in, int64_t *off_in, struct file *out, int64_t *off_out, size_t len, int nonblock)
{
	uint64_t ip, op, *inp, *outp;
	int r;
	if ((r = offset_in(off_in, in, &ip, &inp)) || (r = offset_in(off_out, out, &op, &outp)))
		return r;
	if (is_regular(in) && is_regular(out) && in->m == out->m && in->ino == out->ino && *inp < *outp + len &&
	    *outp < *inp + len)
		return -EINVAL;
	long n = copy_between(in, inp, out, outp, len, nonblock);
	if (n > 0 && off_in)
		*off_in = (int64_t)ip;
	if (n > 0 && off_out)
		*off_out = (int64_t)op;
	return n;
}

long sys_copy_file_range(long fd_in, int64_t *off_in, long fd_out, int64_t *off_out, size_t len, long flags)
{
	struct file *in = fd_get(fd_in), *out = fd_get(fd_out);
	if (!in || !out)
		return -EBADF;
	if (flags)
		return -EINVAL;
	if (in->is_dir || out->is_dir)
		return -EISDIR;
	if (!is_regular(in) || !is_regular(out))
		return -EINVAL;
	if ((out->flags & O_APPEND) || (in->flags & O_ACCMODE) == O_WRONLY || (out->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	return copy_at(in, off_in, out, off_out, len, 0);
}

long sys_splice(long fd_in, int64_t *off_in, long fd_out, int64_t *off_out, size_t len, long flags)
{
	struct file *in = fd_get(fd_in), *out = fd_get(fd_out);
	if (!in || !out)
		return -EBADF;
	if (!is_pipe(in) && !is_pipe(out))
		return -EINVAL; /* one end must be a pipe */
	if ((off_in && is_pipe(in)) || (off_out && is_pipe(out)))
		return -ESPIPE;
	return copy_at(in, off_in, out, off_out, len, (flags & SPLICE_F_NONBLOCK) != 0);
}

long sys_sendfile(long fd_out, long fd_in, int64_t *off, size_t len)
{
	struct file *in = fd_get(fd_in), *out = fd_get(fd_out);
	if (!in || !out)
		return -EBADF;
	if (!is_regular(in))
		return -EINVAL; /* a source Linux could map: a file */
	return copy_at(in, off, out, 0, len, 0);
}

long sys_rw(long fd, void *buf, size_t len, int writing)
{
	struct file *f = fd_get(fd);
	return f ? file_io(f, buf, len, &f->pos, writing) : -EBADF;
}

long sys_prw(long fd, void *buf, size_t len, long off, int writing)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind == FILE_CONSOLE || f->kind == FILE_STREAM)
		return -ESPIPE;
	if (off < 0)
		return -EINVAL;
	uint64_t pos = off;
	return file_io(f, buf, len, &pos, writing);
}

long sys_rwv(long fd, const struct kiovec *iov, long n, int writing)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (n < 0 || n > 1024)
		return -EINVAL;
	if (!user_ok(iov, n * sizeof *iov))
		return -EFAULT;
	long total = 0;
	int flags = f->flags;
	f->refs++; /* closed by another thread while an iovec waits: f lives on until this returns */
	for (long i = 0; i < n; i++) {
		struct kiovec v = iov[i]; /* read once, checked by file_io */
		if (!v.len)
			continue;
		long k = file_io(f, (void *)v.base, v.len, &f->pos, writing);
		if (k < 0) {
			total = total ? total : k;
			break;
		}
		total += k;
		if ((size_t)k < v.len)
			break;
		if (f->kind == FILE_CONSOLE && !writing)
			break; /* a console read returns what it has */
		if (f->kind == FILE_STREAM)
			f->flags |= O_NONBLOCK; /* once some moved, the rest only if it need not wait */
	}
	f->flags = flags;
	file_put(f);
	return total;
}

long sys_lseek(long fd, long off, long whence)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind == FILE_CONSOLE || f->kind == FILE_STREAM)
		return -ESPIPE;
	if (f->kind != FILE_FS)
		return 0;
	int64_t base = 0;
	if (whence == SEEK_CUR) {
		base = (int64_t)f->pos;
	} else if (whence == SEEK_END) {
		struct fs_stat st;
		int r = f->m->ops->stat(f->m->fs, f->ino, &st);
		if (r)
			return r;
		base = (int64_t)st.size;
	} else if (whence != SEEK_SET) {
		return -EINVAL;
	}
	if ((off > 0 && base > INT64_MAX - off) || base + off < 0)
		return -EINVAL;
	if (f->is_dir && base + off != 0 && whence != SEEK_SET)
		return -EINVAL;
	f->pos = base + off;
	return (long)f->pos;
}

/* --- metadata ---------------------------------------------------------------- */

struct kstat {
	uint64_t dev, ino, nlink;
	uint32_t mode, uid, gid, pad0;
	uint64_t rdev;
	int64_t size, blksize, blocks;
	int64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
	int64_t unused[3];
};

static int fill_stat(const struct fs_stat *st, int dev, struct kstat *k)
{
	if (!user_ok(k, sizeof *k))
		return -EFAULT;
	memset(k, 0, sizeof *k);
	k->dev = dev, k->ino = st->ino, k->nlink = st->nlink, k->mode = st->mode;
	k->uid = st->uid, k->gid = st->gid, k->size = st->size, k->blksize = 4096, k->blocks = st->blocks;
	k->atime = st->atime, k->mtime = st->mtime, k->ctime = st->ctime;
	return 0;
}

int file_stat(struct file *f, struct fs_stat *st, int *dev)
{
	memset(st, 0, sizeof *st);
	*dev = f->m ? f->m->index : 0;
	switch (f->kind) {
	case FILE_FS:
		return f->m->ops->stat(f->m->fs, f->ino, st);
	case FILE_CONSOLE:
		st->mode = (boot.tty[f->dev] ? S_IFCHR : S_IFIFO) | 0620;
		break;
	case FILE_DEV:
		st->mode = S_IFCHR | 0666;
		break;
	case FILE_STREAM:
		st->mode = f->ops->type | 0600;
		st->ino = (uint32_t)((uintptr_t)f->priv >> 4); /* one per pipe or socket end */
		st->nlink = 1;
		return 0;
	default:
		st->mode = S_IFDIR | 0555;
	}
	st->nlink = 1, st->ino = 1;
	return 0;
}

long sys_fstat(long fd, struct kstat *k)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	struct fs_stat st;
	int dev, r = file_stat(f, &st, &dev);
	return r ? r : fill_stat(&st, dev, k);
}

/* The *at calls' target: the file open on dirfd (AT_EMPTY_PATH with ""),
 * or the path from it. */
static int stat_at(long dirfd, const char *upath, long flags, struct fs_stat *st, int *dev)
{
	if ((flags & AT_EMPTY_PATH) && user_ok(upath, 1) && !upath[0]) {
		struct file *f = fd_get(dirfd);
		return f ? file_stat(f, st, dev) : -EBADF;
	}
	struct node *n = node_buf();
	int r = lookup_at(dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW), n);
	if (!r)
		r = vfs_stat(n, st);
	*dev = n->m ? n->m->index : 0;
	return r;
}

long sys_exists_at(long dirfd, const char *upath, long flags)
{
	struct fs_stat st;
	int dev;
	return stat_at(dirfd, upath, flags, &st, &dev);
}

long sys_fstatat(long dirfd, const char *upath, struct kstat *k, long flags)
{
	struct fs_stat st;
	int dev, r = stat_at(dirfd, upath, flags, &st, &dev);
	return r ? r : fill_stat(&st, dev, k);
}

struct statx_time_k {
	int64_t sec;
	uint32_t nsec;
	int32_t pad;
};

struct statx_k {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, pad1;
	uint64_t ino, size, blocks, attributes_mask;
	struct statx_time_k atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t spare[14];
};
_Static_assert(sizeof(struct statx_k) == 256, "Linux's struct statx");

#define STATX_BASIC_STATS 0x7ffu  /* type, mode, nlink, uid, gid, times but btime, ino, size, blocks */
#define AT_STATX_SYNC_TYPE 0x6000 /* the sync flags: nothing to sync here */
#define AT_NO_AUTOMOUNT 0x800

/* statx (glibc's and coreutils' stat): the basic fields, as fstatat's; no
 * birth time.  The mask asked for changes nothing: what is known is given. */
long sys_statx(long dirfd, const char *upath, long flags, unsigned mask, struct statx_k *x)
{
	(void)mask;
	if (flags & ~(long)(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE) ||
	    (flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (mask & 0x80000000u))
		return -EINVAL;
	struct fs_stat st;
	int dev, r = stat_at(dirfd, upath, flags, &st, &dev);
	if (r)
		return r;
	if (!user_ok(x, sizeof *x))
		return -EFAULT;
	memset(x, 0, sizeof *x);
	x->mask = STATX_BASIC_STATS, x->blksize = 4096;
	x->nlink = st.nlink, x->uid = st.uid, x->gid = st.gid, x->mode = (uint16_t)st.mode;
	x->ino = st.ino, x->size = st.size, x->blocks = st.blocks;
	x->atime.sec = st.atime, x->mtime.sec = st.mtime, x->ctime.sec = st.ctime;
	x->dev_minor = (uint32_t)dev;
	return 0;
}

long sys_faccessat(long dirfd, const char *upath, long amode, long flags)
{
	struct node *n = node_buf();
	int r = lookup_at(dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW), n);
	struct fs_stat st;
	if (!r)
		r = vfs_stat(n, &st);
	if (r)
		return r;
	if ((amode & W_OK) && n->kind != NODE_DEV && (r = writable(n)))
		return r;
	if ((amode & X_OK) && !(st.mode & 0111) && (st.mode & S_IFMT) != S_IFDIR)
		return -EACCES; /* root may execute anything with an x bit */
	return 0;
}

struct linux_dirent64 {
	uint64_t ino;
	int64_t off;
	uint16_t reclen;
	uint8_t type;
	char name[];
};

long sys_getdents64(long fd, void *buf, size_t len)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (!f->is_dir)
		return -ENOTDIR;
	if (!user_ok(buf, len))
		return -EFAULT;
	struct node *n = node_buf();
	n->kind = f->kind == FILE_FS ? NODE_FS : NODE_SYNTH;
	n->m = f->m, n->ino = f->ino;
	memcpy(n->path, f->path, strlen(f->path) + 1);
	size_t used = 0;
	for (;;) {
		struct fs_dirent e;
		uint64_t before = f->pos;
		int r = vfs_readdir(n, &f->pos, &e);
		if (r <= 0)
			return used ? (long)used : r;
		size_t head = __builtin_offsetof(struct linux_dirent64, name);
		size_t reclen = ALIGN_UP(head + e.name_len + 1, 8);
		if (used + reclen > len) {
			f->pos = before;
			return used ? (long)used : -EINVAL;
		}
		struct linux_dirent64 *d = (struct linux_dirent64 *)((char *)buf + used);
		d->ino = e.ino, d->off = (int64_t)f->pos, d->reclen = (uint16_t)reclen, d->type = e.type;
		memcpy(d->name, e.name, e.name_len);
		memset(d->name + e.name_len, 0, reclen - head - e.name_len);
		used += reclen;
	}
}

/* --- names ------------------------------------------------------------------ */

static int parent_for_change(long dirfd, const char *upath, struct node *n)
{
	int r = lookup_at(dirfd, upath, 0, n);
	if (r)
		return r == -ENOENT && n->kind == NODE_SYNTH ? -EROFS : r;
	return writable(n);
}

long sys_mkdirat(long dirfd, const char *upath, long mode)
{
	struct node *n = node_buf();
	int r = lookup_at(dirfd, upath, 0, n);
	if (!r && (n->kind != NODE_FS || n->ino))
		return -EEXIST; /* before EROFS, as Linux: `mkdir -p /tmp/x` starts with mkdir("/") */
	r = parent_for_change(dirfd, upath, n);
	if (r)
		return r;
	if (n->ino)
		return -EEXIST;
	uint32_t ino;
	return n->m->ops->create(n->m->fs, n->dir, n->name, n->name_len, S_IFDIR | (mode & 07777 & ~umask_bits), &ino);
}

int fs_make_node(long dirfd, const char *path, uint32_t mode, struct node *n)
{
	int r = lookup_path(dirfd, path, 0, n);
	if (!r && (n->kind != NODE_FS || n->ino))
		return -EEXIST;
	if (r)
		return r == -ENOENT && n->kind == NODE_SYNTH ? -EROFS : r;
	if ((r = writable(n)))
		return r;
	return n->m->ops->create(n->m->fs, n->dir, n->name, n->name_len, (mode & S_IFMT) | (mode & 07777 & ~umask_bits),
				 &n->ino);
}

/* Regular files, FIFOs and sockets; a device node needs a privilege no
 * program in the sandbox has (as in a container without CAP_MKNOD). */
long sys_mknodat(long dirfd, const char *upath, long mode, long dev)
{
	(void)dev;
	char path[PATH_MAX];
	uint32_t type = (uint32_t)mode & S_IFMT;
	if (type == S_IFCHR || type == S_IFBLK)
		return -EPERM;
	if (type && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK)
		return -EINVAL;
	int r = copy_path(path, upath);
	return r ? r : fs_make_node(dirfd, path, (type ? type : S_IFREG) | ((uint32_t)mode & 07777), node_buf());
}

long sys_unlinkat(long dirfd, const char *upath, long flags)
{
	struct node *n = node_buf();
	int r = parent_for_change(dirfd, upath, n);
	if (r)
		return r;
	if (!n->ino)
		return -ENOENT;
	if (!n->dir)
		return -EBUSY; /* a mount point itself */
	if (flags & AT_REMOVEDIR)
		return n->m->ops->rmdir(n->m->fs, n->dir, n->name, n->name_len);
	struct fs_stat st;
	if ((r = n->m->ops->stat(n->m->fs, n->ino, &st)))
		return r;
	if ((st.mode & S_IFMT) == S_IFDIR)
		return -EISDIR;
	if (st.nlink == 1 && inode_is_open(n->m, n->ino))
		return orphan(n->m, n->dir, n->name, n->name_len, n->ino);
	return n->m->ops->unlink(n->m->fs, n->dir, n->name, n->name_len);
}

long sys_renameat2(long olddirfd, const char *oldp, long newdirfd, const char *newp, long flags)
{
	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	static struct node from;
	struct node *to = node_buf();
	int r = parent_for_change(olddirfd, oldp, &from);
	if (!r)
		r = parent_for_change(newdirfd, newp, to);
	if (r)
		return r;
	if (!from.ino)
		return -ENOENT;
	if (!from.dir || !to->dir)
		return -EBUSY; /* a mount point itself */
	if (from.m != to->m)
		return -EXDEV;
	if ((flags & RENAME_NOREPLACE) && to->ino)
		return -EEXIST;
	struct fs_stat st;
	if (to->ino && to->ino != from.ino && inode_is_open(to->m, to->ino) &&
	    !to->m->ops->stat(to->m->fs, to->ino, &st) && (st.mode & S_IFMT) != S_IFDIR && st.nlink == 1 &&
	    (r = orphan(to->m, to->dir, to->name, to->name_len, to->ino)))
		return r; /* the replaced file is still open: keep it alive */
	return from.m->ops->rename(from.m->fs, from.dir, from.name, from.name_len, to->dir, to->name, to->name_len);
}

long sys_linkat(long olddirfd, const char *oldp, long newdirfd, const char *newp, long flags)
{
	static struct node from;
	struct node *to = node_buf();
	int r = lookup_at(olddirfd, oldp, flags & AT_SYMLINK_FOLLOW, &from);
	if (!r)
		r = parent_for_change(newdirfd, newp, to);
	if (r)
		return r;
	if (from.kind != NODE_FS || !from.ino)
		return -ENOENT;
	if (to->ino)
		return -EEXIST;
	if (from.m != to->m)
		return -EXDEV;
	return to->m->ops->link(to->m->fs, to->dir, to->name, to->name_len, from.ino);
}

long sys_symlinkat(const char *utarget, long dirfd, const char *upath)
{
	char target[PATH_MAX];
	int r = copy_path(target, utarget);
	struct node *n = node_buf();
	if (!r)
		r = parent_for_change(dirfd, upath, n);
	if (r)
		return r;
	if (n->ino)
		return -EEXIST;
	uint32_t ino;
	return n->m->ops->symlink(n->m->fs, n->dir, n->name, n->name_len, target, strlen(target), &ino);
}

long sys_readlinkat(long dirfd, const char *upath, char *buf, long len)
{
	if (len <= 0)
		return -EINVAL;
	if (!user_ok(buf, len))
		return -EFAULT;
	struct node *n = node_buf();
	int r = lookup_at(dirfd, upath, 0, n);
	struct fs_stat st;
	if (!r)
		r = vfs_stat(n, &st);
	if (r)
		return r;
	if ((st.mode & S_IFMT) != S_IFLNK)
		return -EINVAL;
	return n->m->ops->readlink(n->m->fs, n->ino, buf, len);
}

static long truncate_node(struct mount *m, uint32_t ino, long size)
{
	if (size < 0)
		return -EINVAL;
	if (m->read_only)
		return -EROFS;
	struct fs_stat st;
	int r = m->ops->stat(m->fs, ino, &st);
	if (r)
		return r;
	if ((st.mode & S_IFMT) == S_IFDIR)
		return -EISDIR;
	return m->ops->truncate(m->fs, ino, size);
}

long sys_ftruncate(long fd, long size)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind != FILE_FS || !(f->flags & O_ACCMODE))
		return -EINVAL;
	return truncate_node(f->m, f->ino, size);
}

long sys_truncate(const char *upath, long size)
{
	struct node *n = node_buf();
	int r = lookup_at(AT_FDCWD, upath, 1, n);
	if (r)
		return r;
	if (n->kind != NODE_FS)
		return -EINVAL;
	return n->ino ? truncate_node(n->m, n->ino, size) : -ENOENT;
}

long sys_fsync(long fd)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind != FILE_FS || f->m->read_only)
		return 0;
	return f->m->ops->sync(f->m->fs);
}

long sys_utimensat(long dirfd, const char *upath, const int64_t *ts, long flags)
{
	struct mount *m;
	uint32_t ino;
	if (!upath) {
		struct file *f = fd_get(dirfd);
		if (!f)
			return -EBADF;
		if (f->kind != FILE_FS)
			return 0;
		m = f->m, ino = f->ino;
	} else {
		struct node *n = node_buf();
		int r = lookup_at(dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW), n);
		if (r)
			return r;
		if (n->kind != NODE_FS)
			return -EROFS;
		if (!n->ino)
			return -ENOENT;
		m = n->m, ino = n->ino;
	}
	if (m->read_only)
		return -EROFS;
	if (ts && !user_ok(ts, 32))
		return -EFAULT;
	int64_t now = clock_wall_s();
	int64_t t[2];
	for (int i = 0; i < 2; i++) {
		long nsec = ts ? ts[2 * i + 1] : UTIME_NOW;
		t[i] = nsec == UTIME_NOW ? now : nsec == UTIME_OMIT ? -1 : ts[2 * i];
	}
	return m->ops->set_times(m->fs, ino, t[0], t[1]);
}

long sys_fchmodat(long dirfd, const char *upath, long mode)
{
	struct node *n = node_buf();
	int r = lookup_at(dirfd, upath, 1, n);
	if (!r && n->kind != NODE_FS)
		r = -EROFS;
	if (!r && !n->ino)
		r = -ENOENT;
	if (!r)
		r = writable(n);
	return r ? r : n->m->ops->chmod(n->m->fs, n->ino, mode & 07777);
}

long sys_fchmod(long fd, long mode)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind != FILE_FS || f->m->read_only) {
		REPORT->denied_erofs++;
		return -EROFS;
	}
	return f->m->ops->chmod(f->m->fs, f->ino, mode & 07777);
}

long sys_umask(long mask)
{
	long old = umask_bits;
	umask_bits = (uint32_t)mask & 0777;
	return old;
}

long sys_getcwd(char *buf, size_t len)
{
	size_t n = strlen(cwd) + 1;
	if (!user_ok(buf, len))
		return -EFAULT;
	if (len < n)
		return -ERANGE;
	memcpy(buf, cwd, n);
	return n;
}

static long set_cwd(const struct node *n)
{
	struct fs_stat st;
	int r = vfs_stat(n, &st);
	if (r)
		return r;
	if ((st.mode & S_IFMT) != S_IFDIR)
		return -ENOTDIR;
	memcpy(cwd, n->path, strlen(n->path) + 1);
	return 0;
}

long sys_chdir(const char *upath)
{
	struct node *n = node_buf();
	int r = lookup_at(AT_FDCWD, upath, 1, n);
	return r ? r : set_cwd(n);
}

long sys_fchdir(long fd)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (!f->is_dir)
		return -ENOTDIR;
	memcpy(cwd, f->path, strlen(f->path) + 1);
	return 0;
}

long sys_fcntl(long fd, long cmd, long arg)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD: return sys_dup(fd, arg, 0);
	case F_DUPFD_CLOEXEC: return sys_dup(fd, arg, 1);
	case F_GETFD: return fd_cloexec(fd, -1);
	case F_SETFD: return fd_cloexec(fd, arg & FD_CLOEXEC);
	case F_GETFL: return f->flags;
	case F_SETFL: /* only these two can change */
		f->flags = (f->flags & ~(O_APPEND | O_NONBLOCK)) | (arg & (O_APPEND | O_NONBLOCK));
		return 0;
	case F_GETLK: case F_SETLK: case F_SETLKW: return lock_fcntl(f, cmd, (void *)arg);
	case F_SETPIPE_SZ: case F_GETPIPE_SZ: return pipe_size_fcntl(f, cmd == F_SETPIPE_SZ, (unsigned long)arg);
	}
	return -EINVAL;
}

long sys_ioctl(long fd, unsigned long req, void *arg)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	switch (req) {
	case FIOCLEX: return fd_cloexec(fd, 1) < 0 ? -EBADF : 0;
	case FIONCLEX: return fd_cloexec(fd, 0) < 0 ? -EBADF : 0;
	case FIONBIO:
		if (!user_ok(arg, sizeof(int)))
			return -EFAULT;
		f->flags = *(int *)arg ? f->flags | O_NONBLOCK : f->flags & ~O_NONBLOCK;
		return 0;
	case TIOCGWINSZ:
		if (f->kind != FILE_CONSOLE || !boot.tty[f->dev])
			return -ENOTTY;
		if (!user_ok(arg, 8))
			return -EFAULT;
		uint16_t *ws = arg;
		ws[0] = boot.rows, ws[1] = boot.cols, ws[2] = ws[3] = 0;
		return 0;
	}
	return -ENOTTY;
}

struct kstatfs {
	int64_t type, bsize, blocks, bfree, bavail, files, ffree;
	int32_t fsid[2];
	int64_t namelen, frsize, flags, spare[4];
};

static long fill_statfs(struct mount *m, struct kstatfs *s)
{
	if (!user_ok(s, sizeof *s))
		return -EFAULT;
	memset(s, 0, sizeof *s);
	s->bsize = s->frsize = 4096, s->namelen = NAME_MAX;
	if (m) {
		s->type = vfs_fs_type(m)->magic;
		s->bfree = s->bavail = m->ops->free_bytes(m->fs) / 4096;
		s->blocks = s->bfree; /* total is not tracked; free space is what callers use */
		s->flags = m->read_only ? ST_RDONLY : 0;
		s->fsid[0] = m->index;
	}
	return 0;
}

long sys_statfs(const char *upath, struct kstatfs *s)
{
	struct node *n = node_buf();
	int r = lookup_at(AT_FDCWD, upath, 1, n);
	return r ? r : fill_statfs(n->m, s);
}

long sys_fstatfs(long fd, struct kstatfs *s)
{
	struct file *f = fd_get(fd);
	return f ? fill_statfs(f->m, s) : -EBADF;
}

struct file_pages { struct file *f; uint64_t first; };

static void *file_page(void *ctx, uint64_t i)
{
	struct file_pages *fp = ctx;
	return fp->f->m->ops->page(fp->f->m->fs, fp->f->ino, fp->first + i);
}

/* A private file mapping is a copy: memory of the arena filled from the
 * file.  A shared one maps the file's own pages where the file system has
 * them to lend (a RAM file system: /tmp, /dev/shm); elsewhere only a
 * read-only one is taken, as a copy. */
long sys_mmap_file(uintptr_t addr, size_t len, long prot, long flags, long fd, long off)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind != FILE_FS || f->is_dir)
		return -ENODEV;
	if (off < 0 || (off & (PAGE_SIZE - 1)))
		return -EINVAL;
	if ((flags & MAP_SHARED) && f->m->ops->page && !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))) {
		if ((prot & PROT_WRITE) && (f->flags & O_ACCMODE) != O_RDWR)
			return -EACCES;
		struct file_pages fp = { f, (uint64_t)off / PAGE_SIZE };
		return mm_map_shared(len, file_page, &fp);
	}
	if ((flags & MAP_SHARED) && (prot & PROT_WRITE)) /* changes could not reach the file */
		return -ENODEV;
	/* filled while writable; PROT_NONE afterwards (its contents kept for a later mprotect) */
	long a = mem_mmap(addr, len, prot == PROT_NONE ? PROT_READ | PROT_WRITE : prot,
			  (flags & ~MAP_SHARED) | MAP_PRIVATE | MAP_ANONYMOUS);
	if (a < 0)
		return a;
	long n = f->m->ops->read(f->m->fs, f->ino, off, (void *)a, len);
	if (n >= 0 && prot == PROT_NONE)
		n = mem_mprotect(a, len, PROT_NONE);
	if (n < 0) {
		mem_munmap(a, len);
		return n;
	}
	return a;
}

/* Everything belongs to root and stays so: changing to root is accepted,
 * any other owner is refused. */
static long owner_ok(long uid, long gid)
{
	return ((uint32_t)uid == 0 || (uint32_t)uid == 0xffffffff) && ((uint32_t)gid == 0 || (uint32_t)gid == 0xffffffff)
		       ? 0
		       : -EPERM;
}

long sys_chown(long dirfd, const char *upath, long uid, long gid, int follow)
{
	struct node *n = node_buf();
	int r = lookup_at(dirfd, upath, follow, n);
	struct fs_stat st;
	if (!r)
		r = vfs_stat(n, &st);
	if (!r && n->kind == NODE_FS && n->m->read_only)
		r = -EROFS;
	return r ? r : owner_ok(uid, gid);
}

long sys_fchown(long fd, long uid, long gid)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	if (f->kind == FILE_FS && f->m->read_only)
		return -EROFS;
	return owner_ok(uid, gid);
}
