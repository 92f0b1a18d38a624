/* SPDX-License-Identifier: GPL-2.0-only */
/* husk's cache: $HUSK_CACHE, default /var/cache/husk, a directory of the
 * user's own (or root's), not writable by group or others.  It holds the
 * datasets' images (ro-KEY.img, disks/disks.c), the Debian images
 * (images/NAME/, debian/store.c) and the packages they were built from
 * (debs/). */
#ifndef HUSK_CACHE_H
#define HUSK_CACHE_H
#include <stddef.h>

/* Opens the cache, or its subdirectory sub (NULL: the cache itself), made
 * (0700) when missing; path gets its name.  The fd, or -1 with a one-line
 * reason in err that ends by saying how to pick another directory. */
int cache_open(const char *sub, char *path, size_t len, char *err, size_t errlen);
#endif
