/* SPDX-License-Identifier: GPL-2.0-only */
/* The filtered network's device (docs/network.md, include/husk/net_stream.h):
 * virtio-mmio with husk's own device ID and two queues.  Each chain on the
 * transmit queue is one message from the guest, checked for its framing
 * only (a whole header, a length that is its own, device-readable buffers)
 * and written whole to the broker's socket; each buffer on the receive queue
 * takes one message the broker sent, whole.  The device reads nothing else
 * of a message; when the broker is gone it tells the guest once (RESET of
 * HUSK_NET_ALL) and drops what the guest sends after. */
#ifndef HUSK_VIRTIO_NET_STREAM_H
#define HUSK_VIRTIO_NET_STREAM_H
#include <stdint.h>
#include "husk/net_stream.h"
#include "devices/virtio_mmio.h"

struct net_stream {
	struct virtio_mmio mmio;
	int broker_fd;          /* SOCK_SEQPACKET, non-blocking; -1: the broker is gone */
	int gone_told;          /* the guest got the RESET of HUSK_NET_ALL */
	size_t held;            /* bytes of a message from the broker waiting for a receive buffer */
	int starved;            /* the last delivery found no receive buffer left */
	uint64_t sent, received; /* messages */
	uint8_t in[HUSK_NET_MSG_MAX];
};

void net_stream_init(struct net_stream *n, uint64_t base, const struct guest_mem *m, int broker_fd);
/* What the broker sent, into the receive buffers the guest posted: how many
 * messages went in (the caller then interrupts the guest), or -1 with *err
 * (a receive buffer smaller than a message: the run ends). */
int net_stream_deliver(struct net_stream *n, const char **err);
/* The broker's fd, for a sleeping guest's host thread to wait on; -1 when
 * there is nothing to wait for (the broker gone, or no receive buffer the
 * guest posted is free: its next notify takes the rest). */
int net_stream_wait_fd(const struct net_stream *n);
#endif
