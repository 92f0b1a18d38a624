/* SPDX-License-Identifier: GPL-2.0-only */
/* A copy-on-write disk over host files (vmm/disks/mapped.c) against a
 * model: a disk of 64 blocks, three extents mapping pieces of two host
 * files, reads and writes at any byte and length in random order.  Every
 * read gives the model's bytes (a block written: the writes; a clean
 * mapped block: its file; the rest: the image), the host files are never
 * written, and a host file that shrinks reads as zeros past its new end. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "disks/mapped.h"
#include "tap.h"

#define B MAPPED_BLOCK
#define BLOCKS 64
#define DISK (BLOCKS * B)

static int files[2];
static int fails_file = -1; /* a file that "is gone": its fd is refused */

static int file_fd(void *ctx, uint32_t f)
{
	(void)ctx;
	return (int)f == fails_file ? -116 /* ESTALE */ : files[f];
}

static int temp_file(const char *tag, const unsigned char *data, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/test_mapped-%s-XXXXXX", tag);
	int fd = mkstemp(path);
	unlink(path);
	if (fd < 0 || (n && pwrite(fd, data, n, 0) != (ssize_t)n))
		exit(2);
	return fd;
}

int main(void)
{
	static unsigned char host[2][20 * B], model[DISK], got[DISK], buf[DISK];
	srand(12345);
	for (size_t i = 0; i < sizeof host; i++)
		((unsigned char *)host)[i] = (unsigned char)rand();
	files[0] = temp_file("a", host[0], sizeof host[0]);
	files[1] = temp_file("b", host[1], sizeof host[1] - 100); /* its last block is short */
	int image = temp_file("img", NULL, 0);
	if (ftruncate(image, DISK))
		return 2;
	struct copyin_extent x[] = {
		{ 4, 0, 8, 0 },       /* blocks 4..11: file a, bytes 0.. */
		{ 12, 8 * B, 6, 1 },  /* 12..17: file b from block 8 (touching the first) */
		{ 30, 15 * B, 5, 1 }, /* 30..34: file b's last five blocks, the last short */
	};
	struct copyin_file f[] = { { "a", 0, 0, sizeof host[0] }, { "b", 0, 0, sizeof host[1] - 100 } };
	struct copyin_map map = { x, 3, 3, f, 2, 2 };
	uint64_t *dirty = calloc(1, mapped_dirty_bytes(DISK));
	struct mapped_disk m = { image, &map, dirty, file_fd, NULL };
	/* the model: the image is zeros, each extent its file's piece */
	memset(model, 0, sizeof model);
	for (int i = 0; i < 3; i++)
		memcpy(model + x[i].block * B, host[x[i].file] + x[i].offset, x[i].blocks * B);
	memset(model + 35 * B - 100, 0, 100); /* past the end of b: zeros */

	off_t pos = 0;
	ok(mapped_read(&m, (char *)got, DISK, &pos) == 0 && pos == DISK && !memcmp(got, model, DISK),
	   "the whole disk reads as the map says before any write");

	int bad_read = 0, bad_write = 0, ops = 0;
	for (; ops < 20000; ops++) {
		size_t at = (size_t)rand() % DISK, n = 1 + (size_t)rand() % (rand() % 4 ? 600 : 3 * B);
		if (n > DISK - at)
			n = DISK - at;
		pos = (off_t)at;
		if (rand() % 2) {
			for (size_t i = 0; i < n; i++)
				buf[i] = (unsigned char)rand();
			if (mapped_write(&m, (char *)buf, n, &pos) || pos != (off_t)(at + n))
				bad_write++;
			memcpy(model + at, buf, n);
		} else if (mapped_read(&m, (char *)got, n, &pos) || memcmp(got, model + at, n)) {
			bad_read++;
		}
	}
	ok(!bad_write, "%d random writes at any byte and length", ops / 2);
	ok(!bad_read, "every read gives the model's bytes");
	pos = 0;
	ok(mapped_read(&m, (char *)got, DISK, &pos) == 0 && !memcmp(got, model, DISK), "the whole disk too");

	int same = 1;
	for (int i = 0; i < 2; i++) {
		size_t n = i ? sizeof host[1] - 100 : sizeof host[0];
		same &= pread(files[i], buf, n + 1, 0) == (ssize_t)n && !memcmp(buf, host[i], n);
	}
	ok(same, "the host files were never written");

	/* dirty bits: set only for mapped blocks written, clear elsewhere */
	int stray = 0;
	for (uint64_t b = 0; b < BLOCKS; b++)
		stray += mapped_is_dirty(dirty, b) && !mapped_extent(&map, b);
	ok(!stray, "no dirty bit outside the map");

	/* a host file that shrinks: its clean blocks past the new end are zeros */
	memset(dirty, 0, mapped_dirty_bytes(DISK));
	if (ftruncate(files[0], 3 * B + 10))
		return 2;
	pos = 4 * B;
	ok(mapped_read(&m, (char *)got, 8 * B, &pos) == 0 && !memcmp(got, host[0], 3 * B + 10) &&
	   got[3 * B + 10] == 0 && !memcmp(got + 3 * B + 10, got + 3 * B + 11, 5 * B - 11),
	   "a host file that shrank reads as zeros past its new end, never beyond its piece");

	/* a gone host file: reads and partial writes of its clean blocks fail, whole-block writes do not need it */
	fails_file = 1;
	pos = 12 * B;
	ok(mapped_read(&m, (char *)got, 10, &pos) != 0, "a clean block of a gone host file is a read error");
	pos = 12 * B + 5;
	ok(mapped_write(&m, (char *)buf, 10, &pos) != 0, "so is a partial write to one (its rest is unknown)");
	pos = 13 * B;
	ok(mapped_write(&m, (char *)buf, B, &pos) == 0 && mapped_is_dirty(dirty, 13), "a whole-block write needs no host file");
	pos = 13 * B;
	ok(mapped_read(&m, (char *)got, B, &pos) == 0 && !memcmp(got, buf, B), "and reads back from the image");
	free(dirty);
	return tap_done();
}
