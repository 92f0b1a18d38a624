/* SPDX-License-Identifier: GPL-2.0-only */
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include "errmsg.h"
#include "elf_load.h"

#define MAX_PHNUM 64

/* a + b without wrapping past UINT64_MAX */
static int add_ok(uint64_t a, uint64_t b, uint64_t *sum)
{
	*sum = a + b;
	return *sum >= a;
}

int elf_load(struct guest_mem *m, const uint8_t *file, size_t size, const struct elf_limits *lim,
	     struct elf_image *out, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	if (size < EI_NIDENT || memcmp(file, ELFMAG, SELFMAG))
		return errmsg(err, errlen, "not an ELF file");
	if (file[EI_CLASS] != ELFCLASS64)
		return errmsg(err, errlen, "not a 64-bit ELF file (husk runs x86-64 programs)");
	if (size < sizeof eh)
		return errmsg(err, errlen, "truncated ELF header");
	memcpy(&eh, file, sizeof eh);
	if (file[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return errmsg(err, errlen, "not an x86-64 ELF file (machine %u)", eh.e_machine);
	if (eh.e_type != ET_EXEC && !(eh.e_type == ET_DYN && lim->pie_base))
		return errmsg(err, errlen, "not an executable (ELF type %u)", eh.e_type);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > MAX_PHNUM)
		return errmsg(err, errlen, "bad program header table (%u entries of %u bytes)", eh.e_phnum,
			    eh.e_phentsize);
	uint64_t ph_end;
	if (!add_ok(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), &ph_end) || ph_end > size)
		return errmsg(err, errlen, "truncated: program headers lie past the end of the file");

	Elf64_Phdr ph[MAX_PHNUM];
	out->interp_off = out->interp_len = 0;
	memcpy(ph, file + eh.e_phoff, eh.e_phnum * sizeof(Elf64_Phdr));
	uint64_t bias = eh.e_type == ET_DYN ? lim->pie_base : 0;
	uint64_t lo = UINT64_MAX, hi = 0, phdr = 0, pt_phdr = 0;
	int nload = 0, entry_ok = 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type == PT_INTERP) {
			uint64_t iend;
			if (!lim->allow_interp)
				return errmsg(err, errlen, "dynamically linked (has an interpreter); husk runs static executables");
			/* as Linux: 2 to PATH_MAX bytes ending in a NUL (the path ends at its first) */
			if (out->interp_len || p->p_filesz < 2 || p->p_filesz > 4096 || !add_ok(p->p_offset, p->p_filesz, &iend) ||
			    iend > size || file[iend - 1])
				return errmsg(err, errlen, "bad interpreter path (PT_INTERP)");
			out->interp_off = p->p_offset, out->interp_len = p->p_filesz;
		}
		if (p->p_type == PT_PHDR)
			pt_phdr = p->p_vaddr + bias;
		if (p->p_type != PT_LOAD)
			continue;
		uint64_t fend, start, end;
		if (p->p_filesz > p->p_memsz)
			return errmsg(err, errlen, "segment %d: file size exceeds memory size", i);
		if (!add_ok(p->p_offset, p->p_filesz, &fend) || fend > size)
			return errmsg(err, errlen, "truncated: segment %d lies past the end of the file", i);
		if (!add_ok(p->p_vaddr, bias, &start) || !add_ok(start, p->p_memsz, &end))
			return errmsg(err, errlen, "segment %d: address range overflows", i);
		if (start < lim->min || end > lim->max)
			return errmsg(err, errlen, "segment %d [%#llx, %#llx) is outside the space for it [%#llx, %#llx)",
				    i, (unsigned long long)start, (unsigned long long)end,
				    (unsigned long long)lim->min, (unsigned long long)lim->max);
		for (int j = 0; j < i; j++) {
			const Elf64_Phdr *q = &ph[j];
			if (q->p_type == PT_LOAD && q->p_memsz && p->p_memsz &&
			    p->p_vaddr < q->p_vaddr + q->p_memsz && q->p_vaddr < p->p_vaddr + p->p_memsz)
				return errmsg(err, errlen, "segments %d and %d overlap", j, i);
		}
		/* AT_PHDR: where the table sits in memory, found through the file
		 * offset, so it is loaded by construction. */
		if (!phdr && eh.e_phoff >= p->p_offset && ph_end <= fend)
			phdr = start + (eh.e_phoff - p->p_offset);
		if (eh.e_entry + bias >= start && eh.e_entry + bias < end && (p->p_flags & PF_X))
			entry_ok = 1;
		lo = start < lo ? start : lo;
		hi = end > hi ? end : hi;
		nload++;
	}
	if (!nload)
		return errmsg(err, errlen, "no loadable segments");
	if (!entry_ok)
		return errmsg(err, errlen, "entry point %#llx is not in an executable segment",
			    (unsigned long long)eh.e_entry);
	if (!phdr && lim->need_phdr)
		return errmsg(err, errlen, "program headers are not in a loaded segment");
	if (pt_phdr && pt_phdr != phdr)
		return errmsg(err, errlen, "PT_PHDR does not match where the program headers are loaded");

	for (int i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD)
			continue;
		uint8_t *dst = gpa_ptr(m, p->p_vaddr + bias, p->p_memsz);
		if (!dst)
			return errmsg(err, errlen, "segment %d does not fit in guest memory", i);
		memcpy(dst, file + p->p_offset, p->p_filesz);
		memset(dst + p->p_filesz, 0, p->p_memsz - p->p_filesz);
	}
	out->entry = eh.e_entry + bias;
	out->phdr = phdr;
	out->phnum = eh.e_phnum;
	out->lo = lo;
	out->hi = hi;
	return 0;
}
