/* SPDX-License-Identifier: GPL-2.0-only */
/* fastentry-test.c: run-time check of musl-fastcall.patch, natively on Linux.
 *
 * Linux gives no AT_SYSINFO, so we set musl's (hidden, but linkable in a
 * static link) __sysinfo ourselves to a fake entry that records its arguments
 * and, for real system calls, makes them with the syscall instruction.  Then
 * we check the three patched paths: the C __syscallN (write, syscall()), the
 * assembly __syscall_cp_asm and __set_thread_area, that the 7th argument
 * arrives on the stack, that the stack is 16-byte aligned at the call, and
 * that with __sysinfo == 0 the syscall instruction is used again.
 * Build: musl-gcc -static -O2 -fno-omit-frame-pointer.  Prints "fastentry ok". */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

extern size_t __sysinfo;                         /* musl, hidden */
long __syscall_cp_asm(volatile int *, long, long, long, long, long, long, long);
int __set_thread_area(void *);

#define FAKE_NR 0x4242424L                       /* no such system call */

static long calls, got[7], misaligned;

static long raw(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	unsigned long ret;
	__asm__ __volatile__ ("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c),
			      "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline))
static long entry(long n, long a, long b, long c, long d, long e, long f)
{
	/* with a frame pointer, rbp = entry rsp - 8 = a multiple of 16 */
	if ((uintptr_t)__builtin_frame_address(0) % 16) misaligned++;
	calls++;
	got[0] = n; got[1] = a; got[2] = b; got[3] = c; got[4] = d; got[5] = e; got[6] = f;
	return n == FAKE_NR ? 4242 : raw(n, a, b, c, d, e, f);
}

static int fails;
static void say(const char *s) { raw(SYS_write, 2, (long)s, strlen(s), 0, 0, 0); }
static void check(int ok, const char *what)
{
	if (!ok) { say("fastentry-test: FAIL: "); say(what); say("\n"); fails++; }
}
static int args(long n, long a, long b, long c, long d, long e, long f)
{
	return got[0] == n && got[1] == a && got[2] == b && got[3] == c &&
	       got[4] == d && got[5] == e && got[6] == f;
}

int main(void)
{
	static const char msg[] = "fastentry: write via entry\n";
	volatile int nocancel = 0;
	long fs = 0, r;

	check(__sysinfo == 0, "__sysinfo set on plain Linux");
	__sysinfo = (size_t)entry;

	r = write(1, msg, sizeof msg - 1);
	check(calls == 1 && r == sizeof msg - 1, "write() did not go through entry");
	check(args(SYS_write, 1, (long)msg, sizeof msg - 1, 0, 0, 0), "write() arguments");

	r = syscall(FAKE_NR, 1, 2, 3, 4, 5, 6);
	check(calls == 2 && r == 4242, "syscall() did not go through entry");
	check(args(FAKE_NR, 1, 2, 3, 4, 5, 6), "syscall() arguments (6th on the stack)");

	r = __syscall_cp_asm(&nocancel, FAKE_NR, 11, 12, 13, 14, 15, 16);
	check(calls == 3 && r == 4242, "__syscall_cp_asm did not go through entry");
	check(args(FAKE_NR, 11, 12, 13, 14, 15, 16), "__syscall_cp_asm arguments");

	raw(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, (long)&fs, 0, 0, 0, 0);
	r = __set_thread_area((void *)fs);
	check(calls == 4 && r == 0, "__set_thread_area did not go through entry");
	check(args(SYS_arch_prctl, 0x1002, fs, 0, 0, 0, 0), "__set_thread_area arguments");

	check(!misaligned, "stack not 16-byte aligned at the entry call");

	__sysinfo = 0;
	r = write(1, "fastentry: write via syscall\n", 29);
	check(calls == 4 && r == 29, "write() with __sysinfo == 0 went through entry");

	if (fails) return 1;
	raw(SYS_write, 1, (long)"fastentry ok\n", 13, 0, 0, 0);
	return 0;
}
