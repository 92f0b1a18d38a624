/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's address space (mm.c): its page tables and what it mapped. */
#ifndef GUEST_MM_H
#define GUEST_MM_H
#include <stddef.h>
#include <stdint.h>

struct mm {
	uint64_t root;           /* physical address of its PML4 */
	uint64_t *pd[3];         /* its page directories of [0, 3 GiB), 512 entries each */
	uint8_t *region;         /* per 2 MiB of [0, stack_top): enum region_kind */
	uintptr_t image_lo;      /* the program's image: [image_lo, lo) */
	uintptr_t lo, hi;        /* the arena: [end of the image, the stack) */
	uintptr_t brk;
	uintptr_t stack_top;     /* the stack: [hi, stack_top), its guard page at hi */
	uint64_t *used;          /* per page of the arena: handed out */
	uint64_t *noaccess;      /* per page of the arena: PROT_NONE (not present) */
	uint64_t *shared;        /* per page of the arena: MAP_SHARED (fork shares it) */
	size_t noaccess_pages, free_hint, words;
	int boot;                /* the first program's: its tables are the VMM's */
	int refs;                /* processes using it (a vfork child borrows it) */
};

extern struct mm *mm_current;

/* The first program's, as the VMM left it, everything mapped to itself: its
 * image in [HUSK_PROGRAM_MIN, image_end), its stack at the top of RAM, and
 * boot data in its arena (the script, given back by mem_release_boot_data).
 * Physical memory starts here too. */
struct mm *mm_boot(uint64_t image_end, uint64_t ram_size, uintptr_t data, size_t data_len);
/* A copy of parent for fork: the image, every page its arena handed out, the
 * stack pages it ever touched.  NULL: no memory. */
struct mm *mm_fork(struct mm *parent);
/* An empty address space for execve; the image is put in with mm_map_image. */
struct mm *mm_create(uint64_t ram_size);
/* Pages [a, a+len) of a new image (zeroed, backed): 0 or -ENOMEM. */
long mm_map_image(struct mm *m, uintptr_t a, size_t len);
/* The image is in: the arena starts above end. */
long mm_image_done(struct mm *m, uintptr_t end);
/* Where the kernel reaches m's page holding a (NULL: not backed). */
void *mm_page(struct mm *m, uintptr_t a);
void mm_put(struct mm *m);
/* MAP_SHARED: len bytes of pages the mapping shares, anonymous (page NULL:
 * new zero pages) or a file's (page(ctx, i): the kernel address of its page
 * i).  The address, or -errno. */
long mm_map_shared(size_t len, void *(*page)(void *ctx, uint64_t i), void *ctx);
/* The CPU uses m's page tables from now on. */
void mm_switch(struct mm *m);
/* A fault in the program at a: 1 when it was a stack page to back now. */
int mm_fault(uintptr_t a);
#endif
