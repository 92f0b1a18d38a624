/* SPDX-License-Identifier: GPL-2.0-only */
/* Stream files (stream.h). */
#include <errno.h>
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/futex.h"
#include "proc/sched.h"

static uint32_t io_queue; /* its address is the wait key (never a program's) */

long stream_open(const struct stream_ops *ops, void *priv, int flags)
{
	struct file *f = file_new(FILE_STREAM);
	if (!f)
		return -ENOMEM;
	f->ops = ops, f->priv = priv;
	f->flags = flags & (O_ACCMODE | O_NONBLOCK);
	int fd = fd_install(f, 0, (flags & O_CLOEXEC) != 0);
	if (fd < 0) {
		f->priv = 0; /* the caller still owns priv */
		f->ops = 0;
		file_put(f);
	}
	return fd;
}

struct file *stream_get(long fd, const struct stream_ops *ops)
{
	struct file *f = fd_get(fd);
	return f && f->kind == FILE_STREAM && (!ops || f->ops == ops) ? f : 0;
}

int stream_wait(uint64_t deadline)
{
	current->futex = &io_queue, current->futex_at = 0;
	current->futex_bitset = ~0u;
	return sched_block(deadline, 1);
}

void stream_changed(void)
{
	futex_wake(&io_queue, 1l << 30);
}

int stream_block(struct file *f)
{
	if (f->flags & O_NONBLOCK)
		return -EAGAIN;
	return stream_wait(0) == -EINTR ? -ERESTARTSYS : 0;
}
