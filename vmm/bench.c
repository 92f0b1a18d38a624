/* SPDX-License-Identifier: GPL-2.0-only */
/* husk bench: the benchmark of husk against the other sandboxes is a
 * Python program (bench/husk_bench.py; installed in PREFIX/lib/husk): it
 * spawns and times commands and draws with matplotlib, nothing a VMM does.
 * This finds it beside this husk and runs it with Debian's python3, telling
 * it which husk to measure (HUSK_BIN). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exit_codes.h"
#include "bench.h"

int bench_command(int argc, char **argv)
{
	char exe[PATH_MAX], script[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		fprintf(stderr, "husk: bench: cannot find this husk: %s\n", strerror(errno));
		return EXIT_INTERNAL;
	}
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	snprintf(script, sizeof script, "%s/bench/husk_bench.py", exe); /* a checkout */
	if (access(script, R_OK))
		snprintf(script, sizeof script, "%s/../lib/husk/husk_bench.py", exe); /* installed */
	if (access(script, R_OK)) {
		fprintf(stderr, "husk: bench: husk_bench.py is neither in %s/bench nor in %s/../lib/husk\n", exe, exe);
		return EXIT_USAGE;
	}
	*slash = '/';
	setenv("HUSK_BIN", exe, 1);
	char **args = calloc((size_t)argc + 2, sizeof *args);
	if (!args)
		return EXIT_INTERNAL;
	args[0] = "python3";
	args[1] = script;
	for (int i = 2; i < argc; i++)
		args[i] = argv[i];
	execv("/usr/bin/python3", args);
	fprintf(stderr, "husk: bench: cannot run /usr/bin/python3 (Debian's python3): %s\n", strerror(errno));
	return EXIT_USAGE;
}
