/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel memory (file system buffers, open files): small blocks from
 * power-of-two size classes carved out of 64 KiB chunks, large ones as whole
 * pages.  Everything comes from physical memory (pmem.c) through the direct
 * map, so the kernel's use counts against guest memory like the programs'
 * own, and it is there in every address space. */
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"
#include "mm/pmem.h"

#define MIN_SHIFT 5   /* 32 bytes */
#define MAX_SHIFT 11  /* 2 KiB: larger requests take pages */
#define CHUNK (64u << 10)

struct free_block { struct free_block *next; };
static struct free_block *free_list[MAX_SHIFT + 1];

static int class_of(size_t size)
{
	int c = MIN_SHIFT;
	while ((1ul << c) < size)
		c++;
	return c;
}

static void *pages(size_t size)
{
	uint64_t pa = pmem_alloc(size / PAGE_SIZE); /* zeroed */
	if (!pa) {
		REPORT->denied_enomem++;
		return NULL;
	}
	return phys_to_virt(pa);
}

void *kalloc(size_t size)
{
	if (!size)
		size = 1;
	if (size > 1ul << MAX_SHIFT)
		return pages(ALIGN_UP(size, PAGE_SIZE));
	int c = class_of(size);
	if (!free_list[c]) {
		char *chunk = pages(CHUNK);
		if (!chunk)
			return NULL;
		for (size_t off = 0; off < CHUNK; off += 1ul << c) {
			struct free_block *b = (struct free_block *)(chunk + off);
			b->next = free_list[c];
			free_list[c] = b;
		}
	}
	struct free_block *b = free_list[c];
	free_list[c] = b->next;
	memset(b, 0, 1ul << c);
	return b;
}

void kfree(void *p, size_t size)
{
	if (!p)
		return;
	if (!size)
		size = 1;
	if (size > 1ul << MAX_SHIFT) {
		pmem_free(virt_to_phys(p), ALIGN_UP(size, PAGE_SIZE) / PAGE_SIZE);
		return;
	}
	int c = class_of(size);
	struct free_block *b = p;
	b->next = free_list[c];
	free_list[c] = b;
}

/* What the file system code (guest/fs) allocates with. */
void *fs_alloc(size_t size)
{
	return kalloc(size);
}

void fs_free(void *p, size_t size)
{
	kfree(p, size);
}
