/* SPDX-License-Identifier: GPL-2.0-only */
/* The program's registers where it entered the kernel (a system call by
 * either door, a fault), as entry.S saves them and return_to_program
 * restores them: signal delivery and rt_sigreturn read and rewrite them. */
#ifndef GUEST_REGS_H
#define GUEST_REGS_H
#include <stdint.h>

struct user_regs {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi;
	uint64_t rip, rflags, rsp;
};

/* Resumes the program with every register as in *r, r->rip and r->rflags
 * first written just below its red zone (return_prepare, signal.c, checks
 * that memory and sets r->rsp there).  Never returns. */
_Noreturn void return_to_program(struct user_regs *r);

/* During a fast-entry call (AT_SYSINFO): its caller's r15 r14 r13 r12 rbx
 * rbp and return address, on the program's stack; rsp after the return is
 * fast_frame + 7. */
extern uint64_t *fast_frame;
#endif
