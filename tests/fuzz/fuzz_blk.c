/* vmm/virtio_mmio.c and vmm/virtio_blk.c driven by a byte program
 * (mmio_prog.h) over a 1 MiB memfd disk, emptied before every input.
 * Flags byte: bit 0, read-only; bits 1-2, the size blk_init is told:
 * 1 MiB, 1 MiB + 511 (not a whole number of sectors), 2 MiB (past the end
 * of the file, which reads as zeros), 0.  A read-only disk must come out of
 * the run unchanged: still without a single page allocated. */
#include <sys/mman.h> /* memfd_create */
#include <sys/stat.h>
#include <unistd.h>
#include "mmio_prog.h"
#include "virtio_blk.h"

#define DISK (1u << 20)

static struct blk blk;
static int disk_fd = -1;

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
	blk_init(&blk, 0xd0000000ull, &mem, disk_fd, sizes[flags >> 1 & 3], ro, "fuzz-disk");
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
