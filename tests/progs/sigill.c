/* Executes ud2: must die with SIGILL. */
int main(void)
{
	__builtin_trap();
}
