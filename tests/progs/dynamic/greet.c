/* SPDX-License-Identifier: GPL-2.0-only */
/* A shared library for tests/integration/dynamic.t. */
#include <stdio.h>

int greet(const char *who)
{
	return printf("hello, %s, from a shared library\n", who);
}
