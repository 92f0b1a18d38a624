/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's physical page allocator (guest/mm/pmem.c) on the host, its
 * RAM mapped where the guest's direct map puts it, against a model that
 * knows which page is whose: no page handed out twice, every page handed
 * out zero, and an allocation refused only when the model has no room
 * for it (the summary of full words must never hide a free page). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "kernel.h"
#include "mm/pmem.h"
#include "tap.h"

#define RAM (64ul << 20)
#define PAGES (RAM / PAGE_SIZE)
#define FIRST (HUSK_PROGRAM_MIN / PAGE_SIZE)
#define BLOCK_PAGES (BLOCK_SIZE / PAGE_SIZE)

_Noreturn void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# panic: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(2);
}

static uint8_t owner[PAGES]; /* the model: 0 free, else the holder's tag */
static int errors;

static size_t model_free(void)
{
	size_t n = 0;
	for (size_t i = FIRST; i < PAGES; i++)
		n += !owner[i];
	return n;
}

static int model_has_run(size_t n)
{
	for (size_t i = FIRST, run = 0; i < PAGES; i++)
		if ((run = owner[i] ? 0 : run + 1) == n)
			return 1;
	return 0;
}

static int model_has_block(void)
{
	for (size_t b = FIRST; b + BLOCK_PAGES <= PAGES; b += BLOCK_PAGES) {
		size_t i = b;
		while (i < b + BLOCK_PAGES && !owner[i])
			i++;
		if (i == b + BLOCK_PAGES)
			return 1;
	}
	return 0;
}

/* Pages [pa, pa+n) handed to tag: each must be free in the model and zero;
 * then written, so that a page handed out again unzeroed is caught. */
static void claim(uint64_t pa, size_t n, uint8_t tag)
{
	size_t first = pa / PAGE_SIZE;
	if (pa % PAGE_SIZE || first < FIRST || first + n > PAGES) {
		errors++;
		return;
	}
	for (size_t i = first; i < first + n; i++) {
		uint8_t *p = phys_to_virt(i * PAGE_SIZE);
		if (owner[i] || p[0] || p[PAGE_SIZE - 1] || memcmp(p, p + 1, PAGE_SIZE - 1))
			errors++;
		owner[i] = tag;
		memset(p, tag, PAGE_SIZE);
	}
}

struct hold { uint64_t pa; size_t n; };
static struct hold held[PAGES];
static size_t nheld;

static void release(size_t k)
{
	size_t first = held[k].pa / PAGE_SIZE;
	for (size_t i = first; i < first + held[k].n; i++)
		owner[i] = 0;
	pmem_free(held[k].pa, held[k].n);
	held[k] = held[--nheld];
}

int main(void)
{
	if (mmap(phys_to_virt(0), RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
		 -1, 0) != phys_to_virt(0)) {
		printf("Bail out! cannot map the direct map at %p\n", phys_to_virt(0));
		return 1;
	}
	pmem_init(RAM);
	ok(pmem_free_bytes() == (PAGES - FIRST) * PAGE_SIZE, "all RAM above the kernel's is free at first");

	/* Every page taken one at a time, then scattered ones freed: each
	 * must be found again, wherever it is. */
	size_t got = 0;
	for (uint64_t pa; (pa = pmem_alloc(1));) {
		claim(pa, 1, 1);
		held[nheld++] = (struct hold){ pa, 1 };
		got++;
	}
	ok(got == PAGES - FIRST && !errors && pmem_free_bytes() == 0, "every page once, then none (%zu)", got);
	size_t freed = 0;
	for (size_t k = 0; k < nheld;)
		if (held[k].pa / PAGE_SIZE % 97 == 3) {
			release(k);
			freed++;
		} else {
			k++;
		}
	size_t again = 0;
	for (uint64_t pa; (pa = pmem_alloc(1));) {
		claim(pa, 1, 2);
		held[nheld++] = (struct hold){ pa, 1 };
		again++;
	}
	ok(freed > 100 && again == freed && !errors, "%zu scattered pages freed in a full memory, all found again (%zu), zeroed",
	   freed, again);
	while (nheld)
		release(0);
	ok(pmem_free_bytes() == (PAGES - FIRST) * PAGE_SIZE && pmem_alloc_block(0), "all free again, a block to be had");

	/* Random runs, blocks and frees against the model, from a fresh boot
	 * (RAM as the host gives it: zero). */
	memset(phys_to_virt(0), 0, RAM);
	pmem_init(RAM);
	srand(12345);
	int refused_wrongly = 0, ops = 0, mismatched_free = 0;
	for (int step = 0; step < 200000; step++) {
		int what = rand() % 10;
		uint8_t tag = (uint8_t)(1 + rand() % 250);
		if (what < 5) {
			size_t n = rand() % 4 ? 1 : 1 + (size_t)rand() % 40;
			int room = model_has_run(n);
			uint64_t pa = pmem_alloc(n);
			if (pa) {
				claim(pa, n, tag);
				held[nheld++] = (struct hold){ pa, n };
			} else if (room) {
				refused_wrongly++;
			}
		} else if (what < 6) {
			uint64_t want = (uint64_t)(rand() % (PAGES / BLOCK_PAGES)) * BLOCK_SIZE;
			int room = model_has_block();
			uint64_t pa = pmem_alloc_block(rand() % 2 ? want : 0);
			if (pa) {
				if (pa % BLOCK_SIZE)
					errors++;
				claim(pa, BLOCK_PAGES, tag);
				held[nheld++] = (struct hold){ pa, BLOCK_PAGES };
			} else if (room) {
				refused_wrongly++;
			}
		} else if (nheld) {
			release((size_t)rand() % nheld);
		}
		ops++;
		if (step % 1000 == 0 && pmem_free_bytes() != model_free() * PAGE_SIZE)
			mismatched_free++;
	}
	ok(!errors, "%d operations: no page handed out twice, outside RAM or not zero", ops);
	ok(!refused_wrongly, "an allocation is refused only when there is no room for it");
	ok(!mismatched_free, "the free count agrees with the model");
	return tap_done();
}
