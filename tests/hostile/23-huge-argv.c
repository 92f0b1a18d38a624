/* expected: 2000 arguments of 400 bytes arrive intact: "argc=2001 bytes=800000", exit 0; 2500 of them do not fit the boot information: husk exits 125 with a message */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t total = 0, odd = 0;
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);
		total += n;
		odd += n != 400 || strspn(argv[i], "a") != n;
	}
	printf("argc=%d bytes=%zu odd=%zu\n", argc, total, odd);
	return 0;
}
