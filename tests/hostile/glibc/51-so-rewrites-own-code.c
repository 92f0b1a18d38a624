/* expected: a shared object (dlopen'd by Debian's python3 through ctypes) that makes its own text writable and patches a function: it runs patched (answer() = 42); its own VM */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) int answer(void)
{
	return 1;
}

__attribute__((constructor)) static void patch(void)
{
	/* mov $42, %eax; ret */
	static const uint8_t code[] = { 0xb8, 42, 0, 0, 0, 0xc3 };
	uintptr_t page = (uintptr_t)answer & ~(uintptr_t)4095;
	if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC))
		return;
	volatile uint8_t *p = (volatile uint8_t *)answer;
	for (unsigned i = 0; i < sizeof code; i++)
		p[i] = code[i];
	mprotect((void *)page, 8192, PROT_READ | PROT_EXEC);
}
