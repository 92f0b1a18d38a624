/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest kernel ELF, built into husk so the binary is self-contained. */
	.section .rodata
	.balign 16
	.globl husk_kernel_elf, husk_kernel_elf_end
husk_kernel_elf:
	.incbin HUSK_KERNEL_PATH
husk_kernel_elf_end:
	.section .note.GNU-stack, "", @progbits
