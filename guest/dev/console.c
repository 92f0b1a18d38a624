/* SPDX-License-Identifier: GPL-2.0-only */
/* fds 0, 1 and 2 over virtio consoles (virtio 1.x, 5.3), one single-port
 * console each, so stdout and stderr stay apart on the host.  A device is
 * brought up on first use with only the queue its fd needs: every register
 * access is an exit, ~0.1-0.2 ms on kvm_pvm.  A receive completed with length
 * 0 is end of input (husk's convention; the console has no EOF of its own).
 * Input goes through a kernel buffer the VMM holds until input comes (never
 * the program's: a read that ends by a signal must not be written later):
 * the reading thread blocks and the others run; the scheduler's look at
 * events (console_poll) notices the answer, and asks again every 10 ms while
 * the VM is busy (a sleeping VM's host thread watches stdin itself). */
#include <errno.h>
#include <string.h>
#include "husk/virtio_console.h"
#include "kernel.h"
#include "dev/virtio.h"
#include "ipc/stream.h"

#define CHUNK (1u << 20)     /* bytes per transmit request */
#define RX_SIZE (256u << 10) /* the input buffer */
#define RX_ASK_NS 10000000ull /* while busy, the VMM is asked again this often */

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

void console_bring_up(void)
{
	for (int fd = 0; fd < 3; fd++)
		console_for(fd);
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
			k = (uint32_t)virtq_span(p, k, VQ_SIZE);
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

static struct {
	char *buf;
	uint32_t len, off; /* bytes in buf; taken so far */
	int posted, eof;
	uint64_t asked;    /* when the VMM last looked for input */
} rx;

/* The VMM's answer to the posted buffer, if it came: 1. */
static int rx_collect(struct console *c)
{
	uint32_t len;
	if (!rx.posted || !virtq_done(&c->q, &len))
		return 0;
	rx.posted = 0, rx.off = 0;
	rx.len = len <= RX_SIZE ? len : 0; /* a longer length is a broken VMM: end of input */
	rx.eof = rx.len == 0;
	return 1;
}

static void rx_post(struct console *c)
{
	struct vbuf b = { rx.buf, RX_SIZE, 1 };
	rx.posted = 1;
	rx.asked = clock_mono_ns();
	virtq_post(&c->dev, &c->q, &b, 1);
}

uint64_t console_poll_deadline(void)
{
	return rx.posted ? rx.asked + RX_ASK_NS : 0;
}

void console_poll(void)
{
	struct console *c = rx.posted ? console_for(0) : 0;
	if (!c)
		return;
	uint64_t now = clock_mono_ns();
	if (!rx_collect(c) && now - rx.asked >= RX_ASK_NS) {
		rx.asked = now;
		virtq_kick(&c->dev, &c->q);
		rx_collect(c);
	}
	if (!rx.posted)
		stream_changed(); /* a reader or poller looks again */
}

/* What is there to read, or end of input; else the buffer is posted. */
static int rx_ready(struct console *c)
{
	if (!rx.buf && !(rx.buf = kalloc(RX_SIZE)))
		return -ENOMEM;
	rx_collect(c);
	if (rx.off < rx.len || rx.eof)
		return 1;
	if (!rx.posted) {
		rx_post(c); /* the VMM may answer at once */
		return rx_collect(c);
	}
	return 0;
}

unsigned console_readable(void)
{
	struct console *c = console_for(0);
	return c && rx_ready(c) != 0;
}

long console_read(int fd, void *buf, size_t len, int nonblock)
{
	struct console *c = fd == 0 ? console_for(fd) : 0;
	if (!c)
		return -EBADF;
	if (!len)
		return 0;
	int r;
	while (!(r = rx_ready(c))) {
		if (nonblock)
			return -EAGAIN;
		if (stream_wait(0) == -EINTR)
			return -ERESTARTSYS;
	}
	if (r < 0)
		return r;
	if (rx.eof && rx.off >= rx.len) {
		rx.eof = 0; /* once: a terminal may give more after a Ctrl-D */
		return 0;
	}
	size_t n = len < rx.len - rx.off ? len : rx.len - rx.off;
	memcpy(buf, rx.buf + rx.off, n);
	rx.off += n;
	return (long)n;
}
