/* expected: an integer division by zero: husk reports SIGFPE (divide error), exit 136 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argv;
	volatile int num = 100, zero = argc - 1;
	printf("%d\n", num / zero);
	return 0;
}
