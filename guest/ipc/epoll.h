/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_EPOLL_H
#define GUEST_EPOLL_H
#include <stdint.h>

long sys_epoll_create1(long flags);
long sys_epoll_ctl(long epfd, long op, long fd, void *event);
/* epoll_wait (mask NULL), epoll_pwait, epoll_pwait2 (ts: a timespec instead of ms) */
long sys_epoll_pwait(long epfd, void *events, long max, long timeout_ms, const int64_t *ts, int use_ts,
		     const uint64_t *mask, unsigned long size);
#endif
