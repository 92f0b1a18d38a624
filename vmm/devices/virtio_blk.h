/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-blk (virtio 1.x, 5.2) over a host file: a read-only dataset or
 * system disk, or the writable workdir.  Every request is checked: framing,
 * type, sector range (with overflow), data length (at most 4 MiB), buffer
 * direction.  A notify serves the requests pending when it came, and stops
 * early on a stop request (stop.h), also between 1 MiB chunks of a request. */
#ifndef HUSK_VIRTIO_BLK_H
#define HUSK_VIRTIO_BLK_H
#include <stdint.h>
#include "husk/virtio_blk.h"
#include "devices/virtio_mmio.h"
#include "disks/mapped.h"

struct blk {
	struct virtio_mmio mmio;
	int fd;
	int read_only;
	uint64_t sectors;           /* capacity in 512-byte sectors */
	uint64_t bytes_read, bytes_written;
	uint64_t denied_writes;     /* writes refused on a read-only disk */
	uint64_t changed_reads;     /* reads of host files replaced or removed since the walk (EIO) */
	uint64_t unreadable_reads;  /* ... of host files husk may not read (EIO) */
	struct virtio_blk_config config;
	char id[VIRTIO_BLK_ID_BYTES];
	struct mapped_disk mapped;  /* a dataset's or the workdir's: data in host files (map NULL: none) */
	int files;                  /* ... fds for them from this file server (file_server.h) */
	uint32_t disk;              /* ... which knows this disk by this index */
};

/* fd is the image (kept open by the device).  size in bytes, a multiple of
 * 512 (the rest is ignored). */
void blk_init(struct blk *b, uint64_t base, const struct guest_mem *m, int fd, uint64_t size, int read_only,
	      const char *id);
/* The blocks map names are read from the host files the file server at
 * fd `files` opens, until written (dirty: the workdir's bits; NULL for a
 * read-only disk). */
void blk_map_files(struct blk *b, const struct copyin_map *map, uint64_t *dirty, int files, uint32_t disk);
#endif
