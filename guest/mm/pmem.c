/* SPDX-License-Identifier: GPL-2.0-only */
/* Physical memory: the RAM above the kernel's first 4 MiB in 4 KiB pages,
 * one bit each.  Processes take 2 MiB blocks where they can (a 2 MiB
 * mapping costs kvm_pvm one shadow fault, 512 small ones cost 512) and
 * single pages where they cannot; the kernel takes pages from the top down,
 * away from the first program, which grows up from its image.  A page the
 * host gave and nobody used is still zero and is not cleared again: the
 * first touch of memory is what costs on kvm_pvm. */
#include <string.h>
#include "kernel.h"
#include "mm/bitmap.h"
#include "mm/pmem.h"

#define MAX_PAGES (HUSK_RAM_MAX / PAGE_SIZE)
#define BLOCK_PAGES (BLOCK_SIZE / PAGE_SIZE)

static uint64_t used[MAX_PAGES / 64];
static uint16_t *extra_refs; /* per page: more users than one (shared mappings); made on first use */
static uint64_t dirty[MAX_PAGES / 64]; /* handed out once: clear it before reuse */
/* One bit per word of used: all 64 pages taken.  Without it a nearly full
 * memory made every page allocation walk the whole map (~25 us in 3 GiB,
 * more than the page's first touch). */
static uint64_t full[MAX_PAGES / 64 / 64 + 1];
static size_t npages, nfree;

static void set_used(size_t first, size_t n, int on)
{
	bits_set(used, first, n, on);
	for (size_t w = first / 64; w <= (first + n - 1) / 64; w++)
		bits_set(full, w, 1, used[w] == ~0ull);
}

void pmem_init(uint64_t ram_size)
{
	npages = ram_size / PAGE_SIZE;
	memset(used, 0, sizeof used);
	memset(dirty, 0, sizeof dirty);
	memset(full, 0, sizeof full);
	set_used(0, HUSK_PROGRAM_MIN / PAGE_SIZE, 1); /* the kernel's */
	nfree = npages - HUSK_PROGRAM_MIN / PAGE_SIZE;
}

void pmem_reserve(uint64_t pa, size_t len)
{
	size_t first = pa / PAGE_SIZE, n = ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE;
	for (size_t i = first; i < first + n && i < npages; i++)
		if (!bit_get(used, i)) {
			set_used(i, 1, 1);
			bits_set(dirty, i, 1, 1);
			nfree--;
		}
}

/* Marks [first, first+n) taken and zeroes what was used before. */
static uint64_t take(size_t first, size_t n)
{
	set_used(first, n, 1);
	nfree -= n;
	for (size_t i = first; i < first + n; i++)
		if (bit_get(dirty, i))
			memset(phys_to_virt(i * PAGE_SIZE), 0, PAGE_SIZE);
	bits_set(dirty, first, n, 1);
	return first * PAGE_SIZE;
}

uint64_t pmem_alloc(size_t n)
{
	if (!n || n > nfree)
		return 0;
	size_t run = 0;
	for (size_t i = npages; i-- > HUSK_PROGRAM_MIN / PAGE_SIZE;) {
		if (i % (64 * 64) == 64 * 64 - 1 && full[i / 64 / 64] == ~0ull) {
			run = 0;
			i -= 64 * 64 - 1; /* 4096 pages taken */
			continue;
		}
		if (i % 64 == 63 && bit_get(full, i / 64)) {
			run = 0;
			i -= 63;
			continue;
		}
		run = bit_get(used, i) ? 0 : run + 1;
		if (run == n)
			return take(i, n);
	}
	return 0;
}

uint64_t pmem_alloc_block(uint64_t want)
{
	size_t w = want / PAGE_SIZE;
	if (want && !(want % BLOCK_SIZE) && w >= HUSK_PROGRAM_MIN / PAGE_SIZE && w + BLOCK_PAGES <= npages &&
	    bits_clear(used, w, BLOCK_PAGES))
		return take(w, BLOCK_PAGES);
	for (size_t b = npages / BLOCK_PAGES; b-- > HUSK_PROGRAM_MIN / BLOCK_SIZE;) {
		size_t first = b * BLOCK_PAGES;
		int is_free = 1;
		for (size_t k = first / 64; k < (first + BLOCK_PAGES) / 64; k++)
			if (used[k]) {
				is_free = 0;
				break;
			}
		if (is_free)
			return take(first, BLOCK_PAGES);
	}
	return 0;
}

void pmem_free(uint64_t pa, size_t n)
{
	size_t first = pa / PAGE_SIZE;
	for (size_t i = first; i < first + n; i++) {
		if (i < HUSK_PROGRAM_MIN / PAGE_SIZE || i >= npages || !bit_get(used, i))
			panic("freeing page %lx, which is not in use (from %p)", (unsigned long)(i * PAGE_SIZE),
			      __builtin_return_address(0));
		if (extra_refs && extra_refs[i]) {
			extra_refs[i]--; /* another user still has it */
			continue;
		}
		set_used(i, 1, 0);
		nfree++;
	}
}

int pmem_share(uint64_t pa)
{
	size_t i = pa / PAGE_SIZE;
	if (!extra_refs) {
		uint64_t a = pmem_alloc(ALIGN_UP(npages * sizeof *extra_refs, PAGE_SIZE) / PAGE_SIZE);
		if (!a)
			return -1;
		extra_refs = phys_to_virt(a);
	}
	if (extra_refs[i] == UINT16_MAX)
		return -1;
	extra_refs[i]++;
	return 0;
}

int pmem_shared(uint64_t pa)
{
	return extra_refs && extra_refs[pa / PAGE_SIZE];
}

uint64_t pmem_free_bytes(void)
{
	return (uint64_t)nfree * PAGE_SIZE;
}

uint64_t pmem_total_bytes(void)
{
	return (uint64_t)(npages - HUSK_PROGRAM_MIN / PAGE_SIZE) * PAGE_SIZE;
}
