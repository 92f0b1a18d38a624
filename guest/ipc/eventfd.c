/* SPDX-License-Identifier: GPL-2.0-only */
/* eventfd (eventfd.h), as Linux: a write adds to the counter and a read
 * takes it all (or, with EFD_SEMAPHORE, 1 of it); a read of 0 waits for a
 * write, a write that would pass the maximum waits for a read. */
#include <errno.h>
#include <string.h>
#include "ipc/eventfd.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"

/* <sys/eventfd.h>: the other two flags are O_CLOEXEC and O_NONBLOCK */
#define EFD_SEMAPHORE 1
#define EVENTFD_MAX   0xfffffffffffffffeull /* all ones is the overflow mark, never stored */

struct eventfd {
	uint64_t count;
	int semaphore;
};

static long eventfd_read(struct file *f, void *buf, size_t len)
{
	struct eventfd *e = f->priv;
	if (len < sizeof e->count)
		return -EINVAL;
	while (!e->count) {
		int r = stream_block(f);
		if (r)
			return r;
	}
	uint64_t v = e->semaphore ? 1 : e->count;
	e->count -= v;
	stream_changed(); /* writers waiting for room */
	memcpy(buf, &v, sizeof v);
	return sizeof v; /* never more, whatever len was */
}

static long eventfd_write(struct file *f, const void *buf, size_t len)
{
	struct eventfd *e = f->priv;
	uint64_t v;
	if (len < sizeof v)
		return -EINVAL;
	memcpy(&v, buf, sizeof v);
	if (v == ~0ull)
		return -EINVAL;
	while (v > EVENTFD_MAX - e->count) {
		int r = stream_block(f);
		if (r)
			return r;
	}
	e->count += v;
	stream_changed();
	return sizeof v;
}

static unsigned eventfd_poll(struct file *f, uint64_t *deadline)
{
	const struct eventfd *e = f->priv;
	(void)deadline; /* only a read or a write changes it */
	return (e->count ? POLLIN : 0) | (e->count < EVENTFD_MAX ? POLLOUT : 0);
}

static void eventfd_release(struct file *f)
{
	kfree(f->priv, sizeof(struct eventfd));
}

static const struct stream_ops eventfd_ops = {
	.name = "anon_inode:[eventfd]", .read = eventfd_read, .write = eventfd_write,
	.poll = eventfd_poll, .release = eventfd_release,
};

long sys_eventfd2(unsigned initval, long lflags)
{
	int flags = (int)lflags; /* an int in Linux: the upper half is not looked at */
	if (flags & ~(EFD_SEMAPHORE | O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	struct eventfd *e = kalloc(sizeof *e);
	if (!e)
		return -ENOMEM;
	e->count = initval;
	e->semaphore = (flags & EFD_SEMAPHORE) != 0;
	long fd = stream_open(&eventfd_ops, e, O_RDWR | (flags & (O_CLOEXEC | O_NONBLOCK)));
	if (fd < 0)
		kfree(e, sizeof *e);
	return fd;
}

/* The old call, without flags. */
long sys_eventfd(unsigned initval)
{
	return sys_eventfd2(initval, 0);
}
