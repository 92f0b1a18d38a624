/* SPDX-License-Identifier: GPL-2.0-only */
/* The network's device (net.h): a virtio-mmio device of husk's own with a
 * transmit queue, whose requests the VMM completes within their notify
 * (each written whole to the broker's socket), and a receive queue of
 * RX_BUFS buffers of the largest message, which the VMM fills when the
 * broker sends something and announces with an interrupt
 * (HUSK_DEVICE_VECTOR).  The scheduler's look at events takes them
 * (net_poll), gives the buffers back and notifies, so that the VMM goes on
 * with what it could not deliver for want of buffers. */
#include <errno.h>
#include "dev/net.h"
#include "dev/virtio.h"
#include "kernel.h"
#include "net/inet.h"

#define RX_BUFS 8
_Static_assert(RX_BUFS <= VQ_SIZE, "a receive buffer per descriptor");

static struct {
	struct virtio_dev dev;
	struct virtq q[2] __attribute__((aligned(64))); /* HUSK_NET_TRANSMITQ, HUSK_NET_RECEIVEQ */
	uint8_t *rx[RX_BUFS];
	int tried, gone;
} net;

int net_up(void)
{
	if (net.dev.ready || net.tried)
		return net.dev.ready;
	net.tried = 1;
	if (!boot.net_mmio)
		return 0;
	for (int i = 0; i < RX_BUFS; i++)
		if (!(net.rx[i] = kalloc(HUSK_NET_MSG_MAX)))
			panic("no memory for the network's receive buffers");
	net.dev.mmio = boot.net_mmio;
	net.q[0].index = HUSK_NET_TRANSMITQ;
	net.q[1].index = HUSK_NET_RECEIVEQ;
	if (virtio_init(&net.dev, net.q, 2, 0))
		panic("the network's device at %lx did not initialize", (unsigned long)boot.net_mmio);
	for (uint16_t i = 0; i < RX_BUFS; i++)
		virtq_give(&net.q[1], i, net.rx[i], HUSK_NET_MSG_MAX);
	virtq_kick(&net.dev, &net.q[1]);
	return 1;
}

void net_rearm(void)
{
	if (!net.dev.ready)
		net.tried = 0;
}

int net_send(struct husk_net_hdr *h, const void *payload, size_t len)
{
	if (!net.dev.ready || net.gone)
		return -ENETDOWN;
	h->len = (uint32_t)len;
	struct vbuf b[2] = { { h, sizeof *h, 0 }, { payload, (uint32_t)len, 0 } };
	virtq_request(&net.dev, &net.q[0], b, len ? 2 : 1);
	return 0;
}

void net_poll(void)
{
	if (!net.dev.ready)
		return;
	for (;;) {
		uint16_t d;
		uint32_t len;
		int took = 0;
		while (virtq_take(&net.q[1], &d, &len)) {
			if (d >= RX_BUFS)
				panic("the network's device returned descriptor %u", d);
			const struct husk_net_hdr *h = (const void *)net.rx[d];
			if (len >= sizeof *h && len <= HUSK_NET_MSG_MAX && h->len == len - sizeof *h) {
				if (h->op == HUSK_NET_RESET && h->conn == HUSK_NET_ALL)
					net.gone = 1;
				inet_receive(h, net.rx[d] + sizeof *h);
			}
			virtq_give(&net.q[1], d, net.rx[d], HUSK_NET_MSG_MAX);
			took++;
		}
		if (!took)
			return;
		virtq_kick(&net.dev, &net.q[1]); /* what waited for buffers comes now, or at the next interrupt */
	}
}
