/* SPDX-License-Identifier: GPL-2.0-only */
/* Divides by zero: must die with SIGFPE. */
int main(void)
{
	volatile int zero = 0;
	return 10 / zero;
}
