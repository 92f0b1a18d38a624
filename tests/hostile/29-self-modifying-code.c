/* expected: mprotect is not enforced (documented): the program patches its own "read-only" code and the patch runs: prints "answer() = 1" then "answer() = 42", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline, noipa)) int answer(void) { return 1; }

int main(void)
{
	int (*volatile fn)(void) = answer;
	uintptr_t page = (uintptr_t)fn & ~(uintptr_t)4095;
	int r = mprotect((void *)page, 8192, PROT_READ | PROT_EXEC);
	printf("mprotect(r-x) = %d, answer() = %d\n", r, fn());
	static const unsigned char code[] = { 0xb8, 42, 0, 0, 0, 0xc3 }; /* mov $42, %eax; ret */
	memcpy((void *)fn, code, sizeof code);
	printf("after patching its own code: answer() = %d\n", fn());
	return 0;
}
