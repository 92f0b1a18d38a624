/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/virtio_mmio.c and vmm/virtio_blk.c driven by a byte program
 * (mmio_prog.h) over a 1 MiB memfd disk, emptied before every input.
 * Flags byte: bit 0, read-only; bits 1-2, the size blk_init is told:
 * 1 MiB, 1 MiB + 511 (not a whole number of sectors), 2 MiB (past the end
 * of the file, which reads as zeros), 0; bits 3-7, N: a stop request (a
 * timer's) comes at the device's Nth look for one (0: never).  A read-only
 * disk must come out of the run unchanged: still without a single page
 * allocated.  A notify serves at most the requests the available ring held
 * when it came, however the requests' data rewrites the ring, and none once
 * a stop was requested.
 *
 * With the input's last byte odd, the disk is a mapped one (mapped.h): a
 * dataset's when read-only, the workdir's copy-on-write view when not;
 * blocks 16..47 map to a host file of 100 KiB (its tail reads as zeros),
 * blocks 100..131 to one that is gone (file_server_open, wrapped, answers
 * ESTALE).  The host file is never written, and no dirty bit is set outside
 * the map. */
#include <sys/mman.h> /* memfd_create */
#include <sys/stat.h>
#include <unistd.h>
#include "mmio_prog.h"
#include "sandbox/stop.h"
#include "devices/virtio_blk.h"

#define DISK (1u << 20)
#define HOST_FILE (100u << 10)

static struct copyin_extent extents[] = { { 16, 0, 32, 0 }, { 100, 0, 32, 1 } };
static struct copyin_file files[] = { { "a", 0, 0, HOST_FILE }, { "gone", 0, 0, HOST_FILE } };
static const struct copyin_map map = { extents, 2, 2, files, 2, 2 };
static uint64_t dirty[DISK / MAPPED_BLOCK / 64];
static int host_fd = -1;
static uint8_t host_data[HOST_FILE];

/* In place of the file server: file 0 is host_fd, file 1 is gone. */
int __wrap_file_server_open(int sock, uint32_t disk, uint32_t file);
int __wrap_file_server_open(int sock, uint32_t disk, uint32_t file)
{
	(void)sock, (void)disk;
	return file == 0 ? host_fd : -116 /* ESTALE */;
}

static struct blk blk;
static int disk_fd = -1;
static unsigned stop_at, looks;

/* In place of vmm/sandbox/stop.c: the devices' question (whether to stop
 * now) answered as the flags schedule it. */
int stop_now(void)
{
	return stop_at && ++looks >= stop_at;
}

static const struct virtio_device_ops *blk_ops;

static int checked_notify(struct virtio_mmio *d, int qi, const char **err)
{
	struct virtq *q = &d->q[qi];
	uint16_t before = q->last_avail;
	const uint8_t *idx = q->ready ? gpa_ptr(d->mem, q->avail_gpa + 2, 2) : NULL;
	uint16_t pending = idx ? (uint16_t)(rd16(idx) - before) : 0;
	int stopped = stop_at && looks >= stop_at;
	int r = blk_ops->notify(d, qi, err);
	uint16_t served = (uint16_t)(q->last_avail - before);
	CHECK(served <= pending && served <= q->num, "a notify served %u requests, %u were pending", served, pending);
	CHECK(!stopped || !served, "%u requests served after a stop request", served);
	return r;
}

static const struct virtio_device_ops checked_ops = { .notify = checked_notify };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t sizes[4] = { DISK, DISK + 511, 2 * DISK, 0 };
	if (!mem.host) {
		heap_guest_mem(&mem, RAM);
		disk_fd = memfd_create("fuzz_blk", MFD_CLOEXEC);
		CHECK(disk_fd >= 0 && ftruncate(disk_fd, DISK) == 0, "memfd");
		host_fd = memfd_create("fuzz_blk_host", MFD_CLOEXEC);
		for (size_t i = 0; i < HOST_FILE; i++)
			host_data[i] = (uint8_t)(i * 7 + i / 4096);
		CHECK(host_fd >= 0 && pwrite(host_fd, host_data, HOST_FILE, 0) == HOST_FILE, "the host file");
	}
	CHECK(ftruncate(disk_fd, 0) == 0 && ftruncate(disk_fd, DISK) == 0, "emptying the disk");
	uint8_t flags = size ? data[0] : 0;
	int ro = flags & 1;
	stop_at = flags >> 3, looks = 0;
	int mapped = size > 1 && data[size - 1] & 1;
	memset(dirty, 0, sizeof dirty);
	blk_init(&blk, 0xd0000000ull, &mem, disk_fd, sizes[flags >> 1 & 3], ro, "fuzz-disk");
	if (mapped)
		blk_map_files(&blk, &map, ro ? NULL : dirty, -1, 0);
	blk_ops = blk.mmio.ops;
	blk.mmio.ops = &checked_ops;
	mmio_run(&blk.mmio, data, size);
	if (mapped) {
		static uint8_t now[HOST_FILE + 1];
		CHECK(pread(host_fd, now, sizeof now, 0) == HOST_FILE && !memcmp(now, host_data, HOST_FILE),
		      "the host file was written");
		for (uint64_t b = 0; b < DISK / MAPPED_BLOCK; b++)
			CHECK(!mapped_is_dirty(dirty, b) || mapped_extent(&map, b), "block %llu marked dirty, outside the map",
			      (unsigned long long)b);
	}
	if (ro) {
		struct stat st;
		CHECK(blk.bytes_written == 0, "%llu bytes written to a read-only disk",
		      (unsigned long long)blk.bytes_written);
		/* emptied, the memfd has no pages: a write of anything allocates one */
		CHECK(fstat(disk_fd, &st) == 0 && st.st_size == DISK && st.st_blocks == 0, "a read-only disk was written");
	}
	return 0;
}
