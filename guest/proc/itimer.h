/* SPDX-License-Identifier: GPL-2.0-only */
/* Interval timers (setitimer, getitimer; musl's alarm is setitimer), for
 * each process, on the scheduler's one-shot local APIC timer. */
#ifndef GUEST_ITIMER_H
#define GUEST_ITIMER_H
#include <stdint.h>

long sys_setitimer(long which, const long *value, long *old);
long sys_getitimer(long which, long *value);
long sys_alarm(unsigned long seconds);
/* Raises the signals of the timers that are due.  Kernel context only (not
 * from the interrupt in the kernel). */
void itimer_poll(void);
/* A POSIX timer's signal is taken: its siginfo gets the overrun count. */
void itimer_delivered(int id, void *siginfo);
long sys_timer_create(long clock, const void *sev, int32_t *id);
long sys_timer_settime(long id, long flags, const void *new, void *old);
long sys_timer_gettime(long id, void *cur);
long sys_timer_getoverrun(long id);
long sys_timer_delete(long id);
/* The earliest timer's deadline (monotonic ns), or 0. */
uint64_t itimer_next_deadline(void);
struct process;
/* A process ended: its timers go.  execve: its POSIX timers go. */
void itimer_process_gone(struct process *p);
void itimer_exec(void);
#endif
