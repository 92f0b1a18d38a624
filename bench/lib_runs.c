/* SPDX-License-Identifier: GPL-2.0-only */
/* lib_runs N HUSK PROGRAM [ARGS...]: N runs of PROGRAM through libhusk
 * (husk_run), N through the command line (posix_spawn of HUSK run, as a
 * shell would, stdout to /dev/null) and N through the command line with
 * --audit (the record the library reads for its result), in turns, from
 * this one process; prints "p50_us p99_us" for each, in that order.  Any
 * run that fails fails the benchmark. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "husk.h"
#include "samples.h"

extern char **environ;

static void print(double *v, int n)
{
	printf("%.0f %.0f\n", samples_quantile(v, n, 0.5), samples_quantile(v, n, 0.99));
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: lib_runs N HUSK PROGRAM [ARGS...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	double *lib = calloc(n, sizeof *lib), *cli = calloc(n, sizeof *cli), *aud = calloc(n, sizeof *aud);
	struct husk_error err;
	husk_config *c = husk_config_new(argv[3]);
	husk_config_husk_path(c, argv[2], &err);
	for (int i = 4; i < argc; i++)
		husk_config_arg(c, argv[i], &err);
	char **cmd = calloc(argc + 2, sizeof *cmd), **acmd = calloc(argc + 4, sizeof *acmd);
	char audit[64];
	snprintf(audit, sizeof audit, "/dev/shm/lib_runs-%d", (int)getpid());
	cmd[0] = acmd[0] = argv[2], cmd[1] = acmd[1] = "run";
	acmd[2] = "--audit", acmd[3] = audit;
	for (int i = 3; i < argc; i++)
		cmd[i - 1] = acmd[i + 1] = argv[i];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (int i = 0; i < n; i++) {
		double t = now_us();
		husk_result *r = husk_run(c, &err);
		lib[i] = now_us() - t;
		if (!r || husk_result_status(r)) {
			fprintf(stderr, "lib_runs: a library run failed: %s\n", r ? husk_result_reason(r) : err.message);
			return 1;
		}
		husk_result_free(r);
		t = now_us();
		pid_t pid;
		int st;
		if (posix_spawn(&pid, cmd[0], &fa, NULL, cmd, environ) || waitpid(pid, &st, 0) < 0 || st) {
			fprintf(stderr, "lib_runs: a command-line run failed\n");
			return 1;
		}
		cli[i] = now_us() - t;
		t = now_us();
		if (posix_spawn(&pid, acmd[0], &fa, NULL, acmd, environ) || waitpid(pid, &st, 0) < 0 || st) {
			fprintf(stderr, "lib_runs: a command-line run with --audit failed\n");
			return 1;
		}
		aud[i] = now_us() - t;
		unlink(audit);
	}
	print(lib, n);
	print(cli, n);
	print(aud, n);
	husk_config_free(c);
	return 0;
}
