/* SPDX-License-Identifier: GPL-2.0-only */
/* A disk whose data blocks are pieces of host files (copyin_build_mapped):
 * a dataset's, read-only, or the workdir's, copy-on-write.  A block the
 * guest writes goes into the image and is marked dirty, and is read from
 * there from then on; the others are read from the host files, never
 * beyond the piece of the file the map names (a file that shrank reads as
 * zeros there).  The one reading of such a disk, for the VMM's virtio-blk
 * and for the write-back's reader (workdir_reader.c). */
#ifndef HUSK_MAPPED_H
#define HUSK_MAPPED_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "disks/copyin.h"

#define MAPPED_BLOCK 4096u /* the unit of a map and of the dirty bits */

struct mapped_disk {
	int image;                    /* the image: metadata, and the blocks written */
	const struct copyin_map *map;
	uint64_t *dirty;              /* one bit per block, set once written; NULL: read-only */
	/* An fd to pread file f of the map through, or -errno. */
	int (*file_fd)(void *ctx, uint32_t f);
	void *ctx;
};

/* The dirty bits of a disk of `bytes`: their size, a multiple of a page. */
size_t mapped_dirty_bytes(uint64_t bytes);
static inline int mapped_is_dirty(const uint64_t *dirty, uint64_t block)
{
	return dirty && (dirty[block / 64] >> (block % 64) & 1);
}

/* The extent holding block blk (of MAPPED_BLOCK), or NULL. */
const struct copyin_extent *mapped_extent(const struct copyin_map *m, uint64_t blk);
/* The run of bytes from `at` (n at most) that is all in one host file's
 * piece and never written (*clean: that extent), or all in the image
 * (*clean NULL): its length. */
size_t mapped_run(const struct mapped_disk *m, uint64_t at, size_t n, const struct copyin_extent **clean);
/* n bytes at *pos (advanced): 0, or -1 on an error or a stop request. */
int mapped_read(const struct mapped_disk *m, char *p, size_t n, off_t *pos);
/* A write: whole blocks go to the image; part of a block not yet written
 * gets the rest of that block from its host file first. */
int mapped_write(const struct mapped_disk *m, const char *p, size_t n, off_t *pos);
/* One buffer at *pos of fd, in chunks (a stop request is checked between
 * them); past the end of a short file reads as zeros.  0, or -1. */
int mapped_transfer(int fd, int writing, char *p, size_t n, off_t *pos);
#endif
