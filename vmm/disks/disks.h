/* SPDX-License-Identifier: GPL-2.0-only */
/* The disks a run gets, prepared on the host: read-only datasets (--ro), the
 * system disk of an image (/usr), the writable workdir (-w).  Directories are
 * opened once, with no symlink in their path.  A dataset's metadata goes
 * into an ext2 image, its data read from the host files (dataset.h); so
 * does the workdir's, into a temporary sparse image of the disk's size, a
 * copy-on-write view of the host files (mapped.h): a run starts in time
 * proportional to its number of files, whatever their size. */
#ifndef HUSK_DISKS_H
#define HUSK_DISKS_H
#include <stddef.h>
#include <stdint.h>
#include "husk/abi.h" /* MAX_DISKS */
#include "disks/copyin.h"

struct disk {
	char mount[96];      /* where the guest mounts it */
	int fd;
	uint64_t size;
	int read_only;
	char image[4096];    /* the image file */
	int temporary;       /* image is husk's own, deleted after the run */
	int mapped;          /* a dataset's or the workdir's: its data blocks are in host files */
	struct copyin_map map; /* ... this map's (dataset.h, mapped.h) */
	int top_fd;          /* ... under this directory (-1: none) */
	uint64_t *dirty;     /* the workdir's blocks written (mapped.h): memory shared with the write-back */
	size_t dirty_bytes;
};

struct disks {
	struct disk d[MAX_DISKS];
	int n;
	int workdir;         /* index of the workdir disk, or -1 */
	char workdir_path[4096];  /* for messages: the path is never resolved again */
	int workdir_fd;          /* the workdir, opened once (-1 when none) */
	struct copyin_record workdir_record; /* what was copied into its image */
};

/* Each returns 0, or -1 with a one-line reason in err (a user error). */
int disks_add_ro(struct disks *ds, const char *spec, char *err, size_t errlen);     /* NAME=PATH */
/* An image's system disk, mounted at mount ("/usr"; "/" for a Debian image's root). */
int disks_add_system(struct disks *ds, const char *image, const char *mount, char *err, size_t errlen);
int disks_add_workdir(struct disks *ds, const char *dir, uint64_t size, char *err, size_t errlen);
/* The size of a read-only image for a tree of `bytes` (copyin_measure's)
 * in `entries` names: room for its metadata, and an eighth more. */
uint64_t disks_ro_image_bytes(uint64_t bytes, uint64_t entries);
/* Closes the images and the workdir, frees its record, and deletes husk's
 * temporary images. */
void disks_release(struct disks *ds);
#endif
