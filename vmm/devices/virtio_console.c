/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "sandbox/stop.h"
#include "devices/host_fd.h"
#include "devices/virtio_console.h"

/* Whole buffer to the host fd.  Gives up when a stop is requested (checked
 * before every write: one that blocks on a reader that never reads ends
 * only by the next timer signal) or the reader went away. */
static int write_all(struct console *c, const uint8_t *p, size_t n)
{
	while (n && !c->out_closed) {
		if (stop_now())
			return -1;
		ssize_t k = write(c->out_fd, p, n);
		if (k > 0) {
			p += k, n -= k;
			c->bytes_out += k;
		} else if (k < 0 && errno == EINTR) {
			continue;
		} else if (k < 0 && errno == EAGAIN) {
			host_fd_wait(c->out_fd, 1, -1);
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

int console_input(struct console *c, const char **err)
{
	if (!c->rx_held)
		return 0;
	struct virtq_seg *s = &c->rx.seg[0];
	ssize_t got = 0;
	if (s->writable && c->in_fd >= 0) {
		if (!host_fd_wait(c->in_fd, 0, 0))
			return 0; /* nothing yet: keep it */
		got = read(c->in_fd, s->ptr, s->len);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (got < 0)
			got = 0; /* an error ends the input */
	}
	c->rx_held = 0;
	return virtq_push(&c->mmio.q[VIRTIO_CONSOLE_RECEIVEQ], c->rx.head, (uint32_t)got, err);
}

/* One buffer at a time is taken and held (console_input); a notify while
 * one is held only looks for input again. */
static int receive(struct console *c, const char **err)
{
	if (!c->rx_held) {
		struct virtq *q = &c->mmio.q[VIRTIO_CONSOLE_RECEIVEQ];
		int r = virtq_begin(q, err);
		if (r > 0)
			r = virtq_pop(q, c->mmio.mem, &c->rx, err);
		if (r <= 0)
			return r;
		c->rx_held = 1;
	}
	return console_input(c, err);
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

void console_save(const struct console *c, struct virtio_mmio_state *s)
{
	virtio_mmio_save(&c->mmio, s);
	if (c->rx_held)
		s->q[VIRTIO_CONSOLE_RECEIVEQ].last_avail--;
}
