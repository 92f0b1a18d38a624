/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel entry, the `syscall` instruction entry, exception stubs and the jump
 * into the program.  Everything runs at one privilege level. */
#include "husk/abi.h"
#define HUSK_TIMER_VECTOR 0x40 /* kernel.h */

/* The SysV callee-saved registers; r15 ends lowest. */
.macro PUSH_CALLEE_SAVED
	push %rbp
	push %rbx
	push %r12
	push %r13
	push %r14
	push %r15
.endm
.macro POP_CALLEE_SAVED
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbx
	pop %rbp
.endm

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
 * (and its red zone) must not be touched, so switch to our own stack and
 * save a struct user_regs (arch/regs.h) there, highest member first. */
	.globl syscall_entry
syscall_entry:
	mov %rsp, user_rsp(%rip)
	mov kstack_top(%rip), %rsp	/* the current task's */
	push user_rsp(%rip)		/* rsp */
	push %r11			/* rflags */
	push %rcx			/* rip */
	push %rdi
	push %rsi
	push %rdx
	push %rcx
	push %rax
	push %r8
	push %r9
	push %r10
	push %r11
	push %rbx
	push %rbp
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rsp, %rdi
	call syscall_by_instruction	/* sets rax, may deliver a signal */
	mov %rsp, %rdi
	jmp return_to_program

/* The fast entry, AT_SYSINFO: a plain SysV call from husk's libc,
 * long entry(nr, a1, ..., a6).  Nothing to save but the callee-saved
 * registers, on the program's stack; the kernel runs on the task's own
 * stack (a thread's may be small, a path lookup takes ~30 KiB).  Only when
 * a signal or a switch is due on the way out does it build a struct
 * user_regs (on the kernel stack: the signal frame goes on the program's
 * stack, where the saved registers are). */
	.globl fast_entry, fast_entry_pushed, fast_entry_rsp
fast_entry:
	cld				/* a caller with DF set would make every kernel copy run backwards */
	mov %rsp, fast_entry_rsp(%rip)	/* at the return address: for a fault in the pushes */
	PUSH_CALLEE_SAVED		/* a page fault here is the program's (trap.c) */
fast_entry_pushed:
	mov %rsp, %rbx			/* r15 r14 r13 r12 rbx rbp, return address, a6 */
	mov %rsp, fast_frame(%rip)	/* clone and sigaltstack read the caller's state there */
	mov kstack_top(%rip), %rsp
	sub $8, %rsp			/* aligned for the call */
	push 56(%rbx)			/* a6 */
	call syscall_dispatch
	mov %rbx, %rsp
	cmpb $0, signal_waiting(%rip)
	jne 1f
	POP_CALLEE_SAVED
	ret
1:	mov %rsp, %rdi			/* r15 r14 r13 r12 rbx rbp, return address */
	mov kstack_top(%rip), %rsp
	lea 56(%rdi), %rcx
	push %rcx			/* rsp: as after the return */
	pushfq
	push 48(%rdi)			/* rip: the return address */
	push $0				/* rdi, rsi, rdx, rcx: clobbered by a call */
	push $0
	push $0
	push $0
	push %rax			/* the result */
	push $0				/* r8-r11 */
	push $0
	push $0
	push $0
	push 32(%rdi)			/* rbx */
	push 40(%rdi)			/* rbp */
	push 24(%rdi)			/* r12 */
	push 16(%rdi)
	push 8(%rdi)
	push 0(%rdi)			/* r15 */
	mov %rsp, %rdi
	call signal_deliver
	mov %rsp, %rdi
	jmp return_to_program

/* syscall_abi_entry: the fast entry with the `syscall` instruction's
 * convention, for the stubs arch/syscall_rewrite.c puts in place of that
 * instruction: rax = nr, args in rdi rsi rdx r10 r8 r9.  The stub has saved
 * what a call clobbers and pushed a6 where a C caller's seventh argument
 * goes (so a restarted call, signal.c restart_call, finds it there), on the
 * program's stack in the program's code: a page fault there is the
 * program's.  Here only registers move; fast_entry returns to the stub. */
	.globl syscall_abi_entry
syscall_abi_entry:
	mov %r8, %r9			/* a5 */
	mov %r10, %r8			/* a4 */
	mov %rdx, %rcx			/* a3 */
	mov %rsi, %rdx			/* a2 */
	mov %rdi, %rsi			/* a1 */
	mov %rax, %rdi			/* nr */
	jmp fast_entry

