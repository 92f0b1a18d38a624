/* SPDX-License-Identifier: GPL-2.0-only */
/* Pipes (pipe.h), as Linux: a read of an empty pipe waits for a writer's
 * data or its last close (then 0); a write to a pipe without readers raises
 * SIGPIPE and fails with EPIPE; writes up to PIPE_BUF are not split. */
#include <errno.h>
#include <string.h>
#include "ipc/pipe.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/signal.h"

struct pipe *pipe_new(uint32_t size)
{
	struct pipe *p = kalloc(sizeof *p);
	if (p)
		p->size = size;
	if (p && !(p->buf = kalloc(size))) {
		kfree(p, sizeof *p);
		p = 0;
	}
	if (p)
		p->readers = p->writers = 1;
	return p;
}

void pipe_free(struct pipe *p)
{
	kfree(p->buf, p->size);
	kfree(p, sizeof *p);
}

void pipe_drop(struct pipe *p, int reader)
{
	if (reader)
		p->readers--;
	else
		p->writers--;
	stream_changed();
	if (!p->readers && !p->writers)
		pipe_free(p);
}

long pipe_read(struct pipe *p, struct file *f, void *buf, size_t len, int peek)
{
	while (!p->len) {
		if (!p->writers || p->shut)
			return 0;
		int r = stream_block(f);
		if (r)
			return r;
	}
	size_t n = len < p->len ? len : p->len;
	size_t first = p->size - p->head < n ? p->size - p->head : n;
	memcpy(buf, p->buf + p->head, first);
	memcpy((char *)buf + first, p->buf, n - first);
	if (!peek) {
		p->head = (p->head + n) % p->size;
		p->len -= n;
		stream_changed();
	}
	return n;
}

long pipe_write(struct pipe *p, struct file *f, const void *buf, size_t len, int atomic)
{
	size_t done = 0;
	atomic = atomic || len <= PIPE_BUF;
	while (done < len) {
		if (!p->readers) {
			if (done)
				return done;
			signal_raise_thread(SIGPIPE);
			return -EPIPE;
		}
		size_t room = p->size - p->len;
		if (!room || (atomic && room < len)) {
			int r = stream_block(f);
			if (r)
				return done ? (long)done : r;
			continue;
		}
		size_t n = len - done < room ? len - done : room;
		uint32_t tail = (p->head + p->len) % p->size;
		size_t first = p->size - tail < n ? p->size - tail : n;
		memcpy(p->buf + tail, (const char *)buf + done, first);
		memcpy(p->buf, (const char *)buf + done + first, n - first);
		p->len += n;
		done += n;
		stream_changed();
	}
	return done;
}

unsigned pipe_poll_read(const struct pipe *p)
{
	return (p->len ? POLLIN | POLLRDNORM : 0) | (p->writers ? 0 : POLLHUP);
}

unsigned pipe_poll_write(const struct pipe *p)
{
	return !p->readers ? POLLERR : p->size - p->len >= PIPE_BUF ? POLLOUT | POLLWRNORM : 0;
}

/* The stream operations of a pipe's ends, and of a FIFO's: the ring is
 * the file's ops->pipe. */
long pipe_end_read(struct file *f, void *buf, size_t len)
{
	return pipe_read(f->ops->pipe(f), f, buf, len, 0);
}

long pipe_end_write(struct file *f, const void *buf, size_t len)
{
	return pipe_write(f->ops->pipe(f), f, buf, len, 0);
}

unsigned pipe_end_poll_read(struct file *f, uint64_t *deadline)
{
	(void)deadline;
	return pipe_poll_read(f->ops->pipe(f));
}

unsigned pipe_end_poll_write(struct file *f, uint64_t *deadline)
{
	(void)deadline;
	return pipe_poll_write(f->ops->pipe(f));
}

static void release_read_end(struct file *f)
{
	pipe_drop(f->priv, 1);
}

static void release_write_end(struct file *f)
{
	pipe_drop(f->priv, 0);
}

static struct pipe *ring_of(struct file *f)
{
	return f->priv;
}

static const struct stream_ops read_ops = {
	.name = "pipe", .type = S_IFIFO, .read = pipe_end_read, .poll = pipe_end_poll_read,
	.release = release_read_end, .pipe = ring_of,
};
static const struct stream_ops write_ops = {
	.name = "pipe", .type = S_IFIFO, .write = pipe_end_write, .poll = pipe_end_poll_write,
	.release = release_write_end, .pipe = ring_of,
};

/* A new capacity: a power of two pages, up to Linux's pipe-max-size; not
 * below the bytes held (EBUSY). */
static long resize(struct pipe *p, unsigned long want)
{
	if (want > PIPE_MAX_SIZE)
		return -EPERM;
	uint32_t size = 4096;
	while (size < want)
		size <<= 1;
	if (size == p->size)
		return size;
	if (size < p->len)
		return -EBUSY;
	char *buf = kalloc(size);
	if (!buf)
		return -ENOMEM;
	size_t first = p->size - p->head < p->len ? p->size - p->head : p->len;
	memcpy(buf, p->buf + p->head, first);
	memcpy(buf + first, p->buf, p->len - first);
	kfree(p->buf, p->size);
	p->buf = buf, p->size = size, p->head = 0;
	stream_changed();
	return size;
}

long pipe_size_fcntl(struct file *f, int set, unsigned long want)
{
	struct pipe *p = f->kind == FILE_STREAM && f->ops && f->ops->pipe ? f->ops->pipe(f) : 0;
	if (!p)
		return -EBADF;
	return set ? resize(p, want) : (long)p->size;
}

long sys_pipe2(int *fds, long flags)
{
	if (flags & ~(long)(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	if (!user_ok(fds, 2 * sizeof(int)))
		return -EFAULT;
	struct pipe *p = pipe_new(PIPE_SIZE);
	if (!p)
		return -ENOMEM;
	long r = stream_open(&read_ops, p, O_RDONLY | (int)flags);
	if (r < 0) {
		p->readers = p->writers = 1;
		pipe_drop(p, 1), pipe_drop(p, 0);
		return r;
	}
	long w = stream_open(&write_ops, p, O_WRONLY | (int)flags);
	if (w < 0) {
		pipe_drop(p, 0);
		fd_close(r);
		return w;
	}
	fds[0] = (int)r, fds[1] = (int)w;
	return 0;
}
