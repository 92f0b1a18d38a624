/* expected: getrandom fills 64 MiB (up to 32 MiB - 1 per call, like Linux), bytes look uniform: "total 67108864 uniform", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

int main(void)
{
	size_t want = 64 << 20, got = 0;
	unsigned char *buf = malloc(want);
	if (!buf) {
		puts("malloc failed");
		return 1;
	}
	while (got < want) {
		ssize_t r = getrandom(buf + got, want - got, 0);
		if (r <= 0) {
			printf("getrandom: %s\n", strerror(errno));
			return 1;
		}
		got += r;
	}
	size_t counts[256] = { 0 }, lo = want, hi = 0;
	for (size_t i = 0; i < want; i++)
		counts[buf[i]]++;
	for (int i = 0; i < 256; i++) {
		if (counts[i] < lo) lo = counts[i];
		if (counts[i] > hi) hi = counts[i];
	}
	/* expected 262144 per value, sd ~512 */
	printf("total %zu %s (byte counts %zu..%zu)\n", got,
	       lo > 255000 && hi < 269000 ? "uniform" : "NOT uniform", lo, hi);
	return 0;
}
