/* SPDX-License-Identifier: GPL-2.0-only */
/* husk's cache: $HUSK_CACHE, default /var/cache/husk, a directory of the
 * user's own (or root's), not writable by group or others.  It holds the
 * datasets' metadata images (ro-KEY.img and ro-KEY.map, disks/dataset.c),
 * the Debian images (images/NAME/, debian/store.c) and the packages they
 * were built from (debs/) and the programs' snapshots (snapshots/,
 * vmm/snapshot/snapshot.h).  It has a cap, HUSK_CACHE_MAX (default 16G):
 * whatever adds to the cache trims it afterwards, least recently used
 * first (an entry's mtime is when it was last used: cache_touch). */
#ifndef HUSK_CACHE_H
#define HUSK_CACHE_H
#include <stddef.h>
#include <stdint.h>

#define CACHE_MAX_DEFAULT (16ull << 30)

/* Opens the cache, or its subdirectory sub (NULL: the cache itself), made
 * (0700) when missing; path gets its name.  The fd, or -1 with a one-line
 * reason in err that ends by saying how to pick another directory. */
int cache_open(const char *sub, char *path, size_t len, char *err, size_t errlen);

/* One thing the cache holds, removed as a whole. */
struct cache_entry {
	char kind[16];  /* "dataset", "image", "package", "snapshot", "leftover" */
	char name[320]; /* its path in the cache: ro-KEY, images/NAME, debs/FILE */
	uint64_t bytes; /* on disk (allocated blocks) */
	int64_t used;   /* last used, nanoseconds since the epoch */
};

/* Everything in the cache, least recently used first: 0, or -1 with a
 * reason.  *e is malloc'ed. */
int cache_list(struct cache_entry **e, size_t *n, char *err, size_t errlen);
/* Removes one entry (never following a symlink): 0 or -1 (errno). */
int cache_remove(int cache, const struct cache_entry *e);
/* The entry at `name` in the cache dir cache was used now. */
void cache_touch(int cache, const char *name);
/* The cap: HUSK_CACHE_MAX, else CACHE_MAX_DEFAULT. */
uint64_t cache_max(void);
/* Removes least recently used entries until the cache is within its cap,
 * never `keep` (an entry's name, or NULL). */
void cache_trim(const char *keep);

/* husk cache ls | clear [KIND...] */
int cache_command(int argc, char **argv);
#endif
