/* SPDX-License-Identifier: GPL-2.0-only */
/* A map of an image's blocks to pieces of host files (copyin.h) kept in a
 * file beside the image: a dataset's in the cache, a kept workdir image's
 * for `husk writeback`. */
#ifndef HUSK_MAP_FILE_H
#define HUSK_MAP_FILE_H
#include <stdint.h>
#include "disks/copyin.h"

/* The map fits an image of image_bytes and itself: extents in order, not
 * overlapping, inside the image, each naming a file and lying within its
 * size rounded up to a block. */
int map_file_valid(const struct copyin_map *m, uint64_t image_bytes);
/* The map, for the image in fd `image` (of image_bytes), written to fd:
 * 0, or -1. */
int map_file_save(int fd, int image, const struct copyin_map *m, uint64_t image_bytes);
/* The map in fd into m, if it is sound and was made for the image in
 * `image` (its UUID) of image_bytes: 0, or -1 (m empty). */
int map_file_load(int fd, int image, struct copyin_map *m, uint64_t image_bytes);
#endif
