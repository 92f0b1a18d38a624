/* SPDX-License-Identifier: GPL-2.0-only */
/* A block device as the file system code sees it (virtio-blk in the guest,
 * a RAM image in the unit tests), and the memory the file systems use. */
#ifndef GUEST_FS_BLOCKDEV_H
#define GUEST_FS_BLOCKDEV_H
#include <stddef.h>
#include <stdint.h>

struct blockdev {
	void *ctx;
	uint64_t sectors;      /* 512-byte sectors */
	int read_only;
	int (*read)(void *ctx, uint64_t sector, void *buf, uint32_t count);   /* count sectors; 0 or -errno */
	int (*write)(void *ctx, uint64_t sector, const void *buf, uint32_t count);
	int (*flush)(void *ctx);
};

/* Provided by the kernel (by malloc/free in the unit tests). */
void *fs_alloc(size_t size);   /* zeroed; NULL when out of memory -> -ENOMEM */
void fs_free(void *p, size_t size);
#endif
