/* SPDX-License-Identifier: GPL-2.0-only */
/* Advisory file locks (lock.h), as Linux keeps them: POSIX record locks
 * (fcntl F_SETLK/F_SETLKW/F_GETLK) owned by a process, over byte ranges,
 * released when the process closes any fd of the file or ends; and flock
 * locks owned by an open file, released with its last close.  The two kinds
 * do not see each other.  A wait is on the one I/O wait queue (stream.h):
 * any release wakes the waiters to look again. */
#include <errno.h>
#include <stdint.h>
#include "fs/file.h"
#include "fs/lock.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/process.h"
#include "proc/sched.h"

#define END UINT64_MAX /* a lock to the end of the file, however long it grows */

struct lock {
	struct lock *next;
	struct mount *m;
	uint32_t ino;
	int posix;            /* a record lock (owner: pid), or a flock (owner: file) */
	int pid;
	const struct file *file;
	int type;             /* F_RDLCK, F_WRLCK */
	uint64_t start, end;  /* bytes start..end, end included */
};

/* struct flock as the program passes it */
struct flock_k {
	int16_t type, whence;
	int32_t pad0;
	int64_t start, len;
	int32_t pid, pad1;
};

static struct lock *locks;

static int same_owner(const struct lock *l, int posix, int pid, const struct file *f)
{
	return l->posix == posix && (posix ? l->pid == pid : l->file == f);
}

/* The first lock of another owner of this kind over [start, end] that a
 * lock of type would conflict with (two read locks never do). */
static struct lock *conflict(struct mount *m, uint32_t ino, int posix, int pid, const struct file *f, int type,
			     uint64_t start, uint64_t end)
{
	for (struct lock *l = locks; l; l = l->next)
		if (l->m == m && l->ino == ino && l->posix == posix && !same_owner(l, posix, pid, f) &&
		    l->start <= end && start <= l->end && (type == F_WRLCK || l->type == F_WRLCK))
			return l;
	return 0;
}

static struct lock *lock_new(const struct lock *from, int type, uint64_t start, uint64_t end)
{
	struct lock *l = kalloc(sizeof *l);
	if (l) {
		*l = *from;
		l->type = type, l->start = start, l->end = end;
		l->next = locks, locks = l;
	}
	return l;
}

/* The owner's locks leave [start, end]; a lock across one of its ends is
 * cut, one across both is split in two (-ENOMEM when that cannot be). */
static int clear_range(struct mount *m, uint32_t ino, int posix, int pid, const struct file *f, uint64_t start,
		       uint64_t end)
{
	for (struct lock **pp = &locks; *pp;) {
		struct lock *l = *pp;
		if (l->m != m || l->ino != ino || !same_owner(l, posix, pid, f) || l->end < start || end < l->start) {
			pp = &l->next;
			continue;
		}
		if (l->start < start && l->end > end) { /* the range is inside: two pieces stay */
			if (!lock_new(l, l->type, end + 1, l->end))
				return -ENOMEM;
			l->end = start - 1;
			return 0;
		}
		if (l->start < start) {
			l->end = start - 1;
		} else if (l->end > end) {
			l->start = end + 1;
		} else {
			*pp = l->next;
			kfree(l, sizeof *l);
			continue;
		}
		pp = &l->next;
	}
	return 0;
}

/* Would a wait by this process for a lock held by holder close a cycle
 * (the holder waits, perhaps through others, for one of ours)? */
static int deadlock(int holder)
{
	for (int hops = 0; holder && hops < 64; hops++) {
		struct process *p = process_by_pid(holder);
		if (!p)
			return 0;
		if (p == current->proc)
			return 1;
		holder = p->lock_wait_for;
	}
	return 0;
}

/* Takes a lock (type F_UNLCK: releases) for this owner, waiting for
 * conflicting ones to go when wait is set. */
static long set_lock(struct file *f, int posix, int type, uint64_t start, uint64_t end, int wait)
{
	int pid = current->proc->pid;
	struct lock me = { 0, f->m, f->ino, posix, posix ? pid : 0, posix ? 0 : f, type, start, end };
	if (type == F_UNLCK) {
		long r = clear_range(f->m, f->ino, posix, me.pid, me.file, start, end);
		stream_changed();
		return r;
	}
	for (;;) {
		struct lock *c = conflict(f->m, f->ino, posix, me.pid, me.file, type, start, end);
		if (!c)
			break;
		if (!wait)
			return -EAGAIN;
		if (posix && deadlock(c->pid))
			return -EDEADLK;
		current->proc->lock_wait_for = posix ? c->pid : 0;
		int r = stream_wait(0);
		current->proc->lock_wait_for = 0;
		if (r == -EINTR)
			return -ERESTARTSYS;
	}
	long r = clear_range(f->m, f->ino, posix, me.pid, me.file, start, end);
	if (!r && !lock_new(&me, type, start, end))
		r = -ENOMEM;
	stream_changed(); /* a write lock made a read lock: readers may go on */
	return r;
}

