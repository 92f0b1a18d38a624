/* SPDX-License-Identifier: GPL-2.0-only */
/* CPU exceptions.  Every vector 0-31 runs on the IST 1 stack the VMM set in
 * the TSS (the program may be using its red zone below its stack pointer).
 * A fault in the program raises the signal Linux would: its handler runs if
 * it has one, else the run ends with it.  A fault in the kernel is a panic. */
#include "arch/cpu.h"
#include "kernel.h"
#include "linux_abi.h"
#include "mm/mm.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"

struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

extern char trap_stubs[], timer_stub[], host_signal_stub[], device_stub[], __kernel_text_start[], __kernel_text_end[];
extern char fast_entry_pushed[]; /* the end of fast_entry's pushes (entry.S) */
extern uint64_t fast_entry_rsp;  /* the stack pointer fast_entry was called with */
static uint64_t idt[2 * (HUSK_DEVICE_VECTOR + 1)] __attribute__((aligned(16)));
volatile int trap_expect;
volatile unsigned long trap_seen;

static const struct { unsigned char sig; signed char code; } signal_of[32] = {
	[0] = { SIGFPE, FPE_INTDIV }, [1] = { SIGTRAP, SI_KERNEL }, [3] = { SIGTRAP, SI_KERNEL },
	[4] = { SIGSEGV, SI_KERNEL }, [5] = { SIGSEGV, SI_KERNEL }, [6] = { SIGILL, ILL_ILLOPN },
	[7] = { SIGILL, SI_KERNEL }, [10] = { SIGSEGV, SI_KERNEL }, [11] = { SIGBUS, SI_KERNEL },
	[12] = { SIGBUS, SI_KERNEL }, [13] = { SIGSEGV, SI_KERNEL }, [14] = { SIGSEGV, SEGV_MAPERR },
	[16] = { SIGFPE, SI_KERNEL }, [17] = { SIGBUS, BUS_ADRERR }, [19] = { SIGFPE, SI_KERNEL },
};

static struct user_regs regs_of(const struct trap_frame *f)
{
	return (struct user_regs){ f->r15, f->r14, f->r13, f->r12, f->rbp, f->rbx, f->r11, f->r10, f->r9, f->r8,
				   f->rax, f->rcx, f->rdx, f->rsi, f->rdi, f->rip, f->rflags, f->rsp };
}

/* The frame iretq returns through becomes r (a handler's entry). */
static void set_regs(struct trap_frame *f, const struct user_regs *r)
{
	f->r15 = r->r15, f->r14 = r->r14, f->r13 = r->r13, f->r12 = r->r12, f->rbp = r->rbp, f->rbx = r->rbx;
	f->r11 = r->r11, f->r10 = r->r10, f->r9 = r->r9, f->r8 = r->r8, f->rax = r->rax, f->rcx = r->rcx;
	f->rdx = r->rdx, f->rsi = r->rsi, f->rdi = r->rdi, f->rip = r->rip, f->rflags = r->rflags, f->rsp = r->rsp;
}

static int in_kernel(const struct trap_frame *f)
{
	return f->rip >= (uintptr_t)__kernel_text_start && f->rip < (uintptr_t)__kernel_text_end;
}

/* A page fault in fast_entry's pushes onto the program's stack is the
 * program's own: its stack grows into a page not yet touched (retried), or
 * it overflowed, and then the fault is made the program's at its call's
 * return address, every register as the program left it.  Returns whether
 * f was such a fault (f rewound) or retried (*retry). */
static int program_push_fault(struct trap_frame *f, uint64_t addr, int *retry)
{
	*retry = 0;
	if (f->vector != 14 || f->rip < (uintptr_t)fast_entry || f->rip >= (uintptr_t)fast_entry_pushed)
		return 0;
	if (mm_fault(addr))
		return *retry = 1;
	f->rip = *(const uint64_t *)fast_entry_rsp; /* the return address the call pushed */
	f->rsp = fast_entry_rsp + 8;
	return 1;
}

/* The timer, the VMM with host signals, or a device with something come
 * (the network's messages: looked at with the timer's events).  In the
 * program: its task may leave the CPU (sched_interrupted), what is due is
 * delivered, and it resumes.  In the kernel (not preemptible) it is only
 * noted, for the way out; the interrupted code goes on with interrupts on
 * (entry.S). */
