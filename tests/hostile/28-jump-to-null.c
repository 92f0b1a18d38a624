/* expected: a call to address 0 faults on the unmapped page 0: husk reports SIGSEGV at rip 0, exit 139 */
/* SPDX-License-Identifier: GPL-2.0-only */
int main(void)
{
	void (*volatile fn)(void) = 0;
	fn();
	return 0;
}
