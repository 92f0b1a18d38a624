/* SPDX-License-Identifier: GPL-2.0-only */
/* The pages of a snapshot a run touches (NAME.ws beside it).  A guest's
 * first touch of a page after a restore costs a shadow page-table fault on
 * kvm_pvm: ~10-30 us when the host has not mapped the page yet, ~2 us when
 * it has (../shared/platform/KVM-PVM.md).  The first run restored from a
 * snapshot records which pages it read and which it wrote
 * (/proc/self/pagemap: a page of the file's private mapping that was
 * written is anonymous since); later restores have the host map those
 * before the guest runs: read ones from the page cache (shared by every
 * run), written ones copied.  The file only ever speeds a restore up: a bad
 * or missing one is ignored. */
#ifndef HUSK_WORKING_SET_H
#define HUSK_WORKING_SET_H
#include <stddef.h>
#include <stdint.h>
#include "guest_mem.h"

enum { WS_UNTOUCHED, WS_READ, WS_WRITTEN };

/* One byte per 4 KiB page of guest RAM. */
struct working_set {
	uint8_t *page;
	uint64_t pages;
};

/* Reads the working set in fd (opened by the caller) for RAM of ram_size
 * bytes: 0, or -1 (none usable). */
int working_set_load(int fd, uint64_t ram_size, struct working_set *ws);
/* What the guest touched of m, from the pagemap fd (/proc/self/pagemap),
 * written to out.  0, or -1. */
int working_set_record(int pagemap, const struct guest_mem *m, int out);
/* Has the host map the working set's pages of m: those read, and written
 * ones made private copies (m is mapped from the snapshot already). */
void working_set_prefault(const struct working_set *ws, struct guest_mem *m);
void working_set_free(struct working_set *ws);
#endif
