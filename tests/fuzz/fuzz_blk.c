/* vmm/virtio_mmio.c and vmm/virtio_blk.c driven by a byte program
 * (mmio_prog.h) over a 1 MiB memfd disk, emptied before every input.
 * Flags byte: bit 0, read-only; bits 1-2, the size blk_init is told:
 * 1 MiB, 1 MiB + 511 (not a whole number of sectors), 2 MiB (past the end
 * of the file, which reads as zeros), 0.  A read-only disk must come out of
 * the run unchanged. */
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mmio_prog.h"
#include "virtio_blk.h"

#define DISK (1u << 20)

static struct blk blk;
static int disk_fd = -1;
static const uint8_t *disk; /* the memfd, mapped shared: what a write did */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t sizes[4] = { DISK, DISK + 511, 2 * DISK, 0 };
	if (!mem.host) {
		heap_guest_mem(&mem, RAM);
		disk_fd = memfd_create("fuzz_blk", MFD_CLOEXEC);
		CHECK(disk_fd >= 0 && ftruncate(disk_fd, DISK) == 0, "memfd");
		disk = mmap(NULL, DISK, PROT_READ, MAP_SHARED, disk_fd, 0);
		CHECK(disk != MAP_FAILED, "mmap of the memfd");
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
		CHECK(fstat(disk_fd, &st) == 0 && st.st_size == DISK, "a read-only disk changed size");
		static const uint8_t zero[DISK];
		CHECK(!memcmp(disk, zero, DISK), "a read-only disk was written");
	}
	return 0;
}
