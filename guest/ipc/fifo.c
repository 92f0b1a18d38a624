/* SPDX-License-Identifier: GPL-2.0-only */
/* Named pipes (fifo.h), as Linux: one pipe per FIFO node, made at its first
 * open and gone with its last close (unread bytes with it).  Opening one
 * end waits for the other (O_RDWR never waits); a non-blocking open for
 * writing with no reader fails with ENXIO. */
#include <errno.h>
#include "ipc/fifo.h"
#include "ipc/pipe.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"

struct fifo {
	struct fifo *next;
	struct mount *m;
	uint32_t ino;
	struct pipe *p;
	unsigned read_opens, write_opens; /* ever: an open waiting sees the other end come, even if it went */
};

static struct fifo *fifos;

/* One end (or both, or none: an open that failed) closed; the pipe and the
 * fifo go with the last. */
static void fifo_drop(struct fifo *q, int reader, int writer)
{
	q->p->readers -= reader, q->p->writers -= writer;
	stream_changed();
	if (q->p->readers || q->p->writers)
		return;
	for (struct fifo **pp = &fifos; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	pipe_free(q->p);
	kfree(q, sizeof *q);
}

static unsigned poll_both(struct file *f, uint64_t *deadline)
{
	return pipe_end_poll_read(f, deadline) | pipe_end_poll_write(f, deadline);
}

static void release_read(struct file *f)
{
	fifo_drop(f->priv, 1, 0);
}

static void release_write(struct file *f)
{
	fifo_drop(f->priv, 0, 1);
}

static void release_both(struct file *f)
{
	fifo_drop(f->priv, 1, 1);
}

static struct pipe *ring_of(struct file *f)
{
	return ((struct fifo *)f->priv)->p;
}

static const struct stream_ops read_ops = {
	.name = "pipe", .type = S_IFIFO, .read = pipe_end_read, .poll = pipe_end_poll_read,
	.release = release_read, .pipe = ring_of,
};
static const struct stream_ops write_ops = {
	.name = "pipe", .type = S_IFIFO, .write = pipe_end_write, .poll = pipe_end_poll_write,
	.release = release_write, .pipe = ring_of,
};
static const struct stream_ops both_ops = {
	.name = "pipe", .type = S_IFIFO, .read = pipe_end_read, .write = pipe_end_write,
	.poll = poll_both, .release = release_both, .pipe = ring_of,
};

static struct fifo *fifo_of(struct mount *m, uint32_t ino)
{
	for (struct fifo *q = fifos; q; q = q->next)
		if (q->m == m && q->ino == ino)
			return q;
	struct fifo *q = kalloc(sizeof *q);
	if (!q || !(q->p = pipe_new(PIPE_SIZE))) {
		kfree(q, sizeof *q);
		return 0;
	}
	q->m = m, q->ino = ino;
	q->p->readers = q->p->writers = 0; /* counted as ends open */
	q->next = fifos, fifos = q;
	return q;
}

long fifo_open(struct mount *m, uint32_t ino, int flags)
{
	struct fifo *q = fifo_of(m, ino);
	if (!q)
		return -ENOMEM;
	int acc = flags & O_ACCMODE, reader = acc != O_WRONLY, writer = acc != O_RDONLY;
	if (acc == O_WRONLY && !q->p->readers && (flags & O_NONBLOCK)) {
		fifo_drop(q, 0, 0);
		return -ENXIO;
	}
	q->p->readers += reader, q->p->writers += writer;
	q->read_opens += reader, q->write_opens += writer;
	stream_changed();
	unsigned seen = reader ? q->write_opens : q->read_opens;
	while (!(flags & O_NONBLOCK) && reader != writer &&
	       (reader ? !q->p->writers && q->write_opens == seen : !q->p->readers && q->read_opens == seen))
		if (stream_wait(0) == -EINTR) {
			fifo_drop(q, reader, writer);
			return -ERESTARTSYS;
		}
	long fd = stream_open(reader && writer ? &both_ops : reader ? &read_ops : &write_ops, q, flags);
	if (fd < 0)
		fifo_drop(q, reader, writer);
	return fd;
}
