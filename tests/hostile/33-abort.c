/* expected: abort() kills the program with SIGABRT: exit 134 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	printf("before abort\n");
	fflush(stdout);
	abort();
}
