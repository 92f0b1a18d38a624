/* SPDX-License-Identifier: GPL-2.0-only */
/* A progress line on stderr for long work (walking a big tree, a long
 * write-back), only when stderr is a terminal: "husk: LABEL: N UNIT[, M MB]",
 * redrawn at most every half second once the work has taken that long,
 * and cleared when it ends.  Nothing when stderr is not a terminal. */
#ifndef HUSK_PROGRESS_H
#define HUSK_PROGRESS_H
#include <stdint.h>

/* From now on, until progress_end (label NULL: off). */
void progress_begin(const char *label);
/* How far: count things of `unit` ("names", "entries"), and bytes if not 0. */
void progress_show(uint64_t count, const char *unit, uint64_t bytes);
/* Clears the line if it was shown; off. */
void progress_end(void);
#endif
