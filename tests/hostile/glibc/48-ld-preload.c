/* expected: LD_PRELOAD of a library in the workdir is the program's own business inside its VM: Debian's id and python3 run with it ("preloaded", uid 4242), the host is untouched */
/* SPDX-License-Identifier: GPL-2.0-only */
/* Built as a shared object (gcc -shared -fPIC) and preloaded into Debian's
 * programs in a Debian image. */
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

__attribute__((constructor)) static void announce(void)
{
	fputs("preloaded\n", stderr);
}

uid_t getuid(void)
{
	return 4242;
}

uid_t geteuid(void)
{
	return 4242;
}
