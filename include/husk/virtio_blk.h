/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-blk (virtio 1.x, 5.2) as husk's VMM serves it and its guest drives
 * it: feature bits, the request header, types and status values, and the
 * device configuration layout. */
#ifndef HUSK_VIRTIO_BLK_ABI_H
#define HUSK_VIRTIO_BLK_ABI_H
#include <stddef.h>
#include <stdint.h>

/* Feature bits (5.2.3) husk offers. */
#define VIRTIO_BLK_F_SEG_MAX 2
#define VIRTIO_BLK_F_RO      5
#define VIRTIO_BLK_F_FLUSH   9

/* Request types (5.2.6). */
#define VIRTIO_BLK_T_IN     0
#define VIRTIO_BLK_T_OUT    1
#define VIRTIO_BLK_T_FLUSH  4
#define VIRTIO_BLK_T_GET_ID 8

/* The status byte, the request's last (5.2.6). */
#define VIRTIO_BLK_S_OK     0
#define VIRTIO_BLK_S_IOERR  1
#define VIRTIO_BLK_S_UNSUPP 2

#define VIRTIO_BLK_SECTOR_SIZE 512 /* sectors are 512 bytes whatever blk_size says */
#define VIRTIO_BLK_ID_BYTES    20  /* a GET_ID answer: NUL-padded, not terminated when full */

/* Data bytes in one request the VMM serves; more is an I/O error, so one
 * request cannot keep the VMM busy for long.  (husk's own.) */
#define HUSK_BLK_MAX_REQUEST (4u << 20)

/* What precedes a request's data (5.2.6). */
struct virtio_blk_req_hdr {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

/* The device configuration (5.2.4), read through the MMIO config window.
 * Packed: without it the 8-byte capacity would pad the 60 bytes to 64, and
 * the driver must see exactly the spec's offsets. */
struct virtio_blk_config {
	uint64_t capacity; /* in 512-byte sectors */
	uint32_t size_max;
	uint32_t seg_max;
	struct {
		uint16_t cylinders;
		uint8_t heads, sectors;
	} geometry;
	uint32_t blk_size;
	struct {
		uint8_t physical_block_exp, alignment_offset;
		uint16_t min_io_size;
		uint32_t opt_io_size;
	} topology;
	uint8_t writeback;
	uint8_t unused0[3];
	uint32_t max_discard_sectors, max_discard_seg, discard_sector_alignment;
	uint32_t max_write_zeroes_sectors, max_write_zeroes_seg;
	uint8_t write_zeroes_may_unmap;
	uint8_t unused1[3];
} __attribute__((packed));

_Static_assert(sizeof(struct virtio_blk_req_hdr) == 16, "virtio-blk request header is 16 bytes");
_Static_assert(sizeof(struct virtio_blk_config) == 60, "virtio-blk config is 60 bytes (virtio 1.1)");
_Static_assert(offsetof(struct virtio_blk_config, seg_max) == 12 &&
		       offsetof(struct virtio_blk_config, blk_size) == 20 &&
		       offsetof(struct virtio_blk_config, writeback) == 32 &&
		       offsetof(struct virtio_blk_config, write_zeroes_may_unmap) == 56,
	       "virtio-blk config offsets (5.2.4)");
#endif
