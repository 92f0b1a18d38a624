/* SPDX-License-Identifier: GPL-2.0-only */
/* Waiting on the host fds devices move bytes through (a console's, the
 * network broker's socket). */
#ifndef HUSK_HOST_FD_H
#define HUSK_HOST_FD_H
#include <stdint.h>

/* Until fd is ready to read (or write), at most ms (-1: no limit): 1 ready,
 * 0 not (or a signal came).  pselect, not poll: the confined VMM's
 * RLIMIT_NOFILE is 0, and poll refuses any fd beyond it (EINVAL). */
int host_fd_wait(int fd, int writing, int64_t ms);
/* The same for n fds (those < 0 left out): bit i set for fds[i] ready. */
unsigned host_fds_wait(const int *fds, int n, int writing, int64_t ms);
#endif
