/* SPDX-License-Identifier: GPL-2.0-only */
/* The test-only hostile guest kernel's entry: the same boot contract as
 * husk's kernel (header at HUSK_KERNEL_BASE, rdi = boot device tree, rsi =
 * boot flags), nothing else of it. */
#include "husk/abi.h"

	.section .husk_header, "a"
	.quad HUSK_KERNEL_MAGIC
	.quad no_syscalls

	.section .text.entry, "ax"
	.globl _start
_start:
	HUSK_REGISTER_VIF
	lea stack_top(%rip), %rsp
	call evil_main
no_syscalls:
	ud2

	.bss
	.balign 16
	.space 16384
stack_top:
	.section .note.GNU-stack, "", @progbits
