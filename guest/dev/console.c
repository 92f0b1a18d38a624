/* SPDX-License-Identifier: GPL-2.0-only */
/* fds 0, 1 and 2 over virtio consoles (virtio 1.x, 5.3), one single-port
 * console each, so stdout and stderr stay apart on the host.  A device is
 * brought up on first use with only the queue its fd needs: every register
 * access is an exit, ~0.1-0.2 ms on kvm_pvm.  A receive completed with length
 * 0 is end of input (husk's convention; the console has no EOF of its own). */
#include <errno.h>
#include "husk/virtio_console.h"
#include "kernel.h"
#include "dev/virtio.h"

#define CHUNK (1u << 20) /* bytes per transmit request */

static struct console {
	struct virtio_dev dev;
	struct virtq q __attribute__((aligned(64)));
} consoles[3];

static struct console *console_for(int fd)
{
	for (int i = 0; i < 3; i++) {
		struct console_info *ci = &boot.console[i];
		if (!ci->mmio || ci->fd != fd)
			continue;
		struct console *c = &consoles[i];
		if (!c->dev.ready) {
			c->dev.mmio = ci->mmio;
			c->q.index = fd == 0 ? VIRTIO_CONSOLE_RECEIVEQ : VIRTIO_CONSOLE_TRANSMITQ;
			if (virtio_init(&c->dev, &c->q, 1, 0))
				panic("virtio console at %lx did not initialize", (unsigned long)ci->mmio);
		}
		return c;
	}
	return 0;
}

long console_writev(int fd, const struct kiovec *iov, int n)
{
	struct console *c = fd == 1 || fd == 2 ? console_for(fd) : 0;
	if (!c)
		return -EBADF;
	long total = 0;
	for (int i = 0; i < n; i++) {
		const char *p = iov[i].base;
		size_t left = iov[i].len;
		while (left) {
			uint32_t k = left < CHUNK ? (uint32_t)left : CHUNK;
			struct vbuf b = { p, k, 0 };
			virtq_request(&c->dev, &c->q, &b, 1);
			p += k, left -= k, total += k;
		}
	}
	return total;
}

long console_write(int fd, const void *buf, size_t len)
{
	struct kiovec v = { buf, len };
	return console_writev(fd, &v, 1);
}

long console_read(int fd, void *buf, size_t len)
{
	struct console *c = fd == 0 ? console_for(fd) : 0;
	if (!c)
		return -EBADF;
	if (!len)
		return 0;
	struct vbuf b = { buf, len < CHUNK ? (uint32_t)len : CHUNK, 1 };
	uint32_t got = virtq_request(&c->dev, &c->q, &b, 1);
	return got <= b.len ? (long)got : -EIO;
}
