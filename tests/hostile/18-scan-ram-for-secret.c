/* expected: a host secret in husk's environment is nowhere in guest RAM: "0 hits", exit 0 (a secret given with -e is found: exit 1) */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* argv[1] is the secret reversed, so no clear copy of it enters the guest */
int main(int argc, char **argv)
{
	const char *rev = argc > 1 ? argv[1] : "";
	size_t len = strlen(rev);
	if (len < 8)
		return 2;
	/* the stack is the top 8 MiB of RAM, its lowest page an unmapped guard;
	 * everything else from 0x1000 up is mapped (no protections inside) */
	uintptr_t top = ((uintptr_t)&argc + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
	uintptr_t guard = top - (8u << 20);
	size_t hits = 0, scanned = 0;
	for (uintptr_t a = 0x1000; a + len <= top; a++) {
		if (a + len > guard && a < guard + 4096) {
			a = guard + 4095;
			continue;
		}
		scanned++;
		const volatile unsigned char *p = (const volatile unsigned char *)a;
		size_t j = 0;
		while (j < len && p[j] == (unsigned char)rev[len - 1 - j])
			j++;
		if (j == len) {
			printf("found at %#lx\n", (unsigned long)a);
			hits++;
		}
	}
	printf("scanned %zu MiB, %zu hits\n", scanned >> 20, hits);
	return hits != 0;
}
