/* SPDX-License-Identifier: GPL-2.0-only */
/* Applying staged changes (stage.h) to the workdir, by the write-back's
 * rules: every path is walked from the workdir's fd without following a
 * symlink, data goes to a temporary that is renamed into place, and a
 * change is applied only where the host still has what was copied in (a
 * new path: nothing there).  Where the host changed a path since, the
 * change is refused with one line and stays staged: nothing of the host's
 * and nothing of the program's is lost. */
#ifndef HUSK_APPLY_H
#define HUSK_APPLY_H
#include <jansson.h>
#include "review/stage.h"

struct apply_stats {
	uint64_t applied, refused, bytes; /* bytes: of the files applied */
};

/* The host's entry s is the one copied in (a change's "before"), unchanged
 * since (a directory: the same directory). */
struct stat;
int stage_unchanged(const struct stat *s, json_t *before);
/* Which changes (c, the i-th of the stage's) an apply or a drop takes. */
typedef int stage_want(json_t *c, size_t i, void *ctx);
/* The changes at or under one of the paths (a struct stage_paths *; none
 * given: every change).  A rename is at both its names. */
struct stage_paths {
	char *const *v;
	int n;
};
stage_want stage_want_paths;
/* Applies the pending changes wanted to the stage's workdir, marks them
 * "applied" in the manifest, and removes the stage when nothing is left to
 * decide.  0 when all were applied; EXIT_WORKDIR when some were refused;
 * EXIT_USAGE when the workdir is missing or is not the stage's (err). */
int stage_apply(struct stage *s, stage_want *want, void *ctx, struct apply_stats *st, char *err, size_t errlen);
/* Marks the pending changes wanted "dropped" (never to be applied). */
void stage_drop(struct stage *s, stage_want *want, void *ctx);
/* The end of a decision: the manifest written back, the stage removed when
 * nothing is left to decide.  0, or -1 (err). */
int stage_settle(struct stage *s, char *err, size_t errlen);
#endif
