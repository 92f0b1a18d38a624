/* SPDX-License-Identifier: GPL-2.0-only */
/* System and process information calls (sys_info.c). */
#ifndef GUEST_SYS_INFO_H
#define GUEST_SYS_INFO_H
#include <stdint.h>
long sys_sysinfo(void *u);
long sys_times(void *u);
long sys_getrusage(long who, void *u);
void rusage_fill(void *u, uint64_t cpu_ns); /* a struct rusage the program gave, checked */
long sys_getgroups(long size, void *list);
long sys_getres_ids(uint32_t *r, uint32_t *e, uint32_t *s);
long sys_sched_getaffinity(long pid, unsigned long len, void *mask);
long sys_getpriority(long which, long who);
#endif
