/* SPDX-License-Identifier: GPL-2.0-only */
/* Split virtqueues (virtio 1.x, 2.7) as the device sees them.  All ring and
 * buffer addresses come from the guest and are checked before use: the
 * rings once, when the queue is enabled (they cannot move while it is), the
 * buffers at every pop. */
#ifndef HUSK_VIRTQ_H
#define HUSK_VIRTQ_H
#include <stdint.h>
#include "husk/virtio_ring.h"
#include "guest_mem.h"

#define VIRTQ_MAX_SIZE 256

struct virtq {
	uint16_t num;      /* queue size the driver chose */
	int ready;
	uint64_t desc_gpa, avail_gpa, used_gpa; /* as the driver wrote them */
	/* Host addresses of the rings, set by virtq_enable once it has checked
	 * them (as Firecracker's queue does); only valid while ready. */
	uint8_t *desc, *avail, *used;
	uint16_t last_avail;
	uint16_t avail_end; /* the driver's avail.idx as read by virtq_begin */
	uint16_t next_used;
};

struct virtq_seg {
	uint8_t *ptr;      /* host address, validated */
	uint32_t len;
	int writable;      /* device writes into it */
};

struct virtq_chain {
	uint16_t head;
	int n;
	uint64_t total;
	struct virtq_seg seg[VIRTQ_MAX_SIZE];
};

/* Validates the rings when the driver sets QueueReady. 0 or -1 with *err. */
int virtq_enable(struct virtq *q, const struct guest_mem *m, const char **err);
/* At a notify: reads the driver's available index once and returns how many
 * chains it made available (0 to num), or -1 with *err.  The device serves
 * those and no more: a buffer the device fills may overwrite the ring (and
 * avail.idx) in guest memory, and re-reading it could refill the queue for
 * ever within one notify. */
int virtq_begin(struct virtq *q, const char **err);
/* Takes the next chain counted by virtq_begin: 1 got one, 0 none left, -1
 * malformed.  m: the buffers' addresses are the guest's, checked here. */
int virtq_pop(struct virtq *q, const struct guest_mem *m, struct virtq_chain *c, const char **err);
/* Returns a chain to the driver with the number of bytes written into it. */
int virtq_push(struct virtq *q, uint16_t head, uint32_t len, const char **err);
#endif
