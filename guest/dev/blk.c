/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-blk driver (virtio 1.x, 5.2): one request queue, requests completed
 * synchronously by the VMM during the notify.  Each disk is a struct
 * blockdev for the file system code. */
#include <errno.h>
#include <string.h>
#include "arch/cpu.h"
#include "fs/blockdev.h"
#include "husk/virtio_blk.h"
#include "kernel.h"
#include "dev/virtio.h"
#include "mm/mm.h"

#define MAX_REQUEST (4u << 20) /* bytes per request: bounds one host pread */
_Static_assert(MAX_REQUEST <= HUSK_BLK_MAX_REQUEST, "the VMM refuses larger requests");
#define SECTOR VIRTIO_BLK_SECTOR_SIZE

struct vblk {
	struct virtio_dev dev;
	struct virtq q __attribute__((aligned(64)));
	struct virtio_blk_req_hdr hdr;
	uint8_t status;
	struct blockdev bd;
};

static int request(struct vblk *b, uint32_t type, uint64_t sector, void *buf, uint32_t len)
{
	b->hdr.type = type;
	b->hdr.reserved = 0;
	b->hdr.sector = sector;
	b->status = 0xff;
	struct vbuf v[3] = { { &b->hdr, sizeof b->hdr, 0 } };
	int n = 1;
	if (len)
		v[n++] = (struct vbuf){ buf, len, type == VIRTIO_BLK_T_IN };
	v[n++] = (struct vbuf){ &b->status, 1, 1 };
	virtq_request(&b->dev, &b->q, v, n);
	return b->status == VIRTIO_BLK_S_OK ? 0 : type == VIRTIO_BLK_T_OUT && b->bd.read_only ? -EROFS : -EIO;
}

static int transfer(void *ctx, uint32_t type, uint64_t sector, void *buf, uint32_t count)
{
	struct vblk *b = ctx;
	uint64_t bytes = (uint64_t)count * SECTOR;
	if (sector > b->bd.sectors || count > b->bd.sectors - sector)
		return -EIO;
	if (type == VIRTIO_BLK_T_IN && mm_is_program((uintptr_t)buf) && !user_write_ok(buf, bytes))
		return -EFAULT; /* the device writes the pages themselves: none may be shared after fork */
	char *p = buf;
	while (bytes) {
		uint32_t k = bytes < MAX_REQUEST ? (uint32_t)bytes : MAX_REQUEST;
		size_t fits = virtq_span(p, k, VQ_SIZE - 2); /* beside the header and the status */
		if (fits < k)
			k = fits >= SECTOR ? (uint32_t)(fits & ~(size_t)(SECTOR - 1)) : k;
		int r = request(b, type, sector, p, k);
		if (r)
			return r;
		p += k, bytes -= k, sector += k / SECTOR;
	}
	return 0;
}

static int blk_read(void *ctx, uint64_t sector, void *buf, uint32_t count)
{
	return transfer(ctx, VIRTIO_BLK_T_IN, sector, buf, count);
}

static int blk_write(void *ctx, uint64_t sector, const void *buf, uint32_t count)
{
	struct vblk *b = ctx;
	if (b->bd.read_only)
		return -EROFS;
	return transfer(ctx, VIRTIO_BLK_T_OUT, sector, (void *)buf, count);
}

static int blk_flush(void *ctx)
{
	struct vblk *b = ctx;
	return b->bd.read_only ? 0 : request(b, VIRTIO_BLK_T_FLUSH, 0, 0, 0);
}

struct blockdev *blk_open(uintptr_t mmio, int read_only)
{
	struct vblk *b = kalloc(sizeof *b);
	if (!b)
		return 0;
	b->dev.mmio = mmio;
	b->q.index = 0;
	if (virtio_init(&b->dev, &b->q, 1, 1u << VIRTIO_BLK_F_RO | 1u << VIRTIO_BLK_F_FLUSH)) {
		kfree(b, sizeof *b);
		return 0;
	}
	/* A 64-bit config field is read as two 32-bit halves (4.2.2.2). */
	uintptr_t cap_at = mmio + VIRTIO_MMIO_CONFIG + offsetof(struct virtio_blk_config, capacity);
	uint64_t cap = mmio_read32(cap_at) | (uint64_t)mmio_read32(cap_at + 4) << 32;
	b->bd = (struct blockdev){ b, cap, read_only, blk_read, blk_write, blk_flush };
	return &b->bd;
}
