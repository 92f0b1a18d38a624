/* SPDX-License-Identifier: GPL-2.0-only */
/* Process costs, printed as "name value" lines for bench/processes:
 * fork + _exit + waitpid of a small program; the same with 50 MB of heap
 * touched (what fork shares copy-on-write); the same with the child
 * writing every page of it first (each page copied: copy-on-write's worst
 * case); the parent writing all of it again after such a fork (its pages
 * writable again); posix_spawn of this program (argv[1], which exits at
 * once) + waitpid.  Medians of several rounds.
 * Usage: fork SELF   (SELF: this program's path, as the kernel sees it)
 *        fork exit   (the spawned child: exits 0) */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "samples.h"

extern char **environ;

/* A fork whose child writes a byte in each page of [write, write+len). */
static double fork_round_writing(char *write, size_t len)
{
	double t = now_us();
	pid_t p = fork();
	if (p == 0) {
		for (size_t i = 0; i < len; i += 4096)
			((volatile char *)write)[i] = 2;
		_exit(0);
	}
	if (p < 0 || waitpid(p, 0, 0) != p) {
		perror("fork");
		exit(1);
	}
	return now_us() - t;
}

static double fork_round(void)
{
	return fork_round_writing(0, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exit"))
		return 0;
	if (argc < 2) {
		fprintf(stderr, "usage: fork SELF\n");
		return 2;
	}
	enum { ROUNDS = 101, BIG_ROUNDS = 11 };
	double v[ROUNDS];
	for (int i = 0; i < ROUNDS; i++)
		v[i] = fork_round();
	printf("fork_us %.1f\n", samples_quantile(v, ROUNDS, 0.5));

	char *args[] = { argv[1], "exit", 0 };
	for (int i = 0; i < ROUNDS; i++) {
		double t = now_us();
		pid_t p;
		if (posix_spawn(&p, argv[1], 0, 0, args, environ) || waitpid(p, 0, 0) != p) {
			perror("posix_spawn");
			return 1;
		}
		v[i] = now_us() - t;
	}
	printf("spawn_us %.1f\n", samples_quantile(v, ROUNDS, 0.5));

	size_t big = 50u << 20;
	char *heap = malloc(big);
	if (!heap)
		return 1;
	memset(heap, 1, big); /* touched: fork copies it */
	for (int i = 0; i < BIG_ROUNDS; i++)
		v[i] = fork_round();
	printf("fork50_ms %.2f\n", samples_quantile(v, BIG_ROUNDS, 0.5) / 1e3);
	for (int i = 0; i < BIG_ROUNDS; i++)
		v[i] = fork_round_writing(heap, big);
	printf("fork50_child_writes_ms %.2f\n", samples_quantile(v, BIG_ROUNDS, 0.5) / 1e3);
	for (int i = 0; i < BIG_ROUNDS; i++) {
		fork_round();
		double t = now_us();
		for (size_t k = 0; k < big; k += 4096)
			((volatile char *)heap)[k] = (char)i;
		v[i] = now_us() - t;
	}
	printf("fork50_parent_writes_ms %.2f\n", samples_quantile(v, BIG_ROUNDS, 0.5) / 1e3);
	free(heap);
	return 0;
}
