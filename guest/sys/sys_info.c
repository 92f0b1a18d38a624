/* SPDX-License-Identifier: GPL-2.0-only */
/* What a program learns of the system and of its one process: sysinfo,
 * times, getrusage, its process group and session, CPU affinity, priority
 * (its ids: proc/creds.c).  Linux never fails these
 * for valid arguments, and musl uses some without checking (getloadavg and
 * sysconf's memory sizes read sysinfo's struct whatever it returned; getpgrp
 * and times return the raw result): -ENOSYS here would be garbage there. */
#include <errno.h>
#include <string.h>
#include "kernel.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "linux_abi.h"
#include "sys/sys_info.h"


struct sysinfo_k {
	long uptime;
	unsigned long loads[3];
	unsigned long totalram, freeram, sharedram, bufferram, totalswap, freeswap;
	uint16_t procs, pad;
	unsigned long totalhigh, freehigh;
	uint32_t mem_unit;
};
_Static_assert(sizeof(struct sysinfo_k) == 112, "Linux's struct sysinfo on x86-64");

struct rusage_k {
	long utime[2], stime[2]; /* timeval */
	long maxrss;             /* KiB */
	long rest[13];
};
_Static_assert(sizeof(struct rusage_k) == 144, "Linux's struct rusage on x86-64");

struct tms_k { long utime, stime, cutime, cstime; };

const char uts_names[UTS_FIELDS][65] = { "Linux", "husk", "6.1.0-husk", "#1 husk", "x86_64", "(none)" };

/* Loads are 0: the one vCPU runs only this program, and nothing waits. */
long sys_sysinfo(void *u)
{
	if (!user_ok(u, sizeof(struct sysinfo_k)))
		return -EFAULT;
	uint64_t up = clock_since_boot_ns();
	struct sysinfo_k si = {
		.uptime = (long)((up + NSEC_PER_SEC - 1) / NSEC_PER_SEC),
		.totalram = mem_total_bytes(), .freeram = mem_free_bytes(), .mem_unit = 1,
	};
	for (struct process *p = processes; p; p = p->next)
		si.procs += !p->zombie;
	memcpy(u, &si, sizeof si);
	return 0;
}

long sys_times(void *u)
{
	long ticks = (long)(clock_since_boot_ns() / (NSEC_PER_SEC / USER_HZ));
	if (u) {
		if (!user_ok(u, sizeof(struct tms_k)))
			return -EFAULT;
		struct tms_k t = { ticks, 0, 0, 0 };
		memcpy(u, &t, sizeof t);
	}
	return (long)(clock_since_boot_ns() / (NSEC_PER_SEC / USER_HZ));
}

long sys_getrusage(long who, void *u)
{
	if (who != RUSAGE_SELF && who != RUSAGE_THREAD && who != RUSAGE_CHILDREN)
		return -EINVAL;
	if (!user_ok(u, sizeof(struct rusage_k)))
		return -EFAULT;
	uint64_t cpu = who == RUSAGE_THREAD ? task_cpu_ns()
		       : who == RUSAGE_SELF ? process_cpu_ns(current->proc) : current->proc->children_cpu_ns;
	rusage_fill(u, cpu);
	return 0;
}

/* CPU time as user time; maxrss: the guest's memory in use (one figure for
 * all: the pages are not counted per process). */
void rusage_fill(void *u, uint64_t cpu_ns)
{
	struct rusage_k r = { 0 };
	r.utime[0] = (long)(cpu_ns / NSEC_PER_SEC), r.utime[1] = (long)(cpu_ns % NSEC_PER_SEC / 1000);
	r.maxrss = (long)((mem_total_bytes() - mem_free_bytes()) >> 10);
	memcpy(u, &r, sizeof r);
}

/* One vCPU: the mask has CPU 0 only.  Returns the bytes written, as Linux
 * does (one long). */
long sys_sched_getaffinity(long pid, unsigned long len, void *mask)
{
	if (pid != 0 && !process_by_pid((int)pid))
		return -ESRCH;
	if (len < sizeof(uint64_t) || len % sizeof(uint64_t))
		return -EINVAL;
	if (!user_ok(mask, sizeof(uint64_t)))
		return -EFAULT;
	uint64_t one = 1;
	memcpy(mask, &one, sizeof one);
	return sizeof one;
}

/* Whether get/setpriority's (which, who) names p (who 0: the caller's
 * process, group or user). */
static int prio_names(const struct process *p, long which, long who)
{
	const struct process *me = current->proc;
	if (p->zombie)
		return 0;
	if (which == PRIO_PROCESS)
		return p->pid == (who ? who : me->pid);
	if (which == PRIO_PGRP)
		return p->pgid == (who ? who : me->pgid);
	return p->creds.uid[0] == (who ? (uint32_t)who : me->creds.uid[0]);
}

/* The highest priority among the processes named, as the kernel returns
 * it: 20 - nice. */
long sys_getpriority(long which, long who)
{
	if (which < PRIO_PROCESS || which > PRIO_USER)
		return -EINVAL;
	int best = 20, found = 0;
	for (struct process *p = processes; p; p = p->next)
		if (prio_names(p, which, who)) {
			found = 1;
			best = p->nice < best ? p->nice : best;
		}
	return found ? 20 - best : -ESRCH;
}

/* Each process named gets nice prio (clamped to -20..19, as Linux); below
 * its present value only for root.  The one run queue is round robin: nice
 * is kept and reported, not weighed. */
long sys_setpriority(long which, long who, long prio)
{
	if (which < PRIO_PROCESS || which > PRIO_USER)
		return -EINVAL;
	int nice = prio < -20 ? -20 : prio > 19 ? 19 : (int)prio, found = 0;
	uint32_t euid = current->proc->creds.uid[1];
	for (struct process *p = processes; p; p = p->next) {
		if (!prio_names(p, which, who))
			continue;
		found = 1;
		if (euid && p->creds.uid[0] != euid && p->creds.uid[1] != euid)
			return -EPERM;
		if (euid && nice < p->nice)
			return -EACCES;
		p->nice = nice;
	}
	return found ? 0 : -ESRCH;
}
