/* SPDX-License-Identifier: GPL-2.0-only */
/* Interval timers (setitimer, getitimer; musl's alarm is setitimer), for
 * the process, on the scheduler's one-shot local APIC timer. */
#ifndef GUEST_ITIMER_H
#define GUEST_ITIMER_H
#include <stdint.h>

long sys_setitimer(long which, const long *value, long *old);
long sys_getitimer(long which, long *value);
long sys_alarm(unsigned long seconds);
/* Raises the signals of the timers that are due.  Kernel context only (not
 * from the interrupt in the kernel). */
void itimer_poll(void);
/* The earliest timer's deadline (monotonic ns), or 0. */
uint64_t itimer_next_deadline(void);
#endif
