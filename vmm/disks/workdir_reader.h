/* SPDX-License-Identifier: GPL-2.0-only */
/* The confined child that reads the guest's workdir image (see
 * workdir_reader.c) and streams its tree as extract_stream.h records. */
#ifndef HUSK_WORKDIR_READER_H
#define HUSK_WORKDIR_READER_H
#include <sys/types.h>
#include "disks/extract.h"

/* Starts the reader on image_fd within lim (entries and bytes, counted in
 * the reader too); *stream gets the pipe to read records from.  The
 * child's pid, or -1 (errno set). */
pid_t workdir_reader_start(int image_fd, const struct extract_limits *lim, int *stream);
#endif
