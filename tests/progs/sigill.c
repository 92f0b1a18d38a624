/* SPDX-License-Identifier: GPL-2.0-only */
/* Executes ud2: must die with SIGILL. */
int main(void)
{
	__builtin_trap();
}
