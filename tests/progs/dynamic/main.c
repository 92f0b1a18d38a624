/* SPDX-License-Identifier: GPL-2.0-only */
/* A dynamically linked program for tests/integration/dynamic.t: a library
 * it needs (DT_NEEDED, found by its rpath), one it opens (dlopen), what
 * its auxiliary vector says, and its heap. */
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

int greet(const char *who);

int main(int argc, char **argv)
{
	greet(argc > 1 ? argv[1] : "world");
	void *h = dlopen(argc > 2 ? argv[2] : "/workdir/libgreet.so", RTLD_NOW);
	int (*g)(const char *) = h ? (int (*)(const char *))dlsym(h, "greet") : 0;
	if (g)
		g("dlopen");
	else
		printf("dlopen: %s\n", dlerror());
	Elf64_Phdr *ph = (Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long base = getauxval(AT_BASE), entry = getauxval(AT_ENTRY);
	printf("auxv: AT_BASE %s, AT_ENTRY %s, AT_PHDR's first type %u\n", base ? "set" : "0",
	       entry == (unsigned long)getauxval(AT_ENTRY) && entry ? "set" : "0", ph ? ph[0].p_type : 0);
	char *p = malloc(8 << 20);
	memset(p, 1, 8 << 20);
	printf("heap %d\n", p[(8 << 20) - 1]);
	return 0;
}
