/* SPDX-License-Identifier: GPL-2.0-only */
/* Writing the workdir back: only what the program changed.  The guest's
 * ext2 image is untrusted: a confined child (workdir_reader.c) parses it
 * and streams the tree; the writer here compares each entry with the
 * record taken when DIR was copied in (copyin.h) and applies what the
 * program created, modified, renamed or deleted, under DIR's fd, with *at
 * calls that never follow a symlink.  What the host changed meanwhile
 * stays; where both changed a path, the program's version goes beside the
 * host's as NAME.husk-conflict (the README states every rule). */
#ifndef HUSK_EXTRACT_H
#define HUSK_EXTRACT_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "disks/copyin.h"

struct extract_limits {
	uint64_t max_files, max_bytes;
};

#define EXTRACT_NOTED 8 /* conflict paths kept for the audit */

struct extract_stats {
	uint64_t files, dirs, symlinks, skipped, removed, bytes, unchanged, conflicts, failed;
	char conflict[EXTRACT_NOTED][200]; /* the first conflicts' paths, escaped */
	/* a staged write-back (review/stage.h): changes the file policy
	 * refused, those left staged, and where */
	uint64_t denied, staged;
	char stage[4200];
};

enum { EXTRACT_OK = 0, EXTRACT_BAD_IMAGE = -1, EXTRACT_HOST_ERROR = -2 };

/* The guest's image of the workdir: all of it in fd, or (map not NULL) a
 * copy-on-write image (mapped.h) whose blocks not dirty are read from the
 * host files the file server at `files` opens (the workdir is its disk
 * `disk`). */
struct workdir_image {
	int fd;
	const struct copyin_map *map;
	const uint64_t *dirty;
	int files;
	uint32_t disk;
};

/* Applies the image to the directory dirfd.  EXTRACT_OK;
 * EXTRACT_BAD_IMAGE: the image is corrupt or over a limit, err says why
 * (what was applied before stays); EXTRACT_HOST_ERROR: some paths could not
 * be written on the host (each was named on stderr), the rest was; a retry
 * with the same record applies what is missing.  Warnings go to stderr,
 * escaped and capped. */
int workdir_extract(const struct workdir_image *img, int dirfd, const struct copyin_record *rec, const struct extract_limits *lim,
		    struct extract_stats *st, char *err, size_t errlen);

/* Shared with the stage's apply (review/apply.c).  A name as written on the
 * host: control characters become '_' (a name with a newline would surprise
 * the user's scripts and tools). */
void extract_host_name(const char *name, char out[256]);
/* The host directory holding path (from the workdir's top, fd top), walked
 * with extract_host_name's names and without following a symlink, missing
 * directories made on the way when make: its fd (top itself for the top's
 * entries; else to close) and the last name in name; -1 (errno). */
int extract_host_parent(int top, const char *path, int make, char name[256]);
/* The host's file at path, so walked, opened to read: an fd, or -1. */
int extract_host_open(int top, const char *path);
/* An mtime as written on the host: never before the epoch, never after
 * now (a file from the future would confuse make and backup tools). */
static inline struct timespec extract_clamp_time(int64_t t, int64_t now)
{
	return (struct timespec){ t < 0 ? 0 : t > now ? now : t, 0 };
}
/* The permissions a file gets on the host: its own when the host's version
 * (before_mode, -1: none) had the same, else with the user's umask; never
 * set-id bits: the files become the host user's. */
static inline unsigned extract_file_mode(unsigned mode, int before_mode, unsigned umask_bits)
{
	unsigned m = mode & 0777;
	return before_mode >= 0 && ((unsigned)before_mode & 0777) == m ? m : m & ~umask_bits;
}
/* Renames tmp to name in dirfd unless name exists (EEXIST); file systems
 * without RENAME_NOREPLACE get a check, then a rename. */
int extract_rename_noreplace(int dirfd, const char *tmp, const char *name);
#endif
