/* expected: unbounded recursion hits the stack guard page: husk reports SIGSEGV (page fault), exit 139 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>

static int down(volatile char *prev, int n)
{
	volatile char frame[256];
	frame[0] = (char)n;
	frame[255] = prev ? prev[0] : 0;
	return down(frame, n + 1) + frame[1]; /* not a tail call */
}

int main(void)
{
	printf("%d\n", down(0, 0));
	return 0;
}
