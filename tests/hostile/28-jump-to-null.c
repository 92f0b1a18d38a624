/* expected: a call to address 0 faults on the unmapped page 0: husk reports SIGSEGV at rip 0, exit 139 */
int main(void)
{
	void (*volatile fn)(void) = 0;
	fn();
	return 0;
}
