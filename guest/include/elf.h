/* SPDX-License-Identifier: GPL-2.0-only */
/* The part of the ELF format loader/elf_load.c (built into the kernel for
 * execve: proc/exec.c) and exec.c use; the values and layouts are the ELF
 * specification's, as the C library's <elf.h> has them. */
#ifndef GUEST_ELF_H
#define GUEST_ELF_H
#include <stdint.h>

#define EI_NIDENT   16
#define EI_CLASS    4
#define EI_DATA     5
#define ELFMAG      "\177ELF"
#define SELFMAG     4
#define ELFCLASS64  2
#define ELFDATA2LSB 1
#define ET_EXEC     2
#define ET_DYN      3
#define EM_X86_64   62
#define PT_LOAD     1
#define PT_INTERP   3
#define PT_PHDR     6
#define PF_X        1
#define PF_W        2
#define PF_R        4

typedef struct {
	unsigned char e_ident[EI_NIDENT];
	uint16_t e_type, e_machine;
	uint32_t e_version;
	uint64_t e_entry, e_phoff, e_shoff;
	uint32_t e_flags;
	uint16_t e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx;
} Elf64_Ehdr;

typedef struct {
	uint32_t p_type, p_flags;
	uint64_t p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
} Elf64_Phdr;

_Static_assert(sizeof(Elf64_Ehdr) == 64, "the ELF64 file header");
_Static_assert(sizeof(Elf64_Phdr) == 56, "an ELF64 program header");
#endif
