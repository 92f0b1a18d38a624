/* SPDX-License-Identifier: GPL-2.0-only */
/* Policy files (--policy FILE, JSON, read with jansson): the same settings as
 * the options.  A policy becomes the equivalent option list, parsed by the
 * one option parser before the command line's own options (which win). */
#ifndef HUSK_POLICY_H
#define HUSK_POLICY_H
#include <jansson.h>
#include <stddef.h>
#include "options.h"

/* Appends "--key=value" strings to *args (malloc'd, NULL-terminated).
 * Returns their count, or -1 with a one-line reason in err. */
int policy_to_args(const char *path, char ***args, char *err, size_t errlen);
/* The effective policy, as a policy file would write it. */
json_t *policy_json(const struct options *o);
#endif
