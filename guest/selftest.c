/* SPDX-License-Identifier: GPL-2.0-only */
/* A kernel self-test (husk run --kernel-selftest): exercises the boot path,
 * exceptions, both syscall entries, memory, time and randomness without a
 * program, and prints TAP on the console.  It uses no SSE, so it also runs on
 * a KVM that emulates the guest. */
#include <string.h>
#include "kernel.h"
#include "mm/mm.h"
#include "proc/process.h"
#include "linux_abi.h"
#include "linux_syscall.h"

static int n, failed;

static void ok(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	kprintf("%sok %d - %s\n", cond ? "" : "not ", n, what);
}

/* The `syscall` instruction as a program makes it: on a stack in the
 * program's memory (the kernel returns through it). */
static uintptr_t program_stack;

static long raw_syscall(long nr, long a1)
{
	long ret;
	__asm__ volatile("mov %%rsp, %%r12\n\tmov %3, %%rsp\n\tsyscall\n\tmov %%r12, %%rsp"
			 : "=a"(ret) : "a"(nr), "D"(a1), "r"(program_stack) : "rcx", "r11", "r12", "memory");
	return ret;
}

_Noreturn void selftest_run(void)
{
	kprintf("1..10\n");
	ok(boot.ram_size >= HUSK_RAM_MIN, "boot device tree: memory size");
	ok(boot.console[0].mmio != 0 && boot.argc >= 0, "boot device tree: console and argv");
	uint64_t t0 = clock_mono_ns(), w = clock_wall_ns();
	for (volatile int i = 0; i < 1000; i++)
		;
	ok(clock_mono_ns() > t0 && w > 1600000000ull * NSEC_PER_SEC, "clock advances from the boot pair");

	uint64_t a[2] = { 0, 0 }, b[2] = { 0, 0 };
	random_fill(a, sizeof a), random_fill(b, sizeof b);
	ok((a[0] | a[1]) && memcmp(a, b, sizeof a), "getrandom output differs between calls");

	process_init(mm_boot(HUSK_PROGRAM_MIN + PAGE_SIZE, boot.ram_size, 0, 0));
	long br = mem_brk(0);
	ok(mem_brk(br + 100000) == br + 100000 && ((char *)br)[99999] == 0, "brk grows");
	long m = mem_mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	int zero = m > 0 && ((char *)m)[4096] == 0;
	if (m > 0)
		memset((void *)m, 0xaa, 1 << 20);
	mem_munmap(m, 1 << 20);
	long m2 = mem_mmap(m, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED); /* freed range */
	ok(zero && m2 == m && ((char *)m2)[100] == 0, "mmap, munmap, mmap again returns zeroed memory");

	trap_expect = 1;
	__asm__ volatile("ud2");
	ok(trap_seen == 1, "#UD is delivered through the IDT and returns");

	program_stack = m2 + (1 << 20);
	ok(raw_syscall(SYS_getpid, 0) == 1, "syscall instruction: getpid");
	char *u = (char *)m2; /* system calls take the program's memory, not the kernel's */
	ok(raw_syscall(SYS_uname, (long)u) == 0 && !strcmp(u, "Linux"), "syscall instruction: uname");
	ok(syscall_dispatch(SYS_getpid, 0, 0, 0, 0, 0, 0) == 1, "fast entry: getpid");
	uint64_t t1 = clock_mono_ns();
	for (int i = 0; i < 1000; i++)
		raw_syscall(SYS_getpid, 0);
	uint64_t t2 = clock_mono_ns();
	for (int i = 0; i < 1000; i++)
		syscall_dispatch(SYS_getpid, 0, 0, 0, 0, 0, 0);
	kprintf("# syscall instruction %lu ns, fast entry %lu ns per call\n",
		(unsigned long)(t2 - t1) / 1000, (unsigned long)(clock_mono_ns() - t2) / 1000);
	halt_exit(failed ? 1 : 0);
}
