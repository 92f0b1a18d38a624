/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "sandbox/stop.h"
#include "devices/virtio_console.h"

/* Whole buffer to the host fd.  Gives up when a stop is requested (checked
 * before every write: one that blocks on a reader that never reads ends
 * only by the next timer signal) or the reader went away. */
static int write_all(struct console *c, const uint8_t *p, size_t n)
{
	while (n && !c->out_closed) {
		if (stop_requested())
			return -1;
		ssize_t k = write(c->out_fd, p, n);
		if (k > 0) {
			p += k, n -= k;
			c->bytes_out += k;
		} else if (k < 0 && errno == EINTR) {
			continue;
		} else if (k < 0 && errno == EAGAIN) {
			struct pollfd pf = { c->out_fd, POLLOUT, 0 };
			poll(&pf, 1, -1);
		} else {
			c->out_closed = 1;
			if (errno == EPIPE)
				stop_request(STOP_PIPE);
			return -1;
		}
	}
	return 0;
}

/* What may still be written of n bytes under the output limit. */
static size_t within_limit(struct console *c, size_t n)
{
	struct output_limit *l = c->limit;
	if (!l)
		return n;
	uint64_t room = l->used >= l->limit ? 0 : l->limit - l->used;
	if (n > room)
		n = room;
	l->used += n;
	return n;
}

/* The program wrote past the output limit: the run ends (as RLIMIT_FSIZE
 * ends a process), with one marker line on stderr. */
static void limit_reached(struct console *c)
{
	struct output_limit *l = c->limit;
	stop_request(STOP_OUTPUT);
	if (l->cut)
		return;
	l->cut = 1;
	char msg[128];
	int k = snprintf(msg, sizeof msg, "\nhusk: output limit of %llu bytes reached; run stopped\n",
			 (unsigned long long)l->limit);
	if (write(2, msg, k) < 0) {
		/* nowhere left to say it */
	}
}

/* A chain's device-readable bytes to the host, up to the output limit.
 * Nothing is written into it. */
static long send_chain(void *priv, struct virtq_chain *ch, const char **err)
{
	struct console *c = priv;
	(void)err; /* what the host does with the output is no fault of the guest's */
	for (int i = 0; i < ch->n && c->out_fd >= 0; i++) {
		if (ch->seg[i].writable)
			continue;
		size_t n = within_limit(c, ch->seg[i].len);
		if (write_all(c, ch->seg[i].ptr, n))
			return 0;
		if (n < ch->seg[i].len) {
			limit_reached(c);
			return 0;
		}
	}
	return 0;
}

/* Up to n bytes of input; 0 (end of input) on an error or a stop request. */
static ssize_t read_some(struct console *c, uint8_t *p, size_t n)
{
	while (!stop_requested()) {
		ssize_t got = read(c->in_fd, p, n);
		if (got >= 0)
			return got;
		if (errno == EAGAIN) {
			struct pollfd pf = { c->in_fd, POLLIN, 0 };
			poll(&pf, 1, -1);
		} else if (errno != EINTR) {
			break;
		}
	}
	return 0;
}

/* One posted buffer per notify: the guest waits for it, and a blocking read
 * must not wait for input it did not ask for yet. */
static int receive(struct console *c, const char **err)
{
	struct virtq *q = &c->mmio.q[VIRTIO_CONSOLE_RECEIVEQ];
	struct virtq_chain *ch = &c->mmio.chain;
	int r = virtq_begin(q, err);
	if (r > 0)
		r = virtq_pop(q, c->mmio.mem, ch, err);
	if (r <= 0)
		return r;
	ssize_t got = ch->seg[0].writable && c->in_fd >= 0 ? read_some(c, ch->seg[0].ptr, ch->seg[0].len) : 0;
	return virtq_push(q, ch->head, (uint32_t)got, err);
}

static int console_notify(struct virtio_mmio *d, int q, const char **err)
{
	return q == VIRTIO_CONSOLE_TRANSMITQ ? virtio_mmio_serve(d, q, send_chain, err) : receive(d->priv, err);
}

static const struct virtio_device_ops console_ops = { .notify = console_notify };

void console_init(struct console *c, uint64_t base, const struct guest_mem *m, int in_fd, int out_fd)
{
	memset(c, 0, sizeof *c);
	c->in_fd = in_fd;
	c->out_fd = out_fd;
	struct virtio_device dev = {
		.id = VIRTIO_ID_CONSOLE,
		.nqueues = 2,
		.config = &c->config,
		.config_len = sizeof c->config,
		.ops = &console_ops,
		.priv = c,
	};
	virtio_mmio_init(&c->mmio, base, m, &dev);
}