/* return_to_program(regs): rip and rflags are already below the red zone at
 * regs->rsp (return_prepare).  Interrupts go on again only once on the
 * program's stack (resume_staged): an interrupt taken before that would
 * stage its own return below the stack pointer, inside *regs. */
	.globl return_to_program
return_to_program:
	cmpb $0, vif_on(%rip)		/* interrupts off while *regs is half restored */
	je 1f
	movb $0, HUSK_VIF
	jmp 2f
1:	cli
2:	mov %rdi, %rsp
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbp
	pop %rbx
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rax
	pop %rcx
	pop %rdx
	pop %rsi
	pop %rdi
	add $16, %rsp			/* rip, rflags: staged already */
	pop %rsp
	jmp resume_staged

/* On the interrupted stack, [rflags][rip] at rsp and the red zone above:
 * interrupts on, popfq, and ret over the red zone.  Flags are free until
 * popfq. */
resume_staged:
	cmpb $0, vif_on(%rip)		/* kvm_pvm with interrupts in use */
	je 2f
	movb $1, HUSK_VIF		/* interrupts on: VIF.if_ */
	testb $1, HUSK_VIF + 1		/* one waiting is noticed at a trap: make one */
	jz 2f
	push %rax
	push %rbx
	mov $0x1008, %eax		/* FLUSH_TLB_ONE of address 0: harmless */
	xor %ebx, %ebx
	int $0x1b
	pop %rbx
	pop %rax
2:	popfq
	ret $128			/* over the red zone */

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

/* Interrupts (on IST 2): the local APIC timer, the VMM's host signals, a device's. */
	.balign 16
	.globl timer_stub
timer_stub:
	pushq $0
	pushq $HUSK_TIMER_VECTOR
	jmp trap_common
	.balign 16
	.globl host_signal_stub
host_signal_stub:
	pushq $0
	pushq $HUSK_HOST_SIGNAL_VECTOR
	jmp trap_common
	.balign 16
	.globl device_stub
device_stub:
	pushq $0
	pushq $HUSK_DEVICE_VECTOR
	jmp trap_common

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
	cld				/* DF as the program left it (x86 keeps it at an interrupt): the C code needs 0 */
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
	cmpb $0, vif_on(%rip)
	jne 1f
	iretq
/* kvm_pvm: iretq would leave VIF.if_ off.  Stage rflags and rip below the
 * interrupted red zone (the kernel has none: -mno-red-zone) and leave this
 * stack before turning interrupts on (resume_staged): the next interrupt
 * reuses it. */
1:	push %rax
	mov 32(%rsp), %rax		/* rsp (over rax, rip, cs, rflags) */
	sub $144, %rax
	push %rbx
	mov 32(%rsp), %rbx		/* rflags */
	mov %rbx, (%rax)
	mov 16(%rsp), %rbx		/* rip */
	mov %rbx, 8(%rax)
	mov %rax, 40(%rsp)		/* the frame's rsp */
	pop %rbx
	pop %rax
	mov 24(%rsp), %rsp
	jmp resume_staged

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

/* switch_to(prev, &prev->ksp, next_ksp): the callee-saved registers on
 * the old stack, its pointer saved, the new one's popped.  Returns, on the
 * new task's stack, the task it came from (rdi survives the switch). */
	.globl switch_to
switch_to:
	PUSH_CALLEE_SAVED
	mov %rsp, (%rsi)
	mov %rdx, %rsp
	POP_CALLEE_SAVED
	mov %rdi, %rax
	ret

/* A new task's first switch_to returns here (task_create's stack). */
	.globl task_first_entry
task_first_entry:
	mov %rax, %rdi
	call task_start
	ud2

/* run_on_stack(top, fn): fn() on a fresh stack; it does not return. */
	.globl run_on_stack
run_on_stack:
	mov %rdi, %rsp
	call *%rsi
	ud2

	.data
	.balign 8
	.globl fast_frame
fast_frame:
	.quad 0
fast_entry_rsp:
	.quad 0
	.globl kstack_top
kstack_top:
	.quad syscall_stack_top		/* the first task's, as the boot left it */

	.bss
	.balign 16
user_rsp:
	.space 16
	.space 16384
boot_stack_top:
	.space 65536			/* KSTACK_SIZE (sched.c) */
	.globl syscall_stack_top
syscall_stack_top:			/* the first task's kernel stack */
	.section .note.GNU-stack, "", @progbits
