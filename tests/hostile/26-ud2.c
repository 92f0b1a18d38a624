/* expected: ud2 is an invalid opcode: husk reports SIGILL, exit 132 */
/* SPDX-License-Identifier: GPL-2.0-only */
int main(void)
{
	__asm__ volatile("ud2");
	return 0;
}
