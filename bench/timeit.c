/* SPDX-License-Identifier: GPL-2.0-only */
/* timeit N CMD [ARGS...] [::: CMD2 [ARGS...]]...: run each command N times
 * (stdout to /dev/null), taking turns so that the machine's load changes hit
 * them alike, and print "p50_us p99_us" of the wall time from fork to exit,
 * one line per command.  Fails if any run exits non-zero, so a broken
 * command never looks fast. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "samples.h"

#define MAX_CMDS 8

static double run(char **cmd, int devnull)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(devnull, 1);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "timeit: %s failed (status %#x)\n", cmd[0], st);
		exit(1);
	}
	return (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: timeit N CMD [ARGS...] [::: CMD [ARGS...]]...\n");
		return 2;
	}
	int n = atoi(argv[1]);
	if (n < 1) {
		fprintf(stderr, "timeit: bad count '%s'\n", argv[1]);
		return 2;
	}
	char **cmd[MAX_CMDS];
	int ncmd = 0;
	cmd[ncmd++] = argv + 2;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], ":::")) {
			argv[i] = NULL;
			if (ncmd == MAX_CMDS || i + 1 == argc) {
				fprintf(stderr, "timeit: at most %d commands, none empty\n", MAX_CMDS);
				return 2;
			}
			cmd[ncmd++] = argv + i + 1;
		}
	double *t = malloc((size_t)n * ncmd * sizeof *t);
	int devnull = open("/dev/null", O_WRONLY);
	for (int i = 0; i < n; i++)
		for (int c = 0; c < ncmd; c++)
			t[c * n + i] = run(cmd[c], devnull);
	for (int c = 0; c < ncmd; c++) {
		double *v = t + c * n;
		printf("%.0f %.0f\n", samples_quantile(v, n, 0.5), samples_quantile(v, n, 0.99));
	}
	return 0;
}