static void interrupt(struct trap_frame *f)
{
	apic_eoi();
	int kernel = in_kernel(f);
	if (f->vector == HUSK_TIMER_VECTOR || f->vector == HUSK_DEVICE_VECTOR)
		sched_timer_note(kernel);
	else
		signal_waiting = 1; /* the host's signals are taken on the way out */
	if (kernel)
		return;
	struct user_regs r = regs_of(f);
	sched_interrupted(&r);
}

/* Filled before it is loaded: on kvm_pvm writes to a live IDT may trap. */
static void gate(int v, uintptr_t off, int ist)
{
	/* present, DPL 0, 64-bit interrupt gate */
	idt[2 * v] = (off & 0xffff) | (uint64_t)HUSK_KCS << 16 | (uint64_t)ist << 32 | 0x8eull << 40 |
		     ((off >> 16) & 0xffff) << 48;
	idt[2 * v + 1] = off >> 32;
}

void trap_init(void)
{
	for (int v = 0; v < 32; v++)
		gate(v, (uintptr_t)trap_stubs + 16 * v, 1);
	gate(HUSK_TIMER_VECTOR, (uintptr_t)timer_stub, 2); /* interrupts have their own stack: */
	gate(HUSK_HOST_SIGNAL_VECTOR, (uintptr_t)host_signal_stub, 2); /* they may come during a fault */
	gate(HUSK_DEVICE_VECTOR, (uintptr_t)device_stub, 2);
	struct __attribute__((packed)) { uint16_t limit; uint64_t base; } idtr = { sizeof idt - 1, (uintptr_t)idt };
	__asm__ volatile("lidt %0" : : "m"(idtr));
}

/* A fault of the program's: its handler runs if it has one, else it ends
 * (pid 1: the run, with the fault in the report). */
static void program_fault(struct trap_frame *f, uint64_t vector, uint64_t error, uint64_t addr)
{
	int sig = signal_of[vector].sig;
	if (signal_catches(sig)) {
		struct user_regs r = regs_of(f);
		signal_fault(&r, sig, signal_of[vector].code, addr, vector, error);
		set_regs(f, &r);
		return;
	}
	if (current->proc->pid != 1)
		signal_die(sig); /* a process the program started: it ends, the run goes on */
	volatile struct husk_fault *r = &REPORT->fault;
	r->vector = vector, r->error = error, r->rip = f->rip, r->addr = addr, r->signal = sig;
	for (;;)
		outl(HUSK_PORT_FAULT, 0);
}

static void trap(struct trap_frame *f)
{
	if (f->vector == HUSK_TIMER_VECTOR || f->vector == HUSK_HOST_SIGNAL_VECTOR || f->vector == HUSK_DEVICE_VECTOR) {
		interrupt(f);
		return;
	}
	if (f->vector == 6 && trap_expect) { /* selftest: a deliberate ud2 */
		trap_expect = 0;
		trap_seen++;
		f->rip += 2;
		return;
	}
	uint64_t addr = f->vector == 14 ? read_cr2() : 0;
	if (f->vector == 14 && (f->error & 3) == 3) { /* a write to a present page: shared after fork? */
		int r = mm_cow_fault(addr);
		if (r > 0)
			return;
		if (r < 0)
			signal_out_of_memory(); /* as Linux's OOM killer would */
	}
	int retry;
	if (program_push_fault(f, addr, &retry) && retry)
		return;
	int kernel = in_kernel(f);
	if (f->vector == 14 && !kernel && mm_fault(addr))
		return; /* a stack page touched for the first time */
	if (kernel || f->vector >= 32 || !signal_of[f->vector].sig)
		panic("exception %lu (error %lx) at rip %lx, address %lx, in the %s",
		      (unsigned long)f->vector, (unsigned long)f->error, (unsigned long)f->rip,
		      (unsigned long)addr, kernel ? "kernel" : "program");
	program_fault(f, f->vector, f->error, addr);
}

/* The way back stages rflags and rip below the red zone of the stack it
 * returns to (trap_common, on kvm_pvm): when that is the program's stack
 * (the program's code, or kernel code that runs on it: fast_entry's pushes,
 * resume_staged), its page must be there.  A stack with no room left is the
 * program's page fault, as its own push would be. */
void trap_handler(struct trap_frame *f)
{
	trap(f);
	uint64_t stage = f->rsp - RETURN_ROOM;
	if (!mm_is_program(stage) || signal_return_room(f->rsp))
		return;
	if (!in_kernel(f))
		program_fault(f, 14, 2, stage);
	if (in_kernel(f) || !signal_return_room(f->rsp))
		signal_die(SIGSEGV); /* no room for its handler's frame, or no program state to give it */
}
