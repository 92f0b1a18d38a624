/* SPDX-License-Identifier: GPL-2.0-only */
/* What the checking programs share: TAP-style "ok N - ..." lines (the
 * caller prints "done N" at the end) and clock helpers.  Header-only: each
 * program is one file, built with two libcs. */
#ifndef TESTS_PROGS_CHECK_H
#define TESTS_PROGS_CHECK_H
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static int n;

static inline void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%sok %d - ", cond ? "" : "not ", ++n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static inline uint64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t mono(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

static inline struct timespec ts_of(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
}
#endif
