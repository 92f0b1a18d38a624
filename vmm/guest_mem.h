/* SPDX-License-Identifier: GPL-2.0-only */
/* Guest RAM and the one bounds-checked way to reach it from the host. */
#ifndef HUSK_GUEST_MEM_H
#define HUSK_GUEST_MEM_H
#include <stddef.h>
#include <stdint.h>

struct guest_mem {
	uint8_t *host; /* guest physical 0 */
	uint64_t size;
};

/* Anonymous and 2 MiB-aligned.  Returns 0 or -errno. */
int guest_mem_alloc(struct guest_mem *m, uint64_t size);
/* MADV_HUGEPAGE over the whole 2 MiB pages in [start, end).  Measured on
 * kvm_pvm (../shared/platform/KVM-PVM.md): a guest's first touch of a 4 KiB
 * page is a shadow page-table fault of ~10-15 us on 4 KiB host pages and
 * ~1-5 us on a huge host page, which itself costs the host ~0.3-0.4 ms to
 * fault in (and at times tens of ms of compaction).  So it pays where the
 * guest touches densely (the heap), not for the sparse boot data, kernel,
 * image and stack. */
void guest_mem_hugepages(struct guest_mem *m, uint64_t start, uint64_t end);
void guest_mem_free(struct guest_mem *m);

/* Two doors into guest memory, with two contracts.
 *
 * gpa_ptr: host pointer to [gpa, gpa+len) if all of it is guest RAM, else
 * NULL.  Every address or length that comes from the guest goes through
 * here, and every caller checks for NULL: a bad one is the guest's fault. */
void *gpa_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len);
/* gpa_fixed: the same for the host's own layout (husk/abi.h: the page
 * tables, the report page, the device tree), which lies below HUSK_RAM_MIN
 * and so in any guest's RAM.  Out of range is a bug in husk, never the
 * guest's doing: it aborts with a message instead of returning NULL. */
void *gpa_fixed(const struct guest_mem *m, uint64_t gpa, uint64_t len);
#endif
