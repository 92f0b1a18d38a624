/* SPDX-License-Identifier: GPL-2.0-only */
/* Waiting for several files: poll, ppoll, select, pselect6 (and what epoll
 * shares with them). */
#ifndef GUEST_POLL_H
#define GUEST_POLL_H
#include <stdint.h>
#include "fs/file.h"

/* The POLL* events f is ready for; *deadline as stream_ops.poll.  Files in
 * file systems, devices and the output consoles are always ready for what
 * their access mode allows; stdin when input came. */
unsigned file_poll(struct file *f, uint64_t *deadline);
/* The optional signal mask of the p-variants: checked and read. */
long sigmask_arg(const uint64_t *set, unsigned long size, uint64_t *out);

long sys_poll(void *fds, unsigned long n, long timeout_ms);
long sys_ppoll(void *fds, unsigned long n, const int64_t *ts, const uint64_t *mask, unsigned long size);
long sys_select(long n, uint64_t *r, uint64_t *w, uint64_t *e, int64_t *tv);
long sys_pselect6(long n, uint64_t *r, uint64_t *w, uint64_t *e, int64_t *ts, const uint64_t *sig);
#endif
