/* SPDX-License-Identifier: GPL-2.0-only */
/* CPU exceptions.  Every vector 0-31 runs on the IST 1 stack the VMM set in
 * the TSS (the program may be using its red zone below its stack pointer).  A fault in the program ends the run with the
 * signal Linux would deliver; a fault in the kernel is a panic. */
#include "arch/cpu.h"
#include "kernel.h"
#include "linux_abi.h"

struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

extern char trap_stubs[], __kernel_text_start[], __kernel_text_end[];
static uint64_t idt[64] __attribute__((aligned(16)));
volatile int trap_expect;
volatile unsigned long trap_seen;

static const unsigned char signal_of[32] = {
	[0] = SIGFPE, [1] = SIGTRAP, [3] = SIGTRAP, [4] = SIGSEGV, [5] = SIGSEGV,
	[6] = SIGILL, [7] = SIGILL, [10] = SIGSEGV, [11] = SIGBUS, [12] = SIGBUS,
	[13] = SIGSEGV, [14] = SIGSEGV, [16] = SIGFPE, [17] = SIGBUS, [19] = SIGFPE,
};

/* Filled before it is loaded: on kvm_pvm writes to a live IDT may trap. */
void trap_init(void)
{
	for (int v = 0; v < 32; v++) {
		uint64_t off = (uintptr_t)trap_stubs + 16 * v;
		/* present, DPL 0, 64-bit interrupt gate, IST 1 */
		idt[2 * v] = (off & 0xffff) | (uint64_t)HUSK_KCS << 16 | 1ull << 32 | 0x8eull << 40 |
			     ((off >> 16) & 0xffff) << 48;
		idt[2 * v + 1] = off >> 32;
	}
	struct __attribute__((packed)) { uint16_t limit; uint64_t base; } idtr = { sizeof idt - 1, (uintptr_t)idt };
	__asm__ volatile("lidt %0" : : "m"(idtr));
}

void trap_handler(struct trap_frame *f)
{
	if (f->vector == 6 && trap_expect) { /* selftest: a deliberate ud2 */
		trap_expect = 0;
		trap_seen++;
		f->rip += 2;
		return;
	}
	uint64_t addr = f->vector == 14 ? read_cr2() : 0;
	int in_kernel = f->rip >= (uintptr_t)__kernel_text_start && f->rip < (uintptr_t)__kernel_text_end;
	int sig = f->vector < 32 ? signal_of[f->vector] : 0;
	if (in_kernel || !sig)
		panic("exception %lu (error %lx) at rip %lx, address %lx, in the %s",
		      (unsigned long)f->vector, (unsigned long)f->error, (unsigned long)f->rip,
		      (unsigned long)addr, in_kernel ? "kernel" : "program");
	volatile struct husk_fault *r = &REPORT->fault;
	r->vector = f->vector, r->error = f->error, r->rip = f->rip, r->addr = addr, r->signal = sig;
	for (;;)
		outl(HUSK_PORT_FAULT, 0);
}
