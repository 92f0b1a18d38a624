/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel entry, the `syscall` instruction entry, exception stubs and the jump
 * into the program.  Everything runs at one privilege level. */
#include "husk/abi.h"

/* struct husk_kernel_header, at HUSK_KERNEL_BASE */
	.section .husk_header, "a"
	.quad HUSK_KERNEL_MAGIC
	.quad syscall_entry

	.section .text.entry, "ax"
	.globl _start
/* rdi = boot device tree, rsi = boot flags (HUSK_BOOT_*). */
_start:
	HUSK_REGISTER_VIF
	lea boot_stack_top(%rip), %rsp
	xor %ebp, %ebp
	call kmain
	ud2

	.text
/* `syscall`: rax = nr, args in rdi rsi rdx r10 r8 r9; rcx = return rip,
 * r11 = rflags.  There is no stack switch in hardware: the program's stack
 * (and its red zone) must not be touched, so switch to our own stack. */
	.globl syscall_entry
syscall_entry:
	mov %rsp, user_rsp(%rip)
	lea syscall_stack_top(%rip), %rsp
	push %r11
	push %rcx
	push %rdi
	push %rsi
	push %rdx
	push %r10
	push %r8
	push %r9
	sub $8, %rsp			/* keep the C call 16-byte aligned */
	push %r9			/* a6 */
	mov %r8, %r9			/* a5 */
	mov %r10, %r8			/* a4 */
	mov %rdx, %rcx			/* a3 */
	mov %rsi, %rdx			/* a2 */
	mov %rdi, %rsi			/* a1 */
	mov %rax, %rdi			/* nr */
	call syscall_dispatch
	add $16, %rsp
	pop %r9
	pop %r8
	pop %r10
	pop %rdx
	pop %rsi
	pop %rdi
	pop %rcx
	mov (%rsp), %r11		/* Linux returns with r11 = rflags */
	popfq
	mov user_rsp(%rip), %rsp
	jmp *%rcx

/* Exception stubs: vector 0..31, 16 bytes apart; push a 0 where the CPU
 * pushes no error code. */
	.balign 16
	.globl trap_stubs
trap_stubs:
	.set vec, 0
	.rept 32
	.balign 16
	.if (vec == 8) || (vec >= 10 && vec <= 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq $0
	.endif
	pushq $vec
	jmp trap_common
	.set vec, vec + 1
	.endr

trap_common:
	push %rax
	push %rbx
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %rbp
	push %r8
	push %r9
	push %r10
	push %r11
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rsp, %rdi
	call trap_handler		/* IST stack top is 16-aligned: 22 pushes */
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rbp
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rbx
	pop %rax
	add $16, %rsp			/* vector, error code */
	iretq

/* enter_program(entry, sp): the ELF entry contract: rsp at argc, rdx = 0. */
	.globl enter_program
enter_program:
	mov %rsi, %rsp
	mov %rdi, %rax
	xor %ebx, %ebx
	xor %ecx, %ecx
	xor %edx, %edx
	xor %esi, %esi
	xor %edi, %edi
	xor %ebp, %ebp
	xor %r8d, %r8d
	xor %r9d, %r9d
	xor %r10d, %r10d
	xor %r11d, %r11d
	xor %r12d, %r12d
	xor %r13d, %r13d
	xor %r14d, %r14d
	xor %r15d, %r15d
	jmp *%rax

	.bss
	.balign 16
user_rsp:
	.space 16
	.space 16384
boot_stack_top:
	.space 32768
syscall_stack_top:
	.section .note.GNU-stack, "", @progbits
