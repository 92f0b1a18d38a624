/* SPDX-License-Identifier: GPL-2.0-only */
/* eventfd(2): a 64-bit counter behind a file descriptor (eventfd.c). */
#ifndef GUEST_EVENTFD_H
#define GUEST_EVENTFD_H
long sys_eventfd2(unsigned initval, long flags);
long sys_eventfd(unsigned initval);
#endif
