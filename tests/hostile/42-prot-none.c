/* expected: PROT_NONE pages (guard pages) stay out of reach: system calls given one fail with EFAULT (the kernel
 * does not fault on them), mprotect back and a fresh mmap over them give usable zeroed memory; mprotect of an
 * unmapped range is ENOMEM; then a touch of a PROT_NONE page is SIGSEGV (139), after "touch" */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	int bad = 0, fds[2];
	char *p = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 'x', 3 * 4096);
	bad += mprotect(p + 4096, 4096, PROT_NONE) != 0;
	errno = 0;
	int sink[2];
	bad += pipe(sink) != 0;
	bad += !(write(sink[1], p + 4096, 10) == -1 && errno == EFAULT);
	long k = write(sink[1], p + 4000, 200); /* straddles it: Linux writes what comes before (96), husk refuses it all */
	bad += !((k == -1 && errno == EFAULT) || (k >= 0 && k < 200));
	bad += pipe(fds) != 0 || write(fds[1], "abc", 3) != 3;
	errno = 0;
	bad += !(read(fds[0], p + 4096, 3) == -1 && errno == EFAULT);
	bad += mprotect(p + 4096, 4096, PROT_READ | PROT_WRITE) != 0 || p[4096] != 'x';
	bad += read(fds[0], p + 4096, 3) != 3 || memcmp(p + 4096, "abc", 3);
	char *q = mmap(0, 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bad += q == MAP_FAILED || munmap(q, 2 * 4096) != 0;
	char *r = mmap(q, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	bad += r != q || r[0] != 0 || r[4096] != 0;
	errno = 0;
	bad += !(mprotect((char *)0x7f0000000000, 4096, PROT_NONE) == -1 && errno == ENOMEM);
	printf("%d unexpected\n", bad);
	mprotect(p, 4096, PROT_NONE);
	printf("touch\n");
	fflush(stdout);
	p[10] = 1;
	printf("survived\n");
	return 0;
}
