/* expected: syscalls given bad pointers (unmapped, or into the guest kernel) return -1 with EFAULT, and the program goes on: "0 unexpected", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	static const struct {
		const char *name;
		long nr, a[6];
	} calls[] = {
		{ "write(1, 1, 10)", SYS_write, { 1, 1, 10 } },
		{ "read(0, 0x10, 10)", SYS_read, { 0, 0x10, 10 } },
		{ "open(0x10, 0)", SYS_open, { 0x10, 0 } },
		{ "clock_gettime(0, 8)", SYS_clock_gettime, { 0, 8 } },
		{ "uname(8)", SYS_uname, { 8 } },
		{ "write(2, NULL, 10)", SYS_write, { 2, 0, 10 } },
		{ "write(1, -4096, 10)", SYS_write, { 1, -4096, 10 } },
		{ "write(1, 1<<47, 10)", SYS_write, { 1, 1L << 47, 10 } },
		{ "writev(1, 8, 1)", SYS_writev, { 1, 8, 1 } },
		{ "gettimeofday(8, 0)", SYS_gettimeofday, { 8, 0 } },
		{ "getrandom(8, 16, 0)", SYS_getrandom, { 8, 16, 0 } },
		{ "stat(0x10, 8)", SYS_stat, { 0x10, 8 } },
		{ "getcwd(8, 100)", SYS_getcwd, { 8, 100 } },
		{ "nanosleep(8, 0)", SYS_nanosleep, { 8, 0 } },
		{ "uname(-1)", SYS_uname, { -1 } },
		/* the guest kernel's memory: mapped, but not the program's */
		{ "read(0, kernel text, 10)", SYS_read, { 0, 0x200000, 10 } },
		{ "getrandom(page tables, 64)", SYS_getrandom, { 0x1000, 64, 0 } },
		{ "clock_gettime(0, report)", SYS_clock_gettime, { 0, 0x310000 } },
		{ "uname(boot tree)", SYS_uname, { 0x320000 } },
	};
	int bad = 0;
	for (unsigned i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		errno = 0;
		long r = syscall(calls[i].nr, calls[i].a[0], calls[i].a[1], calls[i].a[2],
				 calls[i].a[3], calls[i].a[4], calls[i].a[5]);
		int e = errno, good = r == -1 && e == EFAULT;
		printf("%-22s -> %ld %s%s\n", calls[i].name, r, e == EFAULT ? "EFAULT" : strerror(e),
		       good ? "" : "  UNEXPECTED");
		fflush(stdout);
		bad += !good;
	}
	printf("%d unexpected\n", bad);
	return bad != 0;
}
