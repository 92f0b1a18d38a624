/* SPDX-License-Identifier: GPL-2.0-only */
/* A run's changes to its workdir, staged instead of applied (--review, or
 * a file policy: file_policy.h).  A stage is a directory husk makes beside
 * the workdir, NAME.husk-stage-ID (mode 0700): manifest.json, the list of
 * changes, and data/N, the new contents of the files created or modified.
 * A change is what the program did to one path against what was copied in
 * (the copy-in record): created, modified, replaced (another type),
 * renamed, deleted, or a directory's mode; "before" is the host's entry as
 * it was copied in, which applying checks the host still has (apply.h).
 * The manifest is read back as untrusted input: every path is checked. */
#ifndef HUSK_STAGE_H
#define HUSK_STAGE_H
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "disks/extract.h"
#include "review/file_policy.h"

#define STAGE_PATH 4200

struct stage_stats {
	uint64_t changes, denied, bytes;
};

/* Stages the image's changes against rec in a new stage beside the
 * workdir (the directory workdir; path gets the stage's name); denials are
 * checked against pol and recorded in the audit file audit_fd (-1: none);
 * run (or NULL) is how the run ended, for the review.
 * EXTRACT_OK, EXTRACT_BAD_IMAGE (err; what was staged is removed) or
 * EXTRACT_HOST_ERROR (the stage could not be made or written, err). */
int stage_make(const struct workdir_image *img, const struct copyin_record *rec, const struct extract_limits *lim,
	       int workdir, const struct file_policy *pol, int audit_fd, json_t *run, char path[STAGE_PATH],
	       struct stage_stats *st, char *err, size_t errlen);

/* A stage read back. */
struct stage {
	int dir;          /* the stage directory */
	char path[STAGE_PATH];
	json_t *manifest;
	json_t *changes;  /* borrowed from manifest */
};

/* Opens the stage at path and checks its manifest: 0, or -1 with a
 * one-line reason. */
int stage_open(const char *path, struct stage *s, char *err, size_t errlen);
/* Writes the manifest back (each change's "state"), atomically. */
int stage_save(struct stage *s, char *err, size_t errlen);
/* How many changes are still to decide ("state": "staged", not denied). */
size_t stage_pending(const struct stage *s);
/* Removes the stage: its data, its manifest and its directory. */
int stage_remove(struct stage *s, char *err, size_t errlen);
void stage_close(struct stage *s);
/* Opens a change's staged data (data/N): an fd, or -1. */
int stage_data_open(const struct stage *s, json_t *change);

/* The SHA-256 of fd's data (read with pread) in hex: 0, or -1. */
int stage_sha256(int fd, char out[65]);

/* A change's fields, read from its manifest entry. */
static inline const char *change_str(json_t *c, const char *key)
{
	return json_string_value(json_object_get(c, key));
}

static inline int64_t change_num(json_t *c, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(c, key));
}

/* Still to decide: staged (not applied or dropped), and not denied. */
static inline int change_pending(json_t *c)
{
	const char *state = change_str(c, "state");
	return state && !strcmp(state, "staged") && !json_object_get(c, "denied");
}
#endif
