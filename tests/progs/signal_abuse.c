// SPDX-License-Identifier: GPL-2.0-only
/* Signals used against the guest kernel, one way per argument: each must end
 * the program with SIGSEGV (status 139), never hurt the kernel.
 *   bad-sigreturn   rt_sigreturn with the stack pointer at address 8
 *   kernel-altstack an alternate stack over the kernel's memory
 *   no-restorer     a handler installed without SA_RESTORER (raw syscall)
 *   stack-at-guard  a signal while the stack pointer sits on the guard page
 *   bad-xstate      a handler marks its frame's XSAVE state compacted (as
 *                   Linux, refused: xrstor would fault on it); in a frame
 *                   with fxsave's state alone, its pointer misaligned */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static void handler(int sig)
{
	(void)sig;
	_exit(3); /* must never run */
}

static void spoil_xstate(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)si;
	mcontext_t *m = &((ucontext_t *)ctx)->uc_mcontext;
	uint8_t *fp = (uint8_t *)m->fpregs;
	uint32_t magic1;
	memcpy(&magic1, fp + 464, 4); /* Linux's FP_XSTATE_MAGIC1: an XSAVE frame */
	if (magic1 == 0x46505853)
		fp[512 + 15] |= 0x80; /* XCOMP_BV bit 63: the compacted form */
	else
		m->fpregs = (void *)(fp + 8);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	if (!strcmp(how, "bad-sigreturn")) {
		__asm__ volatile("mov $8, %%rsp\n\tmov $15, %%eax\n\tsyscall" : : : "memory");
	} else if (!strcmp(how, "kernel-altstack")) {
		stack_t ss = { .ss_sp = (void *)0x200000, .ss_size = 1 << 20 };
		sigaltstack(&ss, NULL);
		struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
	} else if (!strcmp(how, "no-restorer")) {
		struct { uintptr_t handler; unsigned long flags; uintptr_t restorer; uint64_t mask; } k =
			{ (uintptr_t)handler, 0, 0, 0 };
		syscall(SYS_rt_sigaction, SIGUSR1, &k, NULL, 8);
		syscall(SYS_kill, getpid(), SIGUSR1);
	} else if (!strcmp(how, "bad-xstate")) {
		struct sigaction sa = { .sa_sigaction = spoil_xstate, .sa_flags = SA_SIGINFO };
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
	} else if (!strcmp(how, "stack-at-guard")) {
		signal(SIGUSR1, handler);
		/* kill via the syscall instruction with rsp at address 16 */
		__asm__ volatile("mov $16, %%rsp\n\tmov $62, %%eax\n\tmov $1, %%edi\n\tmov $10, %%esi\n\tsyscall"
				 : : : "memory");
	}
	return 4;
}
