/* SPDX-License-Identifier: GPL-2.0-only */
/* A plain static C program: prints its arguments and one variable. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	printf("hello from static C, argc=%d", argc);
	for (int i = 1; i < argc; i++)
		printf(" [%s]", argv[i]);
	const char *v = getenv("HUSK_TEST");
	printf(" HUSK_TEST=%s\n", v ? v : "(unset)");
	return 0;
}
