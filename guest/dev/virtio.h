/* SPDX-License-Identifier: GPL-2.0-only */
/* Guest side of virtio-mmio (version 2) with split virtqueues.  Requests are
 * completed by the VMM while it handles the queue-notify write, so a request
 * is: fill descriptors, publish, notify, read the used ring; except the
 * console's input, which the VMM holds until input comes. */
#ifndef GUEST_VIRTIO_H
#define GUEST_VIRTIO_H
#include <stdint.h>
#include "husk/virtio_regs.h"
#include "husk/virtio_ring.h"

#define VQ_SIZE 16

struct vring_avail VIRTQ_AVAIL(VQ_SIZE);
struct vring_used VIRTQ_USED(VQ_SIZE);

struct virtq {
	struct virtq_desc desc[VQ_SIZE] __attribute__((aligned(VIRTQ_DESC_ALIGN)));
	struct vring_avail avail __attribute__((aligned(VIRTQ_AVAIL_ALIGN)));
	struct vring_used used __attribute__((aligned(VIRTQ_USED_ALIGN)));
	uint16_t index;   /* queue number on the device */
	uint16_t used_seen;
};

struct virtio_dev {
	uintptr_t mmio;
	int ready;
};

struct vbuf {
	const void *addr;
	uint32_t len;
	int device_writes;
};

/* Bring the device up with its queues, accepting VERSION_1 and those of
 * the feature bits 0-31 in `want` the device offers; 0 or a negative errno. */
int virtio_init(struct virtio_dev *d, struct virtq *qs, int nqueues, uint32_t want);
/* One request of n buffers, completed within its notify (the disks, the
 * console's output); returns the length the device reports written. */
uint32_t virtq_request(struct virtio_dev *d, struct virtq *q, const struct vbuf *b, int n);
/* A request the device may complete later (the console's input): post it
 * (descriptors 0..n-1: one request in flight per queue), notify again to
 * have the device look, and see whether it is done (its length). */
void virtq_post(struct virtio_dev *d, struct virtq *q, const struct vbuf *b, int n);
/* A buffer becomes one descriptor per physically contiguous piece (a
 * process's pages need not be): how much of [p, p+len) fits in that many. */
size_t virtq_span(const void *p, size_t len, int pieces);
void virtq_kick(struct virtio_dev *d, struct virtq *q);
/* Receive buffers the device fills when it has something (the network's):
 * buf (physically contiguous, the kernel's) made available as descriptor
 * desc alone, without a notify; and the next one the device returned (1:
 * *desc and the length written; 0: none). */
void virtq_give(struct virtq *q, uint16_t desc, void *buf, uint32_t len);
int virtq_take(struct virtq *q, uint16_t *desc, uint32_t *len);
int virtq_done(struct virtq *q, uint32_t *len);
#endif
