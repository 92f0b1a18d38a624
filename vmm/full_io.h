/* SPDX-License-Identifier: GPL-2.0-only */
/* Whole reads and writes: all n bytes or an error (a short read is one:
 * the file ended early). */
#ifndef HUSK_FULL_IO_H
#define HUSK_FULL_IO_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0, or -1 (errno set; 0 on a short read). */
int full_read(int fd, void *p, size_t n);
int full_write(int fd, const void *p, size_t n);
int full_pread(int fd, void *p, size_t n, off_t off);
int full_pwrite(int fd, const void *p, size_t n, off_t off);
/* Reads n bytes and drops them (a stream's part not wanted). */
int full_skip(int fd, uint64_t n);
#endif
