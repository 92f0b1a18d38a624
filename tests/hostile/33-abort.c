/* expected: abort() kills the program with SIGABRT: exit 134 (TODO: today husk exits 122 "guest halted without exiting": musl's abort ends in hlt because signals are never delivered) */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	printf("before abort\n");
	fflush(stdout);
	abort();
}
