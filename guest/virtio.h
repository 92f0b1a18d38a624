/* Guest side of virtio-mmio (version 2) with split virtqueues.  Requests are
 * completed by the VMM while it handles the queue-notify write, so a request
 * is: fill descriptors, publish, notify, read the used ring. */
#ifndef GUEST_VIRTIO_H
#define GUEST_VIRTIO_H
#include <stdint.h>
#include "husk/virtio_regs.h"

#define VQ_SIZE 16

struct vring_desc { uint64_t addr; uint32_t len; uint16_t flags, next; };
struct vring_avail { uint16_t flags, idx, ring[VQ_SIZE], used_event; };
struct vring_used_elem { uint32_t id, len; };
struct vring_used { uint16_t flags, idx; struct vring_used_elem ring[VQ_SIZE]; uint16_t avail_event; };

struct virtq {
	struct vring_desc desc[VQ_SIZE] __attribute__((aligned(16)));
	struct vring_avail avail __attribute__((aligned(2)));
	struct vring_used used __attribute__((aligned(4)));
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
/* One request of n buffers; returns the length the device reports written. */
uint32_t virtq_request(struct virtio_dev *d, struct virtq *q, const struct vbuf *b, int n);
#endif
