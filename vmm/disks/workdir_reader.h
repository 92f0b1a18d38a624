/* SPDX-License-Identifier: GPL-2.0-only */
/* The confined child that reads the guest's workdir image (see
 * workdir_reader.c) and streams its tree as extract_stream.h records. */
#ifndef HUSK_WORKDIR_READER_H
#define HUSK_WORKDIR_READER_H
#include <sys/types.h>
#include "disks/extract.h"

/* Starts the reader on img within lim (entries and bytes, counted in the
 * reader too); *stream gets the pipe to read records from.  With rec (the
 * copy-in's record), files the program left alone are sent without data.
 * The child's pid, or -1 (errno set). */
pid_t workdir_reader_start(const struct workdir_image *img, const struct copyin_record *rec,
			   const struct extract_limits *lim, int *stream);
#endif
