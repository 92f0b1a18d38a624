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
	uint8_t *copies;         /* per 2 MiB: pages copied on write one by one (mm.c collapse) */
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
	struct mm *forked_from;  /* the parent's, while both exist (pages shared copy-on-write) */
	struct mm *next;         /* every address space (mm.c) */
	/* What /proc shows of the program in it (fs/procfs.c), as Linux's
	 * mm_struct keeps it: set by execve (the first program's exe by
	 * procfs.c), copied by fork. */
	char *exe;               /* the file's absolute path (strlen + 1 bytes), or NULL */
	int exe_dev;             /* its mount's st_dev */
	uint32_t exe_ino;
	/* arch/syscall_rewrite.c's stubs: the page being filled, its bytes used,
	 * pages taken; copied by fork. */
	uintptr_t stub_page;
	uint32_t stub_used, stub_pages;
	struct mm_layout {       /* where stack_build put them (program.c) */
		uintptr_t arg_start, arg_end, env_start, env_end, start_stack, phdr;
		uint64_t phnum;
	} layout;
};

extern struct mm *mm_current;

/* The first program's, as the VMM left it, everything mapped to itself: its
 * image in [HUSK_PROGRAM_MIN, image_end), its stack at the top of RAM, and
 * boot data in its arena (the script, given back by mem_release_boot_data).
 * Physical memory starts here too. */
struct mm *mm_boot(uint64_t image_end, uint64_t ram_size, uintptr_t data, size_t data_len);
/* The child's for fork: the parent's image, every page its arena handed out
 * and the stack pages it ever touched, shared copy-on-write (MAP_SHARED
 * pages shared for good), but for the pages at the caller's stack pointer
 * sp and thread pointer tp, which both write at once.  NULL: no memory. */
struct mm *mm_fork(struct mm *parent, uintptr_t sp, uintptr_t tp);
/* An empty address space for execve; the image is put in with mm_map_image. */
struct mm *mm_create(uint64_t ram_size);
/* Pages [a, a+len) of a new image (zeroed, backed): 0 or -ENOMEM. */
long mm_map_image(struct mm *m, uintptr_t a, size_t len);
/* The image is in: the arena starts above end. */
long mm_image_done(struct mm *m, uintptr_t end);
/* Where the kernel reaches m's page holding a (NULL: not backed); to write
 * it, made m's own first if it shares it copy-on-write (NULL: no memory). */
void *mm_page(struct mm *m, uintptr_t a);
void *mm_page_for_write(struct mm *m, uintptr_t a);
void mm_put(struct mm *m);
/* MAP_SHARED: len bytes of pages the mapping shares, anonymous (page NULL:
 * new zero pages) or a file's (page(ctx, i): the kernel address of its page
 * i).  The address, or -errno. */
long mm_map_shared(size_t len, void *(*page)(void *ctx, uint64_t i), void *ctx);
/* The CPU uses m's page tables from now on. */
void mm_switch(struct mm *m);
/* A fault in the program at a: 1 when it was a stack page to back now. */
int mm_fault(uintptr_t a);
/* A write fault at a (the program's, or the kernel's on its behalf): 1 when
 * a's page was shared copy-on-write and is the process's own now; 0 when it
 * was not such a page; -ENOMEM when no page is left for the copy. */
int mm_cow_fault(uintptr_t a);
/* Whether a is in a MAP_SHARED page of the current process. */
int mm_is_shared(uintptr_t a);
/* Whether a is in the current program's part of the address space
 * (mapped or not), not the kernel's. */
int mm_is_program(uintptr_t a);

/* For /proc (fs/procfs.c). */
void mm_set_exe(struct mm *m, const char *path, int dev, uint32_t ino); /* without memory: none */
/* Bytes backed: the image, the arena's pages handed out (of them shared:
 * MAP_SHARED), the stack's pages touched. */
struct mm_usage { uint64_t image, arena, shared, stack; };
void mm_usage(const struct mm *m, struct mm_usage *u);
/* A run of like pages: the image, the arena's runs handed out (the brk
 * heap, other private, shared, PROT_NONE), the stack. */
enum mm_area_kind { AREA_IMAGE, AREA_HEAP, AREA_PRIVATE, AREA_SHARED, AREA_NONE, AREA_STACK };
struct mm_area { uintptr_t start, end; int kind; };
/* The first area that ends above a: 1, or 0 when there is none. */
int mm_area(const struct mm *m, uintptr_t a, struct mm_area *out);
#endif
