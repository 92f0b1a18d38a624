/* SPDX-License-Identifier: GPL-2.0-only */
/* elf_load(): the loader that copies a guest program into guest RAM.  Every
 * refused file must leave guest memory untouched. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include "elf_load.h"
#include "guest_mem.h"
#include "tap.h"

#define RAM (64ull << 20)
#define CANARY 0xAA
#define BASE 0x400000ull   /* where the test image loads (== min == pie_base) */
#define PH_MAX 4           /* room for extra program headers after the two */
#define ENTRY_OFF 0x200    /* entry point, inside the text segment */
#define TEXT_SIZE 0x1000
#define DATA_FILESZ 0x800
#define DATA_MEMSZ 0x2000
#define TRAILER 0x100      /* file bytes no segment covers */
#define FILE_SIZE (TEXT_SIZE + DATA_FILESZ + TRAILER)

static struct guest_mem mem;
static const struct elf_limits limits = { BASE, RAM - (9ull << 20), BASE, 1, 0 };

/* A file image: Elf64 structures are reached through the aligned buffer. */
struct img {
	union { Elf64_Ehdr eh; uint8_t b[FILE_SIZE]; } u;
	size_t size;
};

static Elf64_Phdr *phdr(struct img *im, int i)
{
	return (Elf64_Phdr *)(im->u.b + sizeof(Elf64_Ehdr)) + i;
}

static void set_phdr(struct img *im, int i, uint32_t type, uint32_t flags, uint64_t off, uint64_t vaddr,
		     uint64_t filesz, uint64_t memsz)
{
	*phdr(im, i) = (Elf64_Phdr){ .p_type = type, .p_flags = flags, .p_offset = off, .p_vaddr = vaddr,
				     .p_paddr = vaddr, .p_filesz = filesz, .p_memsz = memsz, .p_align = 0x1000 };
}

/* A valid static executable: text [0, 0x1000) holding the headers, data with
 * bss after it.  ET_DYN links at 0 and is loaded at pie_base. */
static void build(struct img *im, uint16_t type)
{
	memset(im, 0, sizeof *im);
	uint64_t link = type == ET_DYN ? 0 : BASE;
	for (size_t i = ENTRY_OFF; i < FILE_SIZE; i++)
		im->u.b[i] = (uint8_t)(i * 7 + 3);
	Elf64_Ehdr *eh = &im->u.eh;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = type;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = link + ENTRY_OFF;
	eh->e_phoff = sizeof *eh;
	eh->e_ehsize = sizeof *eh;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	set_phdr(im, 0, PT_LOAD, PF_R | PF_X, 0, link, TEXT_SIZE, TEXT_SIZE);
	set_phdr(im, 1, PT_LOAD, PF_R | PF_W, TEXT_SIZE, link + TEXT_SIZE, DATA_FILESZ, DATA_MEMSZ);
	im->size = FILE_SIZE;
}

static void fill_ram(void)
{
	memset(mem.host, CANARY, mem.size);
}

/* All of [gpa, gpa+len) holds byte c. */
static int ram_is(uint64_t gpa, uint64_t len, uint8_t c)
{
	static uint8_t block[1 << 16];
	memset(block, c, sizeof block);
	for (uint64_t off = 0; off < len; off += sizeof block) {
		uint64_t n = len - off < sizeof block ? len - off : sizeof block;
		if (memcmp(mem.host + gpa + off, block, n))
			return 0;
	}
	return 1;
}

static int load(const struct img *im, const struct elf_limits *lim, struct elf_image *out, char *err, size_t n)
{
	err[0] = 0;
	return elf_load(&mem, im->u.b, im->size, lim, out, err, n);
}

static void check_loaded(const char *what, struct img *im, const struct elf_limits *lim)
{
	struct elf_image out = { 0 };
	char err[256];
	fill_ram();
	int r = load(im, lim, &out, err, sizeof err);
	ok(r == 0, "%s: loads (%s)", what, err);
	ok(out.entry == BASE + ENTRY_OFF, "%s: entry %#llx", what, (unsigned long long)out.entry);
	ok(out.phdr == BASE + sizeof(Elf64_Ehdr), "%s: phdr %#llx", what, (unsigned long long)out.phdr);
	ok(out.phnum == 2, "%s: phnum %llu", what, (unsigned long long)out.phnum);
	ok(out.lo == BASE && out.hi == BASE + TEXT_SIZE + DATA_MEMSZ, "%s: range [%#llx, %#llx)", what,
	   (unsigned long long)out.lo, (unsigned long long)out.hi);
	ok(!memcmp(mem.host + BASE, im->u.b, TEXT_SIZE + DATA_FILESZ), "%s: text and data copied", what);
	ok(ram_is(BASE + TEXT_SIZE + DATA_FILESZ, DATA_MEMSZ - DATA_FILESZ, 0), "%s: bss zeroed", what);
	ok(ram_is(0, BASE, CANARY) && ram_is(out.hi, mem.size - out.hi, CANARY),
	   "%s: nothing written outside the image", what);
}

