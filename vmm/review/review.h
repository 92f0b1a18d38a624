/* SPDX-License-Identifier: GPL-2.0-only */
/* Showing staged changes to a person and asking what to apply: the review
 * after `husk run --review` and `husk review STAGE`; and the commands
 * `husk apply STAGE [PATH...]` and `husk discard STAGE [PATH...]`. */
#ifndef HUSK_REVIEW_H
#define HUSK_REVIEW_H
#include <stdio.h>
#include "review/stage.h"

/* The stage's summary and diffs on out; with in (a terminal), the
 * question what to apply, and the answer carried out.  husk's status: 0,
 * EXIT_WORKDIR when an apply was refused somewhere (left staged); *st
 * gets what was applied. */
struct apply_stats;
int review_session(struct stage *s, FILE *in, FILE *out, struct apply_stats *st);
/* husk review|apply|discard ...: husk's status. */
int review_command(int argc, char **argv);
#endif
