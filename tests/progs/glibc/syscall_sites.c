/* SPDX-License-Identifier: GPL-2.0-only */
/* `syscall` sites as glibc has them (mov $NR, %eax; syscall), run in husk
 * with a Debian image: each is rewritten into a jump to a stub the first time
 * it traps (guest/arch/syscall_rewrite.c).  Prints one line per check. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* getppid (110) through a site of its own; the site's first byte is its
 * address (the mov) for the caller to look at. */
__attribute__((noinline)) static long site_getppid(const uint8_t **site)
{
	long r;
	const uint8_t *at;
	__asm__ volatile("lea 1f(%%rip), %1\n1: mov $110, %%eax\n syscall" : "=a"(r), "=r"(at) : : "rcx", "r11", "memory");
	*site = at;
	return r;
}

/* A site of the other shape, as glibc's read has it: the number from a
 * register (here the argument), then alignment padding after the `ret`. */
long short_syscall(long nr);
extern const uint8_t short_syscall_site[];
__asm__(".text\n"
	".globl short_syscall\n"
	".type short_syscall, @function\n"
	"short_syscall:\n"
	"	mov %edi, %eax\n"
	".globl short_syscall_site\n"
	"short_syscall_site:\n"
	"	syscall\n"
	"	cmp $-4095, %rax\n"
	"	jae 1f\n"
	"	ret\n"
	"	.p2align 5\n"
	"1:	ret\n");

/* Data in the red zone across the call: the `syscall` instruction touches
 * no stack, nor may what replaces it. */
__attribute__((noinline)) static long red_zone_kept(void)
{
	long ok;
	__asm__ volatile("movq $0x1111, -8(%%rsp)\n movq $0x2222, -64(%%rsp)\n movq $0x3333, -128(%%rsp)\n"
			 "mov $39, %%eax\n syscall\n"
			 "xor %%eax, %%eax\n"
			 "cmpq $0x1111, -8(%%rsp)\n jne 1f\n cmpq $0x2222, -64(%%rsp)\n jne 1f\n"
			 "cmpq $0x3333, -128(%%rsp)\n jne 1f\n mov $1, %%eax\n1:"
			 : "=a"(ok) : : "rcx", "r11", "memory");
	return ok;
}

/* Every register but rax, rcx, r11 as it was (getpid ignores its arguments). */
__attribute__((noinline)) static long registers_kept(void)
{
	long ok;
	__asm__ volatile("push %%rbx\n push %%rbp\n push %%r12\n push %%r13\n push %%r14\n push %%r15\n"
			 "mov $11, %%rdi\n mov $12, %%rsi\n mov $13, %%rdx\n mov $14, %%r10\n mov $15, %%r8\n"
			 "mov $16, %%r9\n mov $17, %%rbx\n mov $18, %%rbp\n mov $19, %%r12\n mov $20, %%r13\n"
			 "mov $21, %%r14\n mov $22, %%r15\n"
			 "mov $39, %%eax\n syscall\n"
			 "xor %%eax, %%eax\n"
			 "cmp $11, %%rdi\n jne 1f\n cmp $12, %%rsi\n jne 1f\n cmp $13, %%rdx\n jne 1f\n"
			 "cmp $14, %%r10\n jne 1f\n cmp $15, %%r8\n jne 1f\n cmp $16, %%r9\n jne 1f\n"
			 "cmp $17, %%rbx\n jne 1f\n cmp $18, %%rbp\n jne 1f\n cmp $19, %%r12\n jne 1f\n"
			 "cmp $20, %%r13\n jne 1f\n cmp $21, %%r14\n jne 1f\n cmp $22, %%r15\n jne 1f\n"
			 "mov $1, %%eax\n1:\n"
			 "pop %%r15\n pop %%r14\n pop %%r13\n pop %%r12\n pop %%rbp\n pop %%rbx"
			 : "=a"(ok) : : "rcx", "r11", "rdi", "rsi", "rdx", "r8", "r9", "r10", "memory");
	return ok;
}

/* A rewritten site called from ever deeper on the stack: its stub's pushes
 * are the first touch of each new stack page. */
__attribute__((noinline)) static long deep(int depth)
{
	volatile char pad[3000];
	const uint8_t *site;
	pad[0] = (char)depth;
	long r = site_getppid(&site) == getppid();
	return depth ? r & deep(depth - 1) & (pad[0] == (char)depth) : r;
}

/* read(2) through a site of its own. */
__attribute__((noinline)) static long site_read(int fd, void *buf, size_t n)
{
	long r;
	__asm__ volatile("mov $0, %%eax\n syscall" : "=a"(r) : "D"((long)fd), "S"(buf), "d"(n) : "rcx", "r11", "memory");
	return r;
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	const uint8_t *site;
	long first = site_getppid(&site);
	long second = site_getppid(&site);
	printf("getppid %s, the site's first byte after it ran: 0x%02x, at +5: %s\n",
	       first == getppid() && second == first ? "right" : "wrong", site[0],
	       site[5] == 0x0f && site[6] == 0x05 ? "syscall" : "something else");
	long ppid1 = short_syscall(110), ppid2 = short_syscall(110), pid = short_syscall(39);
	printf("short site: getppid %s, getpid from the same site %s, its bytes after: 0x%02x\n",
	       ppid1 == getppid() && ppid2 == ppid1 ? "right" : "wrong", pid == getpid() ? "right" : "wrong", short_syscall_site[0]);
	double t = now();
	for (int i = 0; i < 100000; i++)
		site_getppid(&site);
	fprintf(stderr, "rewritten site: %.0f ns a call\n", (now() - t) / 100000 * 1e9);

	long rz = 1;
	for (int i = 0; i < 3; i++)
		rz &= red_zone_kept();
	printf("red zone kept: %s\n", rz ? "yes" : "no");
	printf("deep stack (6 MB, a call per 3 KB): %s\n", deep(2000) ? "right" : "wrong");
	long regs = 1;
	for (int i = 0; i < 3; i++)
		regs &= registers_kept();
	printf("registers kept: %s\n", regs ? "yes" : "no");

	/* A blocking read interrupted by a signal: restarted (SA_RESTART) at
	 * the rewritten site, then EINTR without SA_RESTART. */
	int p[2];
	char c = 0;
	if (pipe(p))
		return 1;
	site_read(p[0], &c, 0); /* the site's first call: now rewritten */
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	pid_t w = fork();
	if (w == 0) {
		usleep(300000);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	struct itimerval it = { .it_value = { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	long n = site_read(p[0], &c, 1);
	printf("read with SA_RESTART: %ld '%c' after %d alarm(s)\n", n, c, (int)alarms);
	waitpid(w, NULL, 0);
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	n = site_read(p[0], &c, 1);
	printf("read without: %ld %s\n", n, n == -EINTR ? "EINTR" : strerror((int)-n));

	/* fork: the child runs the parent's rewritten sites (its memory is a copy) */
	w = fork();
	if (w == 0)
		_exit(red_zone_kept() && site_getppid(&site) == getppid() ? 7 : 1);
	int st;
	waitpid(w, &st, 0);
	printf("child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
