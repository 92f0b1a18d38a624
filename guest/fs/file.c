/* SPDX-License-Identifier: GPL-2.0-only */
/* The fd table: fds 0-2 start as the consoles; dup shares one open file. */
#include <errno.h>
#include <string.h>
#include "fs/file.h"
#include "fs/lock.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/process.h"
#include "proc/sched.h"

/* RLIMIT_NOFILE: both start at the policy's --open-files (boot tree); the
 * program may lower them, never raise the hard one. */
static int boot_limit = MAX_FDS;

/* The current process's table. */
static struct fdtable *table(void)
{
	return current->proc->files;
}

/* Open FILE_FS inodes: how many files refer to each, and whether it was
 * unlinked (moved to the orphan directory). */
static struct open_inode {
	struct mount *m;
	uint32_t ino, count;
	int orphaned;
} opened[MAX_FDS];

static struct open_inode *find_open(struct mount *m, uint32_t ino)
{
	for (int i = 0; i < MAX_FDS; i++)
		if (opened[i].count && opened[i].m == m && opened[i].ino == ino)
			return &opened[i];
	return 0;
}

int inode_is_open(struct mount *m, uint32_t ino)
{
	return find_open(m, ino) != 0;
}

static void orphan_name(char *buf, uint32_t ino)
{
	int n = 0;
	char tmp[12];
	do
		tmp[n++] = (char)('0' + ino % 10);
	while (ino /= 10);
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = 0;
}

static int orphan_dir(struct mount *m, uint32_t *dir)
{
	const char *d = ORPHAN_DIR;
	int r = m->ops->lookup(m->fs, m->ops->root, d, strlen(d), dir);
	if (r == -ENOENT)
		r = m->ops->create(m->fs, m->ops->root, d, strlen(d), S_IFDIR | 0700, dir);
	return r;
}

int orphan(struct mount *m, uint32_t dir, const char *name, size_t len, uint32_t ino)
{
	struct open_inode *o = find_open(m, ino);
	uint32_t od;
	char on[12];
	int r = orphan_dir(m, &od);
	if (r)
		return r;
	orphan_name(on, ino);
	if ((r = m->ops->rename(m->fs, dir, name, len, od, on, strlen(on))))
		return r;
	o->orphaned = 1;
	return 0;
}

static void inode_ref(struct file *f, int delta)
{
	struct open_inode *o = find_open(f->m, f->ino);
	if (delta > 0) {
		if (!o)
			for (int i = 0; i < MAX_FDS && !o; i++)
				if (!opened[i].count)
					o = &opened[i], *o = (struct open_inode){ f->m, f->ino, 0, 0 };
		if (o)
			o->count++;
		return;
	}
	if (!o || --o->count)
		return;
	if (o->orphaned) { /* the last close of an unlinked file */
		uint32_t od;
		char on[12];
		orphan_name(on, o->ino);
		if (!orphan_dir(f->m, &od))
			f->m->ops->unlink(f->m->fs, od, on, strlen(on));
	}
}

void file_track(struct file *f)
{
	if (f->kind == FILE_FS)
		inode_ref(f, 1);
}

struct file *fd_get(long fd)
{
	return fd >= 0 && fd < MAX_FDS ? table()->fd[fd] : 0;
}

struct file *file_new(int kind)
{
	struct file *f = kalloc(sizeof *f);
	if (f)
		f->refs = 1, f->kind = kind;
	return f;
}

int file_set_path(struct file *f, const char *path)
{
	size_t n = strlen(path) + 1; /* its size, as file_put frees it */
	if (!(f->path = kalloc(n)))
		return -ENOMEM;
	memcpy(f->path, path, n);
	return 0;
}

void file_put(struct file *f)
{
	if (--f->refs)
		return;
	if (f->kind == FILE_FS) {
		lock_file_released(f);
		inode_ref(f, -1);
	}
	if (f->kind == FILE_STREAM && f->ops)
		f->ops->release(f);
	if (f->path)
		kfree(f->path, strlen(f->path) + 1);
	kfree(f, sizeof *f);
}

int fd_install(struct file *f, int min, int ce)
{
	struct fdtable *t = table();
	for (int fd = min < 0 ? 0 : min; fd < (int)t->nofile_soft; fd++)
		if (!t->fd[fd]) {
			t->fd[fd] = f;
			t->cloexec[fd] = !!ce;
			return fd;
		}
	REPORT->denied_emfile++;
	return -EMFILE;
}

int fd_limit(void)
{
	return (int)table()->nofile_soft;
}

void fd_limit_init(int n)
{
	boot_limit = n >= 3 && n <= MAX_FDS ? n : MAX_FDS;
}

void fd_limit_reset(void)
{
	struct fdtable *t = table();
	t->nofile_soft = t->nofile_hard = (uint64_t)boot_limit;
}

long fd_rlimit(const uint64_t *want, uint64_t *old)
{
	struct fdtable *t = table();
	if (old)
		old[0] = t->nofile_soft, old[1] = t->nofile_hard;
	if (!want)
		return 0;
	if (want[0] > want[1])
		return -EINVAL;
	if (want[1] > t->nofile_hard)
		return -EPERM;
	t->nofile_soft = want[0] < MAX_FDS ? want[0] : MAX_FDS, t->nofile_hard = want[1];
	return 0;
}

int fd_close(long fd)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	table()->fd[fd] = 0;
	lock_fd_closed(f, current->proc->pid);
	file_put(f);
	return 0;
}

int fd_cloexec(long fd, int set)
{
	if (!fd_get(fd))
		return -EBADF;
	if (set >= 0)
		table()->cloexec[fd] = !!set;
	return table()->cloexec[fd];
}

struct fdtable *fd_table_new(void)
{
	struct fdtable *t = kalloc(sizeof *t);
	if (!t)
		return 0;
	t->nofile_soft = t->nofile_hard = (uint64_t)boot_limit;
	static const int mode[3] = { 0, 1, 1 }; /* O_RDONLY, O_WRONLY, O_WRONLY */
	for (int fd = 0; fd < 3; fd++) {
		struct file *f = file_new(FILE_CONSOLE);
		if (!f)
			panic("out of memory for the console files");
		f->dev = fd;
		f->flags = mode[fd];
		t->fd[fd] = f;
	}
	return t;
}

struct fdtable *fd_table_copy(const struct fdtable *from)
{
	struct fdtable *t = kalloc(sizeof *t);
	if (!t)
		return 0;
	*t = *from;
	for (int fd = 0; fd < MAX_FDS; fd++)
		if (t->fd[fd])
			t->fd[fd]->refs++;
	return t;
}

void fd_table_free(struct fdtable *t)
{
	for (int fd = 0; fd < MAX_FDS; fd++)
		if (t->fd[fd]) {
			struct file *f = t->fd[fd];
			t->fd[fd] = 0;
			file_put(f);
		}
	kfree(t, sizeof *t);
}

void fd_close_on_exec(void)
{
	struct fdtable *t = table();
	for (int fd = 0; fd < MAX_FDS; fd++)
		if (t->fd[fd] && t->cloexec[fd])
			fd_close(fd);
}

