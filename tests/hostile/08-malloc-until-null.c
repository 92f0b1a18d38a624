/* expected: with -m 64M malloc returns NULL before 64 MiB and a 1 TiB request fails: "malloc returned NULL after N MiB", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	size_t total = 0;
	for (;;) {
		char *p = malloc(1 << 20);
		if (!p)
			break;
		memset(p, 0xa5, 1 << 20); /* really use it */
		total += 1 << 20;
	}
	printf("malloc returned NULL after %zu MiB\n", total >> 20);
	printf("1 TiB: %s\n", malloc((size_t)1 << 40) ? "got it" : "NULL");
	return 0;
}