static void check_refused_lim(const char *what, struct img *im, const struct elf_limits *lim)
{
	struct elf_image out = { 0 };
	char err[256];
	fill_ram();
	int r = load(im, lim, &out, err, sizeof err);
	ok(r == -1 && err[0], "%s: refused (%s)", what, err);
	ok(ram_is(0, mem.size, CANARY), "%s: guest memory untouched", what);
}

static void check_refused(const char *what, struct img *im)
{
	check_refused_lim(what, im, &limits);
}

/* One malformed variant of the valid ET_EXEC image per case. */
struct bad_case {
	const char *what;
	void (*mutate)(struct img *);
};

static void m_short(struct img *im) { im->size = sizeof(Elf64_Ehdr) - 24; }
static void m_tiny(struct img *im) { im->size = 3; }
static void m_magic(struct img *im) { im->u.b[EI_MAG1] = 'F'; }
static void m_class32(struct img *im) { im->u.b[EI_CLASS] = ELFCLASS32; }
static void m_bigendian(struct img *im) { im->u.b[EI_DATA] = ELFDATA2MSB; }
static void m_aarch64(struct img *im) { im->u.eh.e_machine = EM_AARCH64; }
static void m_rel(struct img *im) { im->u.eh.e_type = ET_REL; }
static void m_phentsize(struct img *im) { im->u.eh.e_phentsize = sizeof(Elf64_Phdr) - 8; }
static void m_phnum0(struct img *im) { im->u.eh.e_phnum = 0; }
static void m_phnum_big(struct img *im) { im->u.eh.e_phnum = 65; } /* within the file, above 64 */
static void m_phoff_end(struct img *im) { im->u.eh.e_phoff = im->size - sizeof(Elf64_Phdr); }
static void m_phoff_wrap(struct img *im) { im->u.eh.e_phoff = UINT64_MAX - 16; }
static void m_filesz_end(struct img *im) { phdr(im, 1)->p_filesz = DATA_FILESZ + TRAILER + 1; }
static void m_offset_wrap(struct img *im) { phdr(im, 1)->p_offset = UINT64_MAX - 0x100; }
static void m_filesz_memsz(struct img *im) { phdr(im, 1)->p_memsz = DATA_FILESZ - 1; }
static void m_vaddr_wrap(struct img *im)
{
	phdr(im, 1)->p_vaddr = 0xfffffffffffff000ull;
	phdr(im, 1)->p_memsz = 0x2000;
}
static void m_below_min(struct img *im) { phdr(im, 1)->p_vaddr = BASE - 0x200000; }
static void m_above_max(struct img *im) { phdr(im, 1)->p_vaddr = limits.max - 0x1000; }
static void m_out_of_ram(struct img *im) { phdr(im, 1)->p_vaddr = RAM + 0x100000; }
static void m_overlap(struct img *im) { phdr(im, 1)->p_vaddr = BASE + TEXT_SIZE / 2; }
static void m_huge(struct img *im) { phdr(im, 1)->p_memsz = 1ull << 40; }
static void m_entry_data(struct img *im) { im->u.eh.e_entry = BASE + TEXT_SIZE + 0x10; }
static void m_entry_nowhere(struct img *im) { im->u.eh.e_entry = BASE + 0x100000; }
static void m_no_load(struct img *im)
{
	phdr(im, 0)->p_type = PT_NOTE;
	phdr(im, 1)->p_type = PT_NOTE;
}
static void m_interp(struct img *im)
{
	im->u.eh.e_phnum = 3;
	set_phdr(im, 2, PT_INTERP, PF_R, ENTRY_OFF, BASE + ENTRY_OFF, 16, 16);
}
/* the program headers moved to bytes no segment loads */
static void m_phdrs_unloaded(struct img *im)
{
	memcpy(im->u.b + TEXT_SIZE + DATA_FILESZ, phdr(im, 0), 2 * sizeof(Elf64_Phdr));
	im->u.eh.e_phoff = TEXT_SIZE + DATA_FILESZ;
}
/* PT_PHDR claims the headers sit at an address no PT_LOAD covers */
static void m_pt_phdr_unloaded(struct img *im)
{
	im->u.eh.e_phnum = 3;
	set_phdr(im, 2, PT_PHDR, PF_R, sizeof(Elf64_Ehdr), BASE + 0x100000, 3 * sizeof(Elf64_Phdr),
		 3 * sizeof(Elf64_Phdr));
}

