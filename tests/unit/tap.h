/* SPDX-License-Identifier: GPL-2.0-only */
/* Minimal TAP output for the C unit tests. */
#ifndef HUSK_TAP_H
#define HUSK_TAP_H
#include <stdio.h>

static int tap_n, tap_failed;

#define ok(cond, ...) do { \
	int ok_c_ = !!(cond); \
	printf("%sok %d - ", ok_c_ ? "" : "not ", ++tap_n); \
	printf(__VA_ARGS__); \
	printf("\n"); \
	if (!ok_c_) { tap_failed++; printf("#   failed at %s:%d\n", __FILE__, __LINE__); } \
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
