/* SPDX-License-Identifier: GPL-2.0-only */
/* Writes through a NULL pointer: must die with SIGSEGV. */
int main(void)
{
	*(volatile int *)0 = 1;
	return 0;
}
