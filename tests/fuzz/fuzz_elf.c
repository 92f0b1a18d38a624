/* SPDX-License-Identifier: GPL-2.0-only */
/* loader/elf_load.c on arbitrary bytes, with the limits vmm/main.c gives a
 * program in a 64 MiB guest.  On success the result must keep every promise
 * of elf_load.h: the loaded range inside the limits, the entry point in an
 * executable segment, the program headers loaded where phdr says, and each
 * segment's bytes copied from the file with the rest zeroed. */
#include <elf.h>
#include "elf_load.h"
#include "fuzz.h"
#include "husk/abi.h"

#define RAM (64ull << 20)
#define POISON 0xa5

static struct guest_mem mem;

static int all_zero(const uint8_t *p, uint64_t n)
{
	static const uint8_t zero[65536];
	for (uint64_t k; n; p += k, n -= k) {
		k = n < sizeof zero ? n : sizeof zero;
		if (memcmp(p, zero, k))
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!mem.host) {
		heap_guest_mem(&mem, RAM);
		memset(mem.host, POISON, RAM);
	}
	/* As vmm/main.c: 8 MiB of stack and 1 MiB of heap above the image. */
	const struct elf_limits lim = { HUSK_PROGRAM_MIN, RAM - HUSK_STACK_SIZE - (1ull << 20), HUSK_PIE_BASE, 1, 0 };
	struct elf_image img;
	char err[256] = "";
	if (elf_load(&mem, data, size, &lim, &img, err, sizeof err)) {
		CHECK(err[0], "failure without a reason");
		return 0;
	}

	/* elf_load accepted it, so the headers are well formed. */
	Elf64_Ehdr eh;
	memcpy(&eh, data, sizeof eh);
	uint64_t bias = eh.e_type == ET_DYN ? lim.pie_base : 0;
	CHECK(img.lo >= lim.min && img.lo < img.hi && img.hi <= lim.max, "range [%#llx, %#llx)",
	      (unsigned long long)img.lo, (unsigned long long)img.hi);
	CHECK(img.entry >= img.lo && img.entry < img.hi, "entry %#llx", (unsigned long long)img.entry);
	CHECK(img.phnum == eh.e_phnum, "phnum %llu", (unsigned long long)img.phnum);
	uint64_t ph_bytes = img.phnum * sizeof(Elf64_Phdr);
	CHECK(img.phdr >= img.lo && img.phdr <= img.hi && ph_bytes <= img.hi - img.phdr, "phdr %#llx",
	      (unsigned long long)img.phdr);
	CHECK(!memcmp(mem.host + img.phdr, data + eh.e_phoff, ph_bytes), "the program headers at phdr differ");

	int entry_x = 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr p;
		memcpy(&p, data + eh.e_phoff + i * sizeof p, sizeof p);
		if (p.p_type != PT_LOAD)
			continue;
		uint64_t start = p.p_vaddr + bias;
		CHECK(start >= img.lo && start <= img.hi && p.p_memsz <= img.hi - start, "segment %d outside the range", i);
		CHECK(p.p_filesz <= p.p_memsz && p.p_offset <= size && p.p_filesz <= size - p.p_offset,
		      "segment %d accepted with bad sizes", i);
		entry_x |= (p.p_flags & PF_X) && img.entry >= start && img.entry - start < p.p_memsz;
		CHECK(!memcmp(mem.host + start, data + p.p_offset, p.p_filesz), "segment %d: bytes differ from the file", i);
		CHECK(all_zero(mem.host + start + p.p_filesz, p.p_memsz - p.p_filesz),
		      "segment %d: memory past the file data is not zeroed", i);
	}
	CHECK(entry_x, "entry %#llx is not in an executable segment", (unsigned long long)img.entry);
	/* Dirty what was loaded, so the next input's zero check means something. */
	memset(mem.host + img.lo, POISON, img.hi - img.lo);
	return 0;
}
