/* SPDX-License-Identifier: GPL-2.0-only */
/* Timing samples for the benchmark programs: a monotonic clock in
 * microseconds, and order statistics of a set of samples. */
#ifndef HUSK_BENCH_SAMPLES_H
#define HUSK_BENCH_SAMPLES_H
#include <stdlib.h>
#include <time.h>

static inline double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static inline int samples_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts V and returns its value at fraction Q (0.5: the median, 0.99). */
static inline double samples_quantile(double *v, int n, double q)
{
	qsort(v, n, sizeof *v, samples_cmp);
	return v[(int)(n * q) < n ? (int)(n * q) : n - 1];
}
#endif
