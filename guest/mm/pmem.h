/* SPDX-License-Identifier: GPL-2.0-only */
/* Physical pages (pmem.c) and the kernel's view of them: the direct map. */
#ifndef GUEST_PMEM_H
#define GUEST_PMEM_H
#include <stddef.h>
#include <stdint.h>
#include "husk/abi.h"

#define BLOCK_SIZE (2ul << 20) /* what one page-directory entry maps */

static inline void *phys_to_virt(uint64_t pa)
{
	return (void *)(uintptr_t)(pa + HUSK_DIRECT_MAP);
}

/* A kernel address (its image, the direct map) or the current process's
 * address as the devices see it: a guest physical address (mm.c). */
uint64_t virt_to_phys(const void *p);

void pmem_init(uint64_t ram_size);
/* Boot: what the VMM put in RAM (the program's image, its stack, data). */
void pmem_reserve(uint64_t pa, size_t len);
/* n contiguous zeroed pages, from the top of RAM down: 0 when none. */
uint64_t pmem_alloc(size_t n);
/* A zeroed 2 MiB block: want itself if free, else the highest free: 0 when
 * none. */
uint64_t pmem_alloc_block(uint64_t want);
/* Frees a page, or (shared) takes one of its users away. */
void pmem_free(uint64_t pa, size_t n);
/* One more user of the page (a shared mapping): each pmem_free takes one
 * away.  -1: no memory for the count, or too many users. */
int pmem_share(uint64_t pa);
/* Whether the page has more than one user. */
int pmem_shared(uint64_t pa);
uint64_t pmem_free_bytes(void);
uint64_t pmem_total_bytes(void);
#endif
