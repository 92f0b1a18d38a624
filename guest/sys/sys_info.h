/* SPDX-License-Identifier: GPL-2.0-only */
/* System and process information calls (sys_info.c). */
#ifndef GUEST_SYS_INFO_H
#define GUEST_SYS_INFO_H
#include <stdint.h>

#define USER_HZ 100 /* clock_t ticks, as Linux reports them */

/* uname's fields, as /proc shows them too. */
enum { UTS_SYSNAME, UTS_NODENAME, UTS_RELEASE, UTS_VERSION, UTS_MACHINE, UTS_DOMAINNAME, UTS_FIELDS };
extern const char uts_names[UTS_FIELDS][65];
long sys_sysinfo(void *u);
long sys_times(void *u);
long sys_getrusage(long who, void *u);
void rusage_fill(void *u, uint64_t cpu_ns); /* a struct rusage the program gave, checked */
long sys_sched_getaffinity(long pid, unsigned long len, void *mask);
long sys_getpriority(long which, long who);
long sys_setpriority(long which, long who, long prio);
#endif
