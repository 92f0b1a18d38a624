/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "guest_mem.h"

#define HUGE (2ul << 20)

int guest_mem_alloc(struct guest_mem *m, uint64_t size)
{
	/* Over-allocate to carve out a 2 MiB-aligned range, so 2 MiB guest pages
	 * can sit on transparent huge pages. */
	uint8_t *p = mmap(NULL, size + HUGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
	if (a > p)
		munmap(p, a - p);
	if (a + size < p + size + HUGE)
		munmap(a + size, p + size + HUGE - (a + size));
	m->host = a;
	m->size = size;
	return 0;
}

void guest_mem_hugepages(struct guest_mem *m, uint64_t start, uint64_t end)
{
	start = (start + HUGE - 1) & ~(HUGE - 1);
	end &= ~(HUGE - 1);
	if (start < end && end <= m->size)
		madvise(m->host + start, end - start, MADV_HUGEPAGE); /* advisory */
}

void guest_mem_free(struct guest_mem *m)
{
	if (m->host)
		munmap(m->host, m->size);
	m->host = NULL;
}

void *gpa_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	if (gpa > m->size || len > m->size - gpa)
		return NULL;
	return m->host + gpa;
}

void *gpa_fixed(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	void *p = gpa_ptr(m, gpa, len);
	if (!p) {
		fprintf(stderr, "husk: internal error: fixed guest range %#llx+%#llx is outside guest RAM (%#llx bytes)\n",
			(unsigned long long)gpa, (unsigned long long)len, (unsigned long long)m->size);
		abort();
	}
	return p;
}
