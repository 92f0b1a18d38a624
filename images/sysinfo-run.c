/* SPDX-License-Identifier: GPL-2.0-only */
/* sysinfo-run.c: run a static x86-64 ET_EXEC built against our musl natively
 * WITH the fast entry in use, as in the guest.  Linux never passes AT_SYSINFO
 * on x86-64, so we load the program ourselves: map its PT_LOAD segments, build
 * an initial stack whose auxv has AT_SYSINFO = entry() below (and, like the
 * guest, no AT_SYSINFO_EHDR: no vDSO), and jump to e_entry.  entry() makes the
 * system call with the syscall instruction and counts it; at exit_group it
 * prints "sysinfo-run: N system calls through AT_SYSINFO" on stderr.
 * Host tool (glibc).  Build: gcc -O2 -fno-stack-protector (entry() runs with
 * the program's %fs, so it must not touch TLS: no canary, no errno, no libc).
 * usage: sysinfo-run ELF [ARGS...]   (the program sees argv[0] = ELF) */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096UL

static volatile long calls;

static long raw(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	long ret;
	__asm__ __volatile__ ("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c),
			      "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

static void report(void)
{
	char buf[80], num[24];
	const char *pre = "sysinfo-run: ", *post = " system calls through AT_SYSINFO\n";
	unsigned long v = calls;
	int n = 0, k = 0;
	do num[k++] = '0' + v % 10; while (v /= 10);
	while (*pre) buf[n++] = *pre++;
	while (k) buf[n++] = num[--k];
	while (*post) buf[n++] = *post++;
	raw(SYS_write, 2, (long)buf, n, 0, 0, 0);
}

static long entry(long n, long a, long b, long c, long d, long e, long f)
{
	calls++;
	if (n == SYS_exit_group) report();
	return raw(n, a, b, c, d, e, f);
}

static void die(const char *what)
{
	fprintf(stderr, "sysinfo-run: %s\n", what);
	exit(127);
}

int main(int argc, char **argv, char **envp)
{
	if (argc < 2) die("usage: sysinfo-run ELF [ARGS...]");
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) die("cannot open the program");
	Elf64_Ehdr eh;
	Elf64_Phdr ph[32];
	if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_machine != EM_X86_64 || eh.e_type != ET_EXEC || eh.e_phentsize != sizeof *ph ||
	    eh.e_phnum > 32)
		die("not a static x86-64 ET_EXEC");
	if (pread(fd, ph, eh.e_phnum * sizeof *ph, eh.e_phoff) != (ssize_t)(eh.e_phnum * sizeof *ph))
		die("cannot read the program headers");

	/* One mapping over all PT_LOADs (read/write/execute: a test tool). */
	uint64_t lo = UINT64_MAX, hi = 0, phdr = 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP) die("has a PT_INTERP (not static)");
		if (ph[i].p_type != PT_LOAD) continue;
		if (ph[i].p_vaddr < lo) lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi) hi = ph[i].p_vaddr + ph[i].p_memsz;
		if (eh.e_phoff >= ph[i].p_offset && eh.e_phoff < ph[i].p_offset + ph[i].p_filesz)
			phdr = ph[i].p_vaddr + eh.e_phoff - ph[i].p_offset;
	}
	if (hi == 0 || !phdr) die("no PT_LOAD holding the program headers");
	lo &= ~(PAGE - 1);
	hi = (hi + PAGE - 1) & ~(PAGE - 1);
	if (mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != (void *)lo)
		die("cannot map the program's address range");
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz &&
		    pread(fd, (void *)ph[i].p_vaddr, ph[i].p_filesz, ph[i].p_offset) != (ssize_t)ph[i].p_filesz)
			die("cannot read a segment");
	close(fd);

	/* Initial stack: strings, then argc, argv, envp, auxv. */
	size_t size = 8UL << 20;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) die("cannot map a stack");
	char *sp = stack + size;
	int nargs = argc - 1, nenv = 0;
	while (envp[nenv]) nenv++;
	char **av = calloc(nargs + 1, sizeof *av), **ev = calloc(nenv + 1, sizeof *ev);
	if (!av || !ev) die("out of memory");
	for (int i = 0; i < nargs; i++) {
		size_t l = strlen(argv[i + 1]) + 1;
		av[i] = memcpy(sp -= l, argv[i + 1], l);
	}
	for (int i = 0; i < nenv; i++) {
		size_t l = strlen(envp[i]) + 1;
		ev[i] = memcpy(sp -= l, envp[i], l);
	}
	char *rnd = memcpy(sp -= 16, (void *)getauxval(AT_RANDOM), 16);
	uint64_t aux[][2] = {
		{AT_PHDR, phdr}, {AT_PHENT, sizeof *ph}, {AT_PHNUM, eh.e_phnum},
		{AT_PAGESZ, PAGE}, {AT_ENTRY, eh.e_entry}, {AT_UID, getuid()},
		{AT_EUID, geteuid()}, {AT_GID, getgid()}, {AT_EGID, getegid()},
		{AT_SECURE, 0}, {AT_RANDOM, (uint64_t)rnd}, {AT_EXECFN, (uint64_t)av[0]},
		{AT_SYSINFO, (uint64_t)entry}, {AT_NULL, 0}};
	size_t words = 1 + nargs + 1 + nenv + 1 + 2 * (sizeof aux / sizeof aux[0]);
	uint64_t *top = (uint64_t *)(((uintptr_t)sp - words * 8) & ~15UL), *q = top;
	*q++ = nargs;
	for (int i = 0; i < nargs; i++) *q++ = (uint64_t)av[i];
	*q++ = 0;
	for (int i = 0; i < nenv; i++) *q++ = (uint64_t)ev[i];
	*q++ = 0;
	memcpy(q, aux, sizeof aux);
	fflush(NULL);
	__asm__ __volatile__ ("mov %0, %%rsp\n\txor %%edx, %%edx\n\tjmp *%1"
			      : : "r"(top), "r"(eh.e_entry) : "memory");
	__builtin_unreachable();
}
