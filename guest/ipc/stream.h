/* SPDX-License-Identifier: GPL-2.0-only */
/* Files that are not in a file system: pipes, Unix socket pairs, eventfds,
 * timerfds, epoll instances.  Each kind is a struct stream_ops; a task that
 * must wait for one blocks on the one I/O wait queue, and every change of
 * any stream wakes that queue's tasks to look again (a handful of tasks in
 * one VM: simpler than a queue per object, and as fast in practice). */
#ifndef GUEST_STREAM_H
#define GUEST_STREAM_H
#include <stddef.h>
#include <stdint.h>
#include "fs/file.h"

#define POLLIN   0x001
#define POLLPRI  0x002
#define POLLOUT  0x004
#define POLLERR  0x008
#define POLLHUP  0x010
#define POLLNVAL 0x020
#define POLLRDNORM 0x040
#define POLLWRNORM 0x100
#define POLLRDHUP 0x2000

struct stream_ops {
	const char *name;  /* for /proc-style links: "pipe", "socket", "anon_inode:[eventfd]" */
	uint32_t type;     /* st_mode's file type: S_IFIFO, S_IFSOCK, 0 (an anonymous inode) */
	/* Both may block (stream_wait) unless the file is O_NONBLOCK; buf has
	 * been checked with user_ok.  NULL: the file cannot (-EINVAL). */
	long (*read)(struct file *f, void *buf, size_t len);
	long (*write)(struct file *f, const void *buf, size_t len);
	/* The POLL* events ready now; *deadline (monotonic ns), when they may
	 * change without any system call (a timer), else left alone. */
	unsigned (*poll)(struct file *f, uint64_t *deadline);
	void (*release)(struct file *f); /* the last close */
	struct pipe *(*pipe)(struct file *f); /* a pipe's or FIFO's ring (F_SETPIPE_SZ); NULL: none */
	const struct socket_calls *sock;      /* a socket's family's calls (net/socket.h); NULL: no socket */
};
struct pipe;
struct socket_calls;

/* A new fd for a stream file: -EMFILE / -ENOMEM, or the fd.  flags: the
 * open flags it reports (access mode, O_NONBLOCK); O_CLOEXEC taken from it. */
long stream_open(const struct stream_ops *ops, void *priv, int flags);
/* The stream file behind fd, if it is of this kind (ops NULL: any stream). */
struct file *stream_get(long fd, const struct stream_ops *ops);
/* Blocks until some stream changes, the deadline (0: none) or a signal:
 * 0, -ETIMEDOUT or -EINTR. */
int stream_wait(uint64_t deadline);
/* A stream changed: every waiter looks again. */
void stream_changed(void);
/* read/write's common start: -EAGAIN for a non-blocking file, else waits
 * (-ERESTARTSYS when a signal comes: EINTR, or the call made again). */
int stream_block(struct file *f);
#endif
