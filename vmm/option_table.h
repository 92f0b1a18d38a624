/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HUSK_OPTION_TABLE_H
#define HUSK_OPTION_TABLE_H
#include <getopt.h>

/* husk run's options (getopt_long's table, ending with a zero entry). */
extern const struct option husk_run_options[];

/* The option of that long name, or NULL. */
const struct option *husk_option_find(const char *name);

/* 1 if each use of the option adds an entry (-e, --ro, --allow-net ...). */
int husk_option_repeats(const char *name);
#endif
