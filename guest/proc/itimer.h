/* SPDX-License-Identifier: GPL-2.0-only */
/* Interval timers (setitimer, getitimer; musl's alarm is setitimer) on the
 * local APIC's one-shot timer. */
#ifndef GUEST_ITIMER_H
#define GUEST_ITIMER_H
#include <stdint.h>

long sys_setitimer(long which, const long *value, long *old);
long sys_getitimer(long which, long *value);
long sys_alarm(unsigned long seconds);
/* Raises the signals of the timers that are due, and re-arms the APIC for
 * the next.  Kernel context only (not from the interrupt in the kernel). */
void itimer_poll(void);
/* The interrupt came while the kernel ran: look again on the way out, and
 * in 1 ms if the kernel is still busy then. */
void itimer_note(void);
/* Nanoseconds until the next timer is due (0 if due), or UINT64_MAX. */
uint64_t itimer_wait_limit(void);
#endif
