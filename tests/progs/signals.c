// SPDX-License-Identifier: GPL-2.0-only
/* Signal delivery as Linux does it, checked from inside the guest: prints
 * one "ok N - ..." or "not ok N - ..." line per check, then "done N".
 * Built with Debian's musl (the `syscall` instruction) and with husk's libc
 * (the fast entry): both doors deliver. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static int n;
static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
}

static volatile sig_atomic_t hits, last_sig;
static volatile siginfo_t last_info;
static volatile uintptr_t handler_sp;
static volatile sigset_t mask_in_handler;
static volatile int nested_depth, max_depth;
static sigjmp_buf jump;
static volatile long last_trapno, last_err;

static void on_info(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	char here;
	handler_sp = (uintptr_t)&here;
	hits++, last_sig = sig;
	memcpy((void *)&last_info, info, sizeof *info);
	sigprocmask(SIG_BLOCK, NULL, (sigset_t *)&mask_in_handler);
}

static void on_plain(int sig)
{
	hits++, last_sig = sig;
}

static void on_segv_jump(int sig)
{
	siglongjmp(jump, sig);
}

/* Skips the faulting 2-byte instruction by editing the saved context. */
static void on_segv_skip(int sig, siginfo_t *info, void *ucv)
{
	ucontext_t *uc = ucv;
	last_sig = sig;
	last_info.si_addr = info->si_addr;
	last_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	last_err = uc->uc_mcontext.gregs[REG_ERR];
	uc->uc_mcontext.gregs[REG_RIP] += 2;
	uc->uc_mcontext.gregs[REG_RAX] = 42;
}

static void on_nested(int sig)
{
	nested_depth++;
	if (nested_depth > max_depth)
		max_depth = nested_depth;
	if (nested_depth < 3)
		raise(sig); /* SA_NODEFER: runs again at once */
	nested_depth--;
}

int main(void)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	ok(hits == 1 && last_sig == SIGUSR1, "raise runs the handler before it returns");
	ok(last_info.si_signo == SIGUSR1 && last_info.si_code == SI_TKILL && last_info.si_pid == getpid(),
	   "SA_SIGINFO: si_signo, si_code SI_TKILL, si_pid");
	ok(sigismember((sigset_t *)&mask_in_handler, SIGUSR1), "the signal is blocked in its own handler");
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	ok(!sigismember(&now, SIGUSR1), "and unblocked after sigreturn");
	kill(getpid(), SIGUSR1);
	ok(hits == 2 && last_info.si_code == SI_USER, "kill(getpid()) with si_code SI_USER");

	/* An alternate stack. */
	static char alt[65536];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };
	ok(sigaltstack(&ss, NULL) == 0, "sigaltstack");
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	ok(handler_sp > (uintptr_t)alt && handler_sp < (uintptr_t)alt + sizeof alt, "SA_ONSTACK runs on the alternate stack");
	stack_t small = { .ss_sp = alt, .ss_size = 100 };
	ok(sigaltstack(&small, NULL) == -1, "an alternate stack below MINSIGSTKSZ is refused");

	/* Blocked signals wait; sigpending sees them; unblocking delivers. */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	hits = 0;
	raise(SIGUSR1);
	sigset_t pend;
	sigpending(&pend);
	ok(hits == 0 && sigismember(&pend, SIGUSR1), "a blocked signal stays pending");
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	ok(hits == 1, "unblocking it delivers it");

	/* Faults to handlers. */
	signal(SIGSEGV, on_segv_jump);
	int got = sigsetjmp(jump, 1);
	volatile uintptr_t bad = 8;
	if (!got)
		*(volatile int *)bad = 1;
	ok(got == SIGSEGV, "SIGSEGV to a handler that siglongjmps out");
	sigprocmask(SIG_BLOCK, NULL, &now);
	ok(!sigismember(&now, SIGSEGV), "siglongjmp restored the mask");

	struct sigaction skip = { 0 };
	skip.sa_sigaction = on_segv_skip;
	skip.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &skip, NULL);
	long rax;
	/* mov (%rdx), %eax: 2 bytes, faults on address 16 */
	__asm__ volatile("xor %%eax, %%eax\n\tmov (%%rdx), %%eax" : "=a"(rax) : "d"(16L) : "memory");
	ok(rax == 42 && last_info.si_addr == (void *)16, "a handler edits the context (rip, rax); sigreturn resumes it");
	ok(last_trapno == 14 && (last_err & 2) == 0, "the context has the fault's trap number (14) and error code (a read)");

	/* SA_NODEFER and SA_RESETHAND. */
	struct sigaction nd = { 0 };
	nd.sa_handler = on_nested;
	nd.sa_flags = SA_NODEFER;
	sigaction(SIGHUP, &nd, NULL);
	raise(SIGHUP);
	ok(max_depth == 3 && nested_depth == 0, "SA_NODEFER: the handler nests");
	struct sigaction rh = { 0 };
	rh.sa_handler = on_plain;
	rh.sa_flags = SA_RESETHAND;
	sigaction(SIGTERM, &rh, NULL);
	raise(SIGTERM);
	struct sigaction after;
	sigaction(SIGTERM, NULL, &after);
	ok(after.sa_handler == SIG_DFL, "SA_RESETHAND: back to SIG_DFL after one delivery");

	/* Ignored signals vanish; sigsuspend returns with the handler run. */
	signal(SIGUSR2, SIG_IGN);
	raise(SIGUSR2);
	sigpending(&pend);
	ok(!sigismember(&pend, SIGUSR2), "an ignored signal is discarded");
	sigprocmask(SIG_BLOCK, &block, NULL);
	raise(SIGUSR1);
	hits = 0;
	sigset_t none;
	sigemptyset(&none);
	int r = sigsuspend(&none);
	sigprocmask(SIG_BLOCK, NULL, &now);
	ok(r == -1 && hits == 1 && sigismember(&now, SIGUSR1), "sigsuspend runs the handler, then restores the mask");
	sigprocmask(SIG_UNBLOCK, &block, NULL);

	/* A read a signal interrupts: made again after an SA_RESTART handler,
	 * EINTR after one without; a child writes once the timer has fired. */
	for (int restart = 1; restart >= 0; restart--) {
		int p[2];
		char c = 0;
		struct sigaction ra = { 0 };
		ra.sa_handler = on_plain;
		ra.sa_flags = restart ? SA_RESTART : 0;
		sigaction(SIGALRM, &ra, NULL);
		if (pipe(p))
			return 1;
		pid_t kid = fork();
		if (kid == 0) {
			usleep(300000);
			ssize_t w = write(p[1], "r", 1);
			_exit(w != 1);
		}
		hits = 0;
		struct itimerval it = { { 0, 0 }, { 0, 100000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		ssize_t got = read(p[0], &c, 1);
		int err = errno;
		if (restart)
			ok(got == 1 && c == 'r' && hits == 1, "SA_RESTART: the handler runs, the read goes on and gets the byte");
		else
			ok(got == -1 && err == EINTR && hits == 1, "without SA_RESTART: the handler runs, the read fails with EINTR");
		waitpid(kid, NULL, 0);
		close(p[0]), close(p[1]);
	}

	/* Floating-point state survives a handler. */
	volatile double x = 1.5;
	raise(SIGUSR1);
	ok(x * 2 == 3.0, "floating point after a handler");
	printf("done %d\n", n);
	fflush(stdout);
	signal(SIGABRT, on_plain);
	abort(); /* a handler that returns does not stop abort */
}
