/* SPDX-License-Identifier: GPL-2.0-only */
/* timerfd_create(2): timers read through a file descriptor (timerfd.c).
 * new, old and cur are a struct itimerspec: {interval, value}, each two
 * int64 (seconds, nanoseconds). */
#ifndef GUEST_TIMERFD_H
#define GUEST_TIMERFD_H
#include <stdint.h>
long sys_timerfd_create(long clockid, long flags);
long sys_timerfd_settime(long fd, long flags, const int64_t *new, int64_t *old);
long sys_timerfd_gettime(long fd, int64_t *cur);
#endif
