/* expected: an integer division by zero: husk reports SIGFPE (divide error), exit 136 */
#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argv;
	volatile int num = 100, zero = argc - 1;
	printf("%d\n", num / zero);
	return 0;
}
