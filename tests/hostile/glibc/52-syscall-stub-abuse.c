/* expected: a glibc program wrecks the stub its rewritten syscall site jumps to (overwritten with int3: SIGTRAP, 133; the stub's page unmapped: SIGSEGV, 139): only the program dies, the kernel and husk report it */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline)) static long site(const uint8_t **at)
{
	long r;
	const uint8_t *a;
	__asm__ volatile("lea 1f(%%rip), %1\n1: mov $39, %%eax\n syscall" : "=a"(r), "=r"(a) : : "rcx", "r11", "memory");
	*at = a;
	return r;
}

int main(int argc, char **argv)
{
	const uint8_t *at;
	site(&at);
	site(&at);
	if (at[0] != 0xe9) {
		puts("the site was not rewritten (hardware KVM?)");
		return 0;
	}
	int32_t rel;
	memcpy(&rel, at + 1, 4);
	uint8_t *stub = (uint8_t *)(at + 5 + rel);
	printf("stub at %p\n", (void *)stub);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "unmap"))
		munmap((void *)((uintptr_t)stub & ~(uintptr_t)4095), 4096);
	else
		memset(stub, 0xcc, 16);
	site(&at);
	puts("survived UNEXPECTED");
	return 0;
}
