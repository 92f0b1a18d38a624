/* SPDX-License-Identifier: GPL-2.0-only */
/* One bit per page: the page allocators' maps (pmem.c, mm.c). */
#ifndef GUEST_BITMAP_H
#define GUEST_BITMAP_H
#include <stddef.h>
#include <stdint.h>

static inline int bit_get(const uint64_t *map, size_t i)
{
	return map[i / 64] >> (i % 64) & 1;
}

static inline void bits_set(uint64_t *map, size_t first, size_t n, int on)
{
	for (size_t i = first; i < first + n; i++) {
		if (on)
			map[i / 64] |= 1ull << (i % 64);
		else
			map[i / 64] &= ~(1ull << (i % 64));
	}
}

/* No bit of [first, first+n) set. */
static inline int bits_clear(const uint64_t *map, size_t first, size_t n)
{
	for (size_t i = first; i < first + n; i++)
		if (bit_get(map, i))
			return 0;
	return 1;
}
#endif
