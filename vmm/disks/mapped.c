/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "disks/mapped.h"
#include "sandbox/stop.h"

#define B MAPPED_BLOCK
/* Bytes per pread/pwrite: a file's pread is not interrupted by the timer
 * signal, so a stop request is checked between chunks. */
#define IO_CHUNK (1u << 20)

size_t mapped_dirty_bytes(uint64_t bytes)
{
	uint64_t words = (bytes / B + 63) / 64;
	return (size_t)((words * 8 + 4095) & ~4095ull);
}

int mapped_transfer(int fd, int writing, char *p, size_t n, off_t *pos)
{
	while (n) {
		if (stop_now())
			return -1;
		size_t step = n < IO_CHUNK ? n : IO_CHUNK;
		ssize_t k = writing ? pwrite(fd, p, step, *pos) : pread(fd, p, step, *pos);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0 && !writing) /* past the end of a short file: zeros */
			memset(p, 0, n), k = (ssize_t)n;
		else if (k <= 0)
			return -1;
		p += k, n -= k, *pos += k;
	}
	return 0;
}

/* The extent holding block blk, or the first after it (map->nx: none). */
static size_t extent_at(const struct copyin_map *m, uint64_t blk)
{
	size_t lo = 0, hi = m->nx;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->x[mid].block + m->x[mid].blocks <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct copyin_extent *mapped_extent(const struct copyin_map *m, uint64_t blk)
{
	size_t i = extent_at(m, blk);
	return i < m->nx && m->x[i].block <= blk ? &m->x[i] : NULL;
}

/* The extent holding the byte at `at`, or NULL; *next gets where the next
 * extent starts (UINT64_MAX: none) when there is none there. */
static const struct copyin_extent *extent_of(const struct copyin_map *m, uint64_t at, uint64_t *next)
{
	size_t i = extent_at(m, at / B);
	const struct copyin_extent *x = i < m->nx ? &m->x[i] : NULL;
	*next = x ? x->block * B : UINT64_MAX;
	return x && at >= *next ? x : NULL;
}

size_t mapped_run(const struct mapped_disk *m, uint64_t at, size_t n, const struct copyin_extent **clean)
{
	uint64_t next;
	const struct copyin_extent *x = extent_of(m->map, at, &next);
	int dirty = x && mapped_is_dirty(m->dirty, at / B);
	*clean = x && !dirty ? x : NULL;
	if (!x)
		return next - at < n ? (size_t)(next - at) : n;
	uint64_t end = (x->block + x->blocks) * B;
	if (end - at < n)
		n = (size_t)(end - at);
	size_t step = (size_t)(B - at % B);
	while (m->dirty && step < n && mapped_is_dirty(m->dirty, (at + step) / B) == dirty)
		step += B;
	return m->dirty && step < n ? step : n;
}

/* The piece of extent x's file under the bytes at `at` (n of them). */
static int read_file(const struct mapped_disk *m, const struct copyin_extent *x, char *p, size_t n, uint64_t at)
{
	int fd = m->file_fd(m->ctx, x->file);
	off_t in_file = (off_t)(x->offset + (at - x->block * B));
	return fd < 0 ? -1 : mapped_transfer(fd, 0, p, n, &in_file);
}

int mapped_read(const struct mapped_disk *m, char *p, size_t n, off_t *pos)
{
	while (n) {
		uint64_t at = (uint64_t)*pos;
		const struct copyin_extent *x;
		size_t step = mapped_run(m, at, n, &x);
		off_t where = *pos;
		if (x ? read_file(m, x, p, step, at) : mapped_transfer(m->image, 0, p, step, &where))
			return -1;
		p += step, n -= step, *pos += (off_t)step;
	}
	return 0;
}

static void mark(uint64_t *dirty, uint64_t from, uint64_t to)
{
	for (uint64_t b = from / B; b * B < to; b++)
		dirty[b / 64] |= 1ull << (b % 64);
}

int mapped_write(const struct mapped_disk *m, const char *p, size_t n, off_t *pos)
{
	while (n) {
		uint64_t at = (uint64_t)*pos, next;
		const struct copyin_extent *x = extent_of(m->map, at, &next);
		size_t step;
		if (!x) {
			step = next - at < n ? (size_t)(next - at) : n;
		} else if (mapped_is_dirty(m->dirty, at / B) || (at % B == 0 && n >= B)) {
			/* a run of blocks written before, or written whole now */
			uint64_t end = (x->block + x->blocks) * B;
			step = (size_t)(B - at % B);
			while (step < n && at + step < end &&
			       (mapped_is_dirty(m->dirty, (at + step) / B) || n - step >= B))
				step += B;
			if (step > n)
				step = n;
			if (step > end - at)
				step = (size_t)(end - at);
		} else {
			/* part of a clean block: the block whole, from its file, then this part */
			char block[B];
			uint64_t start = at / B * B;
			step = (size_t)(B - at % B) < n ? (size_t)(B - at % B) : n;
			off_t where = (off_t)start;
			if (read_file(m, x, block, B, start))
				return -1;
			memcpy(block + at % B, p, step);
			if (mapped_transfer(m->image, 1, block, B, &where))
				return -1;
			mark(m->dirty, at, at + step);
			p += step, n -= step, *pos += (off_t)step;
			continue;
		}
		off_t where = *pos;
		if (mapped_transfer(m->image, 1, (char *)p, step, &where))
			return -1;
		if (x)
			mark(m->dirty, at, at + step);
		p += step, n -= step, *pos += (off_t)step;
	}
	return 0;
}