static const struct bad_case bad[] = {
	{ "file shorter than the ELF header", m_short },
	{ "3-byte file", m_tiny },
	{ "not ELF magic", m_magic },
	{ "ELFCLASS32", m_class32 },
	{ "big-endian", m_bigendian },
	{ "EM_AARCH64", m_aarch64 },
	{ "ET_REL", m_rel },
	{ "PT_INTERP (dynamic)", m_interp },
	{ "wrong e_phentsize", m_phentsize },
	{ "phnum 0", m_phnum0 },
	{ "phnum 65", m_phnum_big },
	{ "phoff+phnum past the end of the file", m_phoff_end },
	{ "phoff+phnum wraps", m_phoff_wrap },
	{ "segment offset+filesz past the end of the file", m_filesz_end },
	{ "segment offset+filesz wraps", m_offset_wrap },
	{ "filesz > memsz", m_filesz_memsz },
	{ "vaddr+memsz overflows 64 bits", m_vaddr_wrap },
	{ "segment below min", m_below_min },
	{ "segment ends above max", m_above_max },
	{ "segment beyond RAM", m_out_of_ram },
	{ "overlapping PT_LOADs", m_overlap },
	{ "memsz 1<<40", m_huge },
	{ "entry in a non-executable segment", m_entry_data },
	{ "entry outside every segment", m_entry_nowhere },
	{ "no PT_LOAD", m_no_load },
	{ "program headers not loaded (need_phdr)", m_phdrs_unloaded },
	{ "PT_PHDR outside every PT_LOAD", m_pt_phdr_unloaded },
};

static void test_bad_cases(void)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct img im;
		build(&im, ET_EXEC);
		bad[i].mutate(&im);
		check_refused(bad[i].what, &im);
	}
}

static void test_pie(void)
{
	struct img im;
	build(&im, ET_DYN);
	check_loaded("ET_DYN static-pie", &im, &limits);

	struct elf_limits no_pie = limits;
	no_pie.pie_base = 0;
	check_refused_lim("ET_DYN with pie_base 0", &im, &no_pie);

	/* vaddr + bias wraps */
	phdr(&im, 1)->p_vaddr = 0ull - BASE + 0x1000;
	check_refused("ET_DYN vaddr+bias overflows", &im);
}

static void test_pt_phdr(void)
{
	struct img im;
	build(&im, ET_EXEC);
	im.u.eh.e_phnum = 3;
	set_phdr(&im, 2, PT_PHDR, PF_R, sizeof(Elf64_Ehdr), BASE + sizeof(Elf64_Ehdr), 3 * sizeof(Elf64_Phdr),
		 3 * sizeof(Elf64_Phdr));
	struct elf_image out = { 0 };
	char err[256];
	fill_ram();
	ok(load(&im, &limits, &out, err, sizeof err) == 0 && out.phdr == BASE + sizeof(Elf64_Ehdr) &&
	   out.phnum == 3, "PT_PHDR inside the text segment: phdr %#llx", (unsigned long long)out.phdr);
}

/* A dynamic program (the guest's exec loads its interpreter): PT_INTERP's
 * path is given back when allowed, refused when not, and must end where
 * its segment says. */
static void test_interp(void)
{
	struct img im;
	build(&im, ET_DYN);
	im.u.eh.e_phnum = 3;
	static const char path[] = "/lib/ld-musl-x86_64.so.1";
	memcpy(im.u.b + TEXT_SIZE + 64, path, sizeof path);
	set_phdr(&im, 2, PT_INTERP, PF_R, TEXT_SIZE + 64, 0, sizeof path, sizeof path);
	struct elf_limits dyn = limits;
	dyn.allow_interp = 1;
	struct elf_image out = { 0 };
	char err[256];
	fill_ram();
	ok(load(&im, &dyn, &out, err, sizeof err) == 0 && out.interp_len == sizeof path &&
	   !strcmp((const char *)im.u.b + out.interp_off, path), "PT_INTERP allowed: its path is given back (%s)", err);
	check_refused("PT_INTERP where only static programs may run", &im);
	im.u.b[TEXT_SIZE + 64 + sizeof path - 1] = 'x';
	ok(load(&im, &dyn, &out, err, sizeof err) == -1 && strstr(err, "interpreter"),
	   "PT_INTERP's path without its NUL: refused (%s)", err);
	im.u.b[TEXT_SIZE + 64 + sizeof path - 1] = 0;
	phdr(&im, 2)->p_filesz = 1;
	ok(load(&im, &dyn, &out, err, sizeof err) == -1, "PT_INTERP of one byte: refused, as Linux");
	phdr(&im, 2)->p_filesz = sizeof path;
	phdr(&im, 2)->p_offset = FILE_SIZE - 4;
	ok(load(&im, &dyn, &out, err, sizeof err) == -1, "PT_INTERP past the end of the file: refused");
}

static void test_short_err(void)
{
	struct img im;
	build(&im, ET_EXEC);
	m_aarch64(&im);
	struct elf_image out;
	char err[8];
	memset(err, 'x', sizeof err);
	ok(load(&im, &limits, &out, err, 4) == -1 && err[3] == 0 && err[4] == 'x',
	   "the reason is cut to errlen");
}

int main(void)
{
	if (guest_mem_alloc(&mem, RAM)) {
		printf("Bail out! guest_mem_alloc\n");
		return 1;
	}
	struct img im;
	build(&im, ET_EXEC);
	check_loaded("ET_EXEC", &im, &limits);
	test_pie();
	test_pt_phdr();
	test_interp();
	test_bad_cases();
	test_short_err();
	guest_mem_free(&mem);
	return tap_done();
}
