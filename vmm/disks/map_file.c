/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "full_io.h"
#include "disks/map_file.h"
#include "disks/mapped.h"

#define MAP_MAGIC "husk ro map 2"
#define SB_UUID (1024 + 104) /* where an ext2 image keeps its UUID, random per build */
#define BS MAPPED_BLOCK

/* The file: a header, the files (device, inode, size, where the path starts in the
 * strings), the extents as struct copyin_extent, then the paths, each
 * ending in a NUL.  It is the user's own cache, but read as if it were not:
 * every count, index and range is checked before use. */

struct map_header {
	char magic[16];
	uint8_t uuid[16]; /* the image's: a map and an image of two builds never pair */
	uint64_t image_bytes, nfiles, nextents, strings;
};

/* The UUID of the image in fd: 0, or -1. */
static int image_uuid(int fd, uint8_t uuid[16])
{
	return pread(fd, uuid, 16, SB_UUID) == 16 ? 0 : -1;
}

struct map_file_entry {
	uint64_t dev, ino, size, path;
};

/* The map fits the image (image_bytes) and itself: extents in order, not
 * overlapping, inside the image, each naming a file and lying within its
 * size rounded up to a block. */
int map_file_valid(const struct copyin_map *m, uint64_t image_bytes)
{
	uint64_t blocks = image_bytes / BS, next = 0;
	for (size_t i = 0; i < m->nx; i++) {
		const struct copyin_extent *x = &m->x[i];
		if (!x->blocks || x->block < next || x->block > blocks || x->blocks > blocks - x->block ||
		    x->file >= m->nf || x->offset % BS)
			return 0;
		uint64_t size = (m->f[x->file].size + BS - 1) / BS * BS;
		if (x->offset > size || (uint64_t)x->blocks * BS > size - x->offset)
			return 0;
		next = x->block + x->blocks;
	}
	return 1;
}

int map_file_save(int fd, int image, const struct copyin_map *m, uint64_t image_bytes)
{
	struct map_header h = { MAP_MAGIC, { 0 }, image_bytes, m->nf, m->nx, 0 };
	if (image_uuid(image, h.uuid))
		return -1;
	for (size_t i = 0; i < m->nf; i++)
		h.strings += strlen(m->f[i].path) + 1;
	size_t fbytes = m->nf * sizeof(struct map_file_entry);
	struct map_file_entry *f = malloc(fbytes ? fbytes : 1);
	if (!f)
		return -1;
	for (size_t i = 0, at = 0; i < m->nf; at += strlen(m->f[i].path) + 1, i++)
		f[i] = (struct map_file_entry){ m->f[i].dev, m->f[i].ino, m->f[i].size, at };
	int r = full_write(fd, &h, sizeof h) || full_write(fd, f, fbytes) || full_write(fd, m->x, m->nx * sizeof *m->x) ? -1 : 0;
	free(f);
	for (size_t i = 0; !r && i < m->nf; i++)
		r = full_write(fd, m->f[i].path, strlen(m->f[i].path) + 1);
	return r;
}

/* The map in fd, if sound and made for the image in `image` (of
 * image_bytes). */
int map_file_load(int fd, int image, struct copyin_map *m, uint64_t image_bytes)
{
	*m = (struct copyin_map){ 0 };
	struct map_header h;
	struct stat st;
	uint8_t uuid[16];
	if (fstat(fd, &st) || full_read(fd, &h, sizeof h) || memcmp(h.magic, MAP_MAGIC, sizeof MAP_MAGIC) ||
	    image_uuid(image, uuid) || memcmp(uuid, h.uuid, sizeof uuid) ||
	    h.image_bytes != image_bytes || h.nfiles > UINT32_MAX || h.nextents > (uint64_t)st.st_size ||
	    h.strings > (uint64_t)st.st_size ||
	    (uint64_t)st.st_size != sizeof h + h.nfiles * sizeof(struct map_file_entry) +
						h.nextents * sizeof(struct copyin_extent) + h.strings)
		return -1;
	struct map_file_entry *f = malloc(h.nfiles * sizeof *f + 1);
	char *strings = malloc(h.strings + 1);
	m->f = calloc(h.nfiles + 1, sizeof *m->f);
	m->x = malloc(h.nextents * sizeof *m->x + 1);
	int r = f && strings && m->f && m->x && !full_read(fd, f, h.nfiles * sizeof *f) &&
			!full_read(fd, m->x, h.nextents * sizeof *m->x) && !full_read(fd, strings, h.strings)
		? 0 : -1;
	m->nx = h.nextents;
	for (size_t i = 0; !r && i < h.nfiles; i++) {
		if (f[i].path >= h.strings || !memchr(strings + f[i].path, 0, h.strings - f[i].path) ||
		    !(m->f[i].path = strdup(strings + f[i].path))) {
			r = -1;
			break;
		}
		m->f[i].dev = f[i].dev, m->f[i].ino = f[i].ino, m->f[i].size = f[i].size;
		m->nf = i + 1;
	}
	free(f);
	free(strings);
	if (!r && !map_file_valid(m, image_bytes))
		r = -1;
	if (r)
		copyin_map_free(m);
	return r;
}

