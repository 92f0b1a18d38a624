/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by the libFuzzer targets: an invariant check that aborts (so
 * libFuzzer saves the input), and guest memory on the ASan heap, so a host
 * access one byte outside it is reported at once (an mmap'd guest_mem has no
 * redzones).  gpa_ptr() works on any struct guest_mem. */
#ifndef HUSK_FUZZ_H
#define HUSK_FUZZ_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guest_mem.h"

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		abort(); \
	} \
} while (0)

static inline void heap_guest_mem(struct guest_mem *m, uint64_t size)
{
	m->host = malloc(size);
	m->size = size;
	if (!m->host)
		abort();
}

/* [p, p+len) lies inside guest memory. */
static inline int in_guest(const struct guest_mem *m, const uint8_t *p, uint64_t len)
{
	return p >= m->host && p <= m->host + m->size && len <= (uint64_t)(m->host + m->size - p);
}

static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
#endif
