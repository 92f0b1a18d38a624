/* SPDX-License-Identifier: GPL-2.0-only */
/* Split virtqueue layout (virtio 1.x, 2.7): the descriptor table, the
 * available ring and the used ring, as the guest lays them out and the VMM
 * reads them.  Both sides are x86-64, so the rings' little-endian fields are
 * used in native byte order. */
#ifndef HUSK_VIRTIO_RING_H
#define HUSK_VIRTIO_RING_H
#include <stddef.h>
#include <stdint.h>

#define VIRTQ_DESC_F_NEXT     1
#define VIRTQ_DESC_F_WRITE    2 /* device-writable (else device-readable) */
#define VIRTQ_DESC_F_INDIRECT 4

/* Alignment each part must have in guest memory (2.7, table "Virtqueue
 * Part Alignment"). */
#define VIRTQ_DESC_ALIGN  16
#define VIRTQ_AVAIL_ALIGN 2
#define VIRTQ_USED_ALIGN  4

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

struct virtq_used_elem {
	uint32_t id;  /* head of the chain */
	uint32_t len; /* bytes the device wrote into it */
};

/* The rings of a queue of n entries, as struct bodies: the guest sizes its
 * queues at compile time (struct name VIRTQ_AVAIL(16);), the VMM learns the
 * size only at run time and uses the offsets below. */
#define VIRTQ_AVAIL(n) { uint16_t flags, idx, ring[n], used_event; }
#define VIRTQ_USED(n) { uint16_t flags, idx; struct virtq_used_elem ring[n]; uint16_t avail_event; }

/* Byte offsets into the rings of a queue whose size is known at run time. */
struct virtq_avail_layout VIRTQ_AVAIL(1);
struct virtq_used_layout VIRTQ_USED(1);
#define VIRTQ_AVAIL_IDX offsetof(struct virtq_avail_layout, idx)
#define VIRTQ_AVAIL_ENTRY(i) (offsetof(struct virtq_avail_layout, ring) + sizeof(uint16_t) * (uint64_t)(i))
#define VIRTQ_AVAIL_SIZE(n) (VIRTQ_AVAIL_ENTRY(n) + sizeof(uint16_t)) /* with used_event */
#define VIRTQ_USED_IDX offsetof(struct virtq_used_layout, idx)
#define VIRTQ_USED_ENTRY(i) \
	(offsetof(struct virtq_used_layout, ring) + sizeof(struct virtq_used_elem) * (uint64_t)(i))
#define VIRTQ_USED_SIZE(n) (VIRTQ_USED_ENTRY(n) + sizeof(uint16_t)) /* with avail_event */

_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc is 16 bytes (2.7.5)");
_Static_assert(sizeof(struct virtq_used_elem) == 8, "virtq_used_elem is 8 bytes (2.7.8)");
_Static_assert(VIRTQ_AVAIL_IDX == 2 && VIRTQ_AVAIL_ENTRY(0) == 4, "available ring header (2.7.6)");
_Static_assert(VIRTQ_USED_IDX == 2 && VIRTQ_USED_ENTRY(0) == 4, "used ring header (2.7.8)");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "virtio fields are little endian");
#endif
