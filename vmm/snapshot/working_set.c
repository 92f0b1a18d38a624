/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "full_io.h"
#include "snapshot/working_set.h"

#define PAGE 4096ull
#define MAGIC "HUSKWS01"
#define PM_PRESENT (1ull << 63)
#define PM_FILE (1ull << 61)

struct ws_header {
	char magic[8];
	uint64_t ram_size;
};

int working_set_load(int fd, uint64_t ram_size, struct working_set *ws)
{
	struct ws_header h;
	struct stat st;
	ws->pages = ram_size / PAGE;
	ws->page = NULL;
	if (fstat(fd, &st) || (uint64_t)st.st_size != sizeof h + ws->pages || full_pread(fd, &h, sizeof h, 0) ||
	    memcmp(h.magic, MAGIC, sizeof h.magic) || h.ram_size != ram_size || !(ws->page = malloc(ws->pages)) ||
	    full_pread(fd, ws->page, ws->pages, sizeof h)) {
		working_set_free(ws);
		return -1;
	}
	for (uint64_t i = 0; i < ws->pages; i++)
		if (ws->page[i] > WS_WRITTEN) {
			working_set_free(ws);
			return -1;
		}
	return 0;
}

int working_set_record(int pagemap, const struct guest_mem *m, int out)
{
	struct ws_header h = { MAGIC, m->size };
	uint64_t pages = m->size / PAGE, chunk[4096];
	uint8_t *page = malloc(pages);
	if (!page)
		return -1;
	off_t at = (off_t)((uintptr_t)m->host / PAGE * sizeof chunk[0]);
	for (uint64_t i = 0; i < pages; i += 4096) {
		uint64_t n = pages - i < 4096 ? pages - i : 4096;
		if (full_pread(pagemap, chunk, n * sizeof chunk[0], at + (off_t)(i * sizeof chunk[0]))) {
			free(page);
			return -1;
		}
		for (uint64_t k = 0; k < n; k++)
			page[i + k] = !(chunk[k] & PM_PRESENT) ? WS_UNTOUCHED : chunk[k] & PM_FILE ? WS_READ : WS_WRITTEN;
	}
	int r = full_write(out, &h, sizeof h) || full_write(out, page, pages) ? -1 : 0;
	free(page);
	return r;
}

void working_set_prefault(const struct working_set *ws, struct guest_mem *m)
{
	for (uint64_t i = 0; i < ws->pages && i < m->size / PAGE;) {
		uint8_t kind = ws->page[i];
		uint64_t j = i + 1;
		while (j < ws->pages && j < m->size / PAGE && ws->page[j] == kind)
			j++;
		if (kind != WS_UNTOUCHED) /* advisory: a range that fails is faulted in by the guest */
			madvise(m->host + i * PAGE, (j - i) * PAGE, kind == WS_READ ? MADV_POPULATE_READ : MADV_POPULATE_WRITE);
		i = j;
	}
}

void working_set_free(struct working_set *ws)
{
	free(ws->page);
	ws->page = NULL;
}
