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
 * a stop was requested. */
#include <sys/mman.h> /* memfd_create */
#include <sys/stat.h>
#include <unistd.h>
#include "mmio_prog.h"
#include "sandbox/stop.h"
#include "devices/virtio_blk.h"

#define DISK (1u << 20)

static struct blk blk;
static int disk_fd = -1;
static unsigned stop_at, looks;

/* In place of vmm/stop.c: the stop request as the flags schedule it. */
enum stop_reason stop_requested(void)
{
	return stop_at && ++looks >= stop_at ? STOP_TIMEOUT : STOP_NONE;
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
	}
	CHECK(ftruncate(disk_fd, 0) == 0 && ftruncate(disk_fd, DISK) == 0, "emptying the disk");
	uint8_t flags = size ? data[0] : 0;
	int ro = flags & 1;
	stop_at = flags >> 3, looks = 0;
	blk_init(&blk, 0xd0000000ull, &mem, disk_fd, sizes[flags >> 1 & 3], ro, "fuzz-disk");
	blk_ops = blk.mmio.ops;
	blk.mmio.ops = &checked_ops;
	mmio_run(&blk.mmio, data, size);
	if (ro) {
		struct stat st;
		CHECK(blk.bytes_written == 0, "%llu bytes written to a read-only disk",
		      (unsigned long long)blk.bytes_written);
		/* emptied, the memfd has no pages: a write of anything allocates one */
		CHECK(fstat(disk_fd, &st) == 0 && st.st_size == DISK && st.st_blocks == 0, "a read-only disk was written");
	}
	return 0;
}
