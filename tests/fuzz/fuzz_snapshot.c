/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/snapshot/snapshot_file.c on arbitrary bytes as a snapshot file, and
 * working_set.c on them as a working set.  Each input is sealed with the
 * harness's key first (snapshot_file_seal), as if husk had written it, and
 * its own header's key is the one expected: what is fuzzed is everything
 * behind the digest, the checks a file that passes it still gets.  A file
 * snapshot_open accepts must keep its promises: the vCPU state valid, every
 * extent inside guest RAM and the file, the devices' states either
 * restored onto a device of their kind or refused, and the memory mapped
 * with the file's bytes where the extents say. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"
#include "snapshot/snapshot_file.h"
#include "snapshot/working_set.h"

static const uint8_t key[SNAPSHOT_MAC_KEY] = { 1, 2, 3, 4 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int dir = -1;
	if (dir < 0) {
		char tmpl[] = "/tmp/fuzz_snapshot.XXXXXX";
		if (!mkdtemp(tmpl) || (dir = open(tmpl, O_RDONLY | O_DIRECTORY)) < 0)
			abort();
	}
	unlinkat(dir, "s.snap", 0);
	unlinkat(dir, "s.snap.ok", 0);
	int fd = openat(dir, "s.snap", O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snapshot_file_seal(fd, key);
	struct snapshot_key k;
	memset(&k, 0, sizeof k);
	if (size >= 16 + sizeof k)
		memcpy(&k, data + 16, sizeof k);
	struct snapshot s;
	char err[256] = "";
	if (snapshot_open(dir, "s.snap", key, &k, &s, err, sizeof err)) {
		CHECK(err[0], "a refusal without a reason");
	} else {
		struct stat st;
		CHECK(!fstat(fd, &st) && (uint64_t)st.st_size == s.bytes, "the size it read is not the file's");
		CHECK(vcpu_state_valid(&s.state.vcpu), "an invalid vCPU state accepted");
		CHECK(s.state.ndev <= SNAPSHOT_DEVICES, "too many devices accepted");
		for (uint32_t i = 0; i < s.next; i++)
			CHECK(s.ext[i].gpa + s.ext[i].len <= s.state.ram_size && s.ext[i].off + s.ext[i].len <= s.bytes,
			      "extent %u outside RAM or the file", i);
		struct guest_mem m;
		if (guest_mem_alloc(&m, s.state.ram_size))
			abort();
		if (!snapshot_map(&s, &m, err, sizeof err)) {
			for (uint32_t i = 0; i < s.next; i++) {
				uint8_t b;
				CHECK(pread(fd, &b, 1, (off_t)s.ext[i].off) == 1 && m.host[s.ext[i].gpa] == b,
				      "extent %u not mapped from the file", i);
			}
		}
		static const struct virtio_device_ops no_ops;
		for (uint32_t i = 0; i < s.state.ndev; i++) {
			struct virtio_mmio d;
			struct virtio_device dev = { .id = s.state.dev[i].device_id, .nqueues = 2, .features = ~0ull,
						     .ops = &no_ops };
			const char *why = NULL;
			virtio_mmio_init(&d, 0xd0000000, &m, &dev);
			if (virtio_mmio_restore(&d, &s.state.dev[i], &why))
				CHECK(why, "a refused device state without a reason");
			for (int q = 0; !why && q < 2; q++)
				CHECK(!d.q[q].ready || gpa_ptr(&m, d.q[q].desc_gpa, 16ull * d.q[q].num),
				      "a ready queue outside RAM");
		}
		guest_mem_free(&m);
		snapshot_close(&s);
	}
	struct working_set ws;
	if (!working_set_load(fd, 64ull << 20, &ws)) {
		for (uint64_t i = 0; i < ws.pages; i++)
			CHECK(ws.page[i] <= WS_WRITTEN, "a bad working-set byte accepted");
		working_set_free(&ws);
	}
	close(fd);
	return 0;
}
