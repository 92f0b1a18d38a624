/* expected: the i386 `int $0x80` gate: a software interrupt is a #GP for the program (husk runs 64-bit programs only), SIGSEGV: exit 139 after "before int $0x80" */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>

int main(void)
{
	long ret = 20; /* i386 getpid */
	printf("before int $0x80\n");
	fflush(stdout);
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	printf("int $0x80 returned %ld\n", ret);
	return 0;
}
