/* SPDX-License-Identifier: GPL-2.0-only */
/* syscall_cost [N]: average cost of one cheap system call (getppid), in ns.
 * Built with husk's libc it goes through the fast entry, built with stock
 * musl through the `syscall` instruction. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += getppid();
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
	printf("%.1f\n", ns + (sum == -1)); /* use sum so the loop stays */
	return 0;
}