/* The byte range a struct flock names, from whence. */
static long range_of(struct file *f, const struct flock_k *k, uint64_t *start, uint64_t *end)
{
	int64_t base = 0;
	if (k->whence == SEEK_CUR)
		base = (int64_t)f->pos;
	else if (k->whence == SEEK_END) {
		struct fs_stat st;
		int r = f->m->ops->stat(f->m->fs, f->ino, &st);
		if (r)
			return r;
		base = (int64_t)st.size;
	} else if (k->whence != SEEK_SET)
		return -EINVAL;
	int64_t s = base + k->start;
	if (k->len < 0) { /* the bytes before start */
		if (s + k->len < 0)
			return -EINVAL;
		*start = (uint64_t)(s + k->len), *end = (uint64_t)s - 1;
		return 0;
	}
	if (s < 0)
		return -EINVAL;
	*start = (uint64_t)s;
	*end = k->len ? (uint64_t)s + (uint64_t)k->len - 1 : END;
	return 0;
}

long lock_fcntl(struct file *f, long cmd, void *arg)
{
	struct flock_k *k = arg;
	if (!user_ok(k, sizeof *k))
		return -EFAULT;
	if (f->kind != FILE_FS || f->is_dir)
		return cmd == F_GETLK ? -EINVAL : -EBADF; /* pipes and the like: Linux locks their inode; here none */
	if (k->type != F_RDLCK && k->type != F_WRLCK && k->type != F_UNLCK)
		return -EINVAL;
	uint64_t start, end;
	long r = range_of(f, k, &start, &end);
	if (r)
		return r;
	int acc = f->flags & O_ACCMODE;
	if (cmd == F_GETLK) {
		struct lock *c = k->type == F_UNLCK ? 0 :
				 conflict(f->m, f->ino, 1, current->proc->pid, 0, k->type, start, end);
		if (!c) {
			k->type = F_UNLCK;
			return 0;
		}
		k->type = (int16_t)c->type, k->whence = SEEK_SET;
		k->start = (int64_t)c->start, k->len = c->end == END ? 0 : (int64_t)(c->end - c->start + 1);
		k->pid = c->pid;
		return 0;
	}
	if ((k->type == F_RDLCK && acc == O_WRONLY) || (k->type == F_WRLCK && acc == O_RDONLY))
		return -EBADF;
	return set_lock(f, 1, k->type, start, end, cmd == F_SETLKW);
}

long lock_flock(struct file *f, long op)
{
	int nb = (op & LOCK_NB) != 0;
	op &= ~(long)LOCK_NB;
	if (op != LOCK_SH && op != LOCK_EX && op != LOCK_UN)
		return -EINVAL;
	if (f->kind != FILE_FS)
		return 0; /* nothing else can be shared between processes by name */
	int type = op == LOCK_SH ? F_RDLCK : op == LOCK_EX ? F_WRLCK : F_UNLCK;
	if (type != F_UNLCK) /* a conversion is not atomic, as Linux's */
		set_lock(f, 0, F_UNLCK, 0, END, 0);
	return set_lock(f, 0, type, 0, END, !nb);
}

/* The whole file never splits a lock: these cannot fail. */
void lock_fd_closed(const struct file *f, int pid)
{
	if (f->kind == FILE_FS && !clear_range(f->m, f->ino, 1, pid, 0, 0, END))
		stream_changed();
}

void lock_file_released(const struct file *f)
{
	if (f->kind == FILE_FS && !clear_range(f->m, f->ino, 0, 0, f, 0, END))
		stream_changed();
}

void lock_process_ended(int pid)
{
	for (struct lock **pp = &locks; *pp;) {
		struct lock *l = *pp;
		if (l->posix && l->pid == pid) {
			*pp = l->next;
			kfree(l, sizeof *l);
		} else {
			pp = &l->next;
		}
	}
	stream_changed();
}
