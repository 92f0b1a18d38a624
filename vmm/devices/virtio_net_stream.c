/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "devices/host_fd.h"
#include "devices/virtio_net_stream.h"
#include "sandbox/stop.h"

#define HDR sizeof(struct husk_net_hdr)

static void broker_gone(struct net_stream *n)
{
	if (n->broker_fd >= 0)
		close(n->broker_fd);
	n->broker_fd = -1;
	n->held = 0;
}

/* One chain of the transmit queue: one message, to the broker whole,
 * written from guest memory (the header is copied out first: what is
 * checked is what is sent; the payload is the guest's business). */
static long transmit(void *priv, struct virtq_chain *c, const char **err)
{
	struct net_stream *n = priv;
	struct iovec v[VIRTQ_MAX_SIZE + 1];
	struct husk_net_hdr h;
	size_t len = 0, got = 0;
	int nv = 1;
	for (int i = 0; i < c->n; i++) {
		const struct virtq_seg *g = &c->seg[i];
		if (g->writable)
			return *err = "network: a message with a buffer for the device to write", -1;
		if (g->len > HUSK_NET_MSG_MAX - len)
			return *err = "network: a message longer than the largest", -1;
		size_t k = got < HDR ? (HDR - got < g->len ? HDR - got : g->len) : 0;
		memcpy((uint8_t *)&h + got, g->ptr, k);
		got += k;
		if (g->len > k)
			v[nv++] = (struct iovec){ g->ptr + k, g->len - k };
		len += g->len;
	}
	if (len < HDR)
		return *err = "network: a message shorter than its header", -1;
	if (h.len != len - HDR)
		return *err = "network: a message whose length is not its header's", -1;
	v[0] = (struct iovec){ &h, HDR };
	while (n->broker_fd >= 0) {
		ssize_t w = writev(n->broker_fd, v, nv); /* one message on a SOCK_SEQPACKET socket */
		if (w == (ssize_t)len) {
			n->sent++;
			break;
		}
		if (w < 0 && (errno == EINTR || errno == EAGAIN) && !stop_now())
			host_fd_wait(n->broker_fd, 1, 100);
		else if (w < 0 && (errno == EINTR || errno == EAGAIN))
			break; /* the run is ending */
		else
			broker_gone(n);
	}
	return 0;
}

/* The next message for the guest into n->in: 1, or 0 when none is there. */
static int next_message(struct net_stream *n)
{
	while (!n->held && n->broker_fd >= 0) {
		ssize_t r = read(n->broker_fd, n->in, sizeof n->in);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r >= (ssize_t)HDR) {
			n->held = (size_t)r;
			break;
		}
		broker_gone(n); /* its end closed (0), failed, or it sent less than a header */
	}
	if (!n->held && n->broker_fd < 0 && !n->gone_told) {
		struct husk_net_hdr h = { .op = HUSK_NET_RESET, .conn = HUSK_NET_ALL, .error = ECONNRESET };
		memcpy(n->in, &h, HDR);
		n->held = HDR;
		n->gone_told = 1;
	}
	return n->held > 0;
}

int net_stream_deliver(struct net_stream *n, const char **err)
{
	struct virtq *q = &n->mmio.q[HUSK_NET_RECEIVEQ];
	if (!q->ready)
		return 0;
	int avail = virtq_begin(q, err), delivered = 0;
	if (avail < 0)
		return -1;
	for (; avail > 0 && next_message(n); avail--) {
		struct virtq_chain *c = &n->mmio.chain;
		int r = virtq_pop(q, n->mmio.mem, c, err);
		if (r <= 0) {
			n->starved = r == 0;
			return r < 0 ? -1 : delivered;
		}
		size_t done = 0;
		for (int i = 0; i < c->n && done < n->held; i++) {
			if (!c->seg[i].writable)
				return *err = "network: a receive buffer the device may not write", -1;
			size_t k = c->seg[i].len < n->held - done ? c->seg[i].len : n->held - done;
			memcpy(c->seg[i].ptr, n->in + done, k);
			done += k;
		}
		if (done < n->held)
			return *err = "network: a receive buffer smaller than the largest message", -1;
		if (virtq_push(q, c->head, (uint32_t)done, err))
			return -1;
		n->held = 0;
		n->received++;
		delivered++;
	}
	n->starved = avail == 0;
	return delivered;
}

int net_stream_wait_fd(const struct net_stream *n)
{
	return n->broker_fd >= 0 && !n->starved && n->mmio.q[HUSK_NET_RECEIVEQ].ready ? n->broker_fd : -1;
}

static int notify(struct virtio_mmio *d, int q, const char **err)
{
	if (q == HUSK_NET_TRANSMITQ)
		return virtio_mmio_serve(d, q, transmit, err);
	return net_stream_deliver(d->priv, err) < 0 ? -1 : 0;
}

static const struct virtio_device_ops ops = { .notify = notify };

void net_stream_init(struct net_stream *n, uint64_t base, const struct guest_mem *m, int broker_fd)
{
	memset(n, 0, sizeof *n);
	n->broker_fd = broker_fd;
	struct virtio_device dev = { .id = HUSK_VIRTIO_ID_NET_STREAM, .nqueues = 2, .ops = &ops, .priv = n };
	virtio_mmio_init(&n->mmio, base, m, &dev);
}
