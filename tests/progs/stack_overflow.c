/* SPDX-License-Identifier: GPL-2.0-only */
/* Unbounded recursion: must hit the stack's guard page and die with SIGSEGV,
 * not run into other memory. */
#include <stdio.h>

static volatile int limit = 1 << 30; /* never reached; hides the recursion from gcc */

static int depth(volatile char *prev, int n)
{
	volatile char frame[4096];
	frame[0] = (char)n;
	frame[4095] = prev ? prev[0] : 0;
	if (n >= limit)
		return 0;
	return depth(frame, n + 1) + frame[1];
}

int main(void)
{
	printf("%d\n", depth(0, 0));
	return 0;
}
