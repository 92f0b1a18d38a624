/* SPDX-License-Identifier: GPL-2.0-only */
/* Loads an x86-64 ELF executable (or, for the guest's exec, a dynamic one's
 * interpreter) into guest memory. */
#ifndef HUSK_ELF_LOAD_H
#define HUSK_ELF_LOAD_H
#include <stddef.h>
#include <stdint.h>
#include "guest_mem.h"

struct elf_image {
	uint64_t entry, phdr, phnum;
	uint64_t lo, hi; /* the loaded range [lo, hi) */
	uint64_t interp_off, interp_len; /* PT_INTERP's path in the file (len 0: none), its NUL included */
};

struct elf_limits {
	uint64_t min, max;  /* every segment must fit in [min, max) */
	uint64_t pie_base;  /* load bias for ET_DYN (static-pie); 0: refuse ET_DYN */
	int need_phdr;      /* the program headers must be loaded (for AT_PHDR) */
	int allow_interp;   /* a dynamically linked program (PT_INTERP) is taken: the caller loads its interpreter */
};

/* Validates the whole file before copying anything.  Returns 0, or -1 with a
 * one-line reason in err. */
int elf_load(struct guest_mem *m, const uint8_t *file, size_t size, const struct elf_limits *lim,
	     struct elf_image *out, char *err, size_t errlen);
#endif
