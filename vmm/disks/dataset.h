/* SPDX-License-Identifier: GPL-2.0-only */
/* A read-only dataset directory attached without copying its data
 * (dataset.c): a cached ext2 image of its metadata and a map of its data
 * blocks to the host files, served by the file server (file_server.h). */
#ifndef HUSK_DATASET_H
#define HUSK_DATASET_H
#include <stddef.h>
#include "disks/disks.h"

/* d gets the image (fd, size, image), its map and a copy of dirfd (top_fd,
 * for the file server).  0, or -1 with a one-line reason. */
int dataset_attach(struct disk *d, int dirfd, const char *path, char *err, size_t errlen);
#endif
