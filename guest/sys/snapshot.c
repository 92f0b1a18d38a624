/* SPDX-License-Identifier: GPL-2.0-only */
/* The snapshot point.  A boot that builds a snapshot gets neutral run
 * parameters (no program arguments, no datasets, workdir or network) and a
 * level in the device tree: the kernel stops before the first program
 * starts (HUSK_SNAPSHOT_KERNEL), or the program once it has initialised
 * itself and calls husk_ready (HUSK_SNAPSHOT_PROGRAM: an interpreter).  The
 * VM stops at one OUT to HUSK_PORT_READY and the VMM saves it there.  Every
 * run restored from it, and the run that built it, comes back from that OUT
 * with the run's own device tree at HUSK_FDT, read here again: the clock and
 * TSC pair, a fresh random seed, the terminals, the limits, argv and envp,
 * and the disks and network the snapshot did not have. */
#include <errno.h>
#include <string.h>
#include "arch/cpu.h"
#include "dev/net.h"
#include "fs/file.h"
#include "fs/vfs.h"
#include "kernel.h"
#include "mm/mm.h"
#include "proc/process.h"
#include "proc/sched.h"

static int passed; /* the snapshot point is behind this boot */

/* No snapshot can be taken: the VMM boots the run afresh. */
static _Noreturn void decline(const char *why)
{
	ksnprintf((char *)REPORT->msg, sizeof REPORT->msg, "%s", why);
	outl(HUSK_PORT_READY, 1);
	panic("resumed after declining the snapshot point");
}

/* What the snapshot holds counts nothing of the run's own. */
static void report_reset(void)
{
	volatile struct husk_report *r = REPORT;
	for (int i = 0; i < HUSK_NSYSCALLS; i++)
		r->calls[i] = r->enosys[i] = 0;
	r->out_of_range = r->by_instruction = 0;
	r->denied_erofs = r->denied_enomem = r->denied_emfile = r->denied_enospc = 0;
}

/* The run's device tree: the devices the snapshot has must be where they
 * were; the rest is the run's. */
static void take_run_parameters(void)
{
	struct console_info con[3];
	struct disk_info disk[MAX_DISKS];
	int ndisks = boot.ndisks;
	memcpy(con, boot.console, sizeof con);
	memcpy(disk, boot.disk, sizeof disk);
	bootinfo_parse((const void *)HUSK_FDT, boot.pvm);
	if (boot.snapshot || boot.ndisks < ndisks || memcmp(con, boot.console, sizeof con))
		panic("the run's device tree does not match the snapshot");
	for (int i = 0; i < ndisks; i++)
		if (disk[i].mmio != boot.disk[i].mmio || disk[i].read_only != boot.disk[i].read_only)
			panic("the run's disks do not match the snapshot's");
	clock_init();
	apic_init();
	random_init(boot.seed);
	fd_limit_init(boot.open_files);
	fd_limit_reset();
	struct process *p = current->proc;
	p->nproc_limit[0] = p->nproc_limit[1] = (uint64_t)boot.max_tasks;
	process_set_comm(p, boot.argc ? boot.argv : "");
	report_reset();
	vfs_add_disks(ndisks);
	net_rearm();
}

void snapshot_point(int level)
{
	if (boot.snapshot != level || passed)
		return;
	passed = 1;
	if (vfs_scratch_used())
		decline("the scratch /workdir was used before the snapshot point");
	if (level == HUSK_SNAPSHOT_PROGRAM && (current->proc->pid != 1 || current->next != current))
		decline("the program has other processes or threads at its ready point");
	console_bring_up();
	outl(HUSK_PORT_READY, 0);
	take_run_parameters();
	if (level == HUSK_SNAPSHOT_PROGRAM) /* the program goes on from here */
		REPORT->tsc_program = rdtsc();
}

long sys_husk_ready(long op, char *buf, size_t len)
{
	switch (op) {
	case HUSK_READY_QUERY:
		return boot.snapshot == HUSK_SNAPSHOT_PROGRAM && !passed;
	case HUSK_READY_WAIT:
		if (boot.snapshot != HUSK_SNAPSHOT_PROGRAM || passed)
			return -EINVAL;
		snapshot_point(HUSK_SNAPSHOT_PROGRAM);
		return 0;
	case HUSK_READY_ARGS: {
		size_t need = 8 + (size_t)boot.argv_len + (size_t)boot.envp_len;
		if (len < need)
			return (long)need;
		if (!user_write_ok(buf, need))
			return -EFAULT;
		uint32_t counts[2] = { (uint32_t)boot.argc, (uint32_t)boot.envc };
		memcpy(buf, counts, 8);
		memcpy(buf + 8, boot.argv, (size_t)boot.argv_len);
		memcpy(buf + 8 + boot.argv_len, boot.envp, (size_t)boot.envp_len);
		/* /proc/self/cmdline and environ show these now, as a cold start's
		 * stack would (PR_SET_MM_ARG_START and friends, in effect): the
		 * program keeps buf for good */
		struct mm_layout *l = &current->proc->mm->layout;
		l->arg_start = (uintptr_t)buf + 8, l->arg_end = l->arg_start + (uintptr_t)boot.argv_len;
		l->env_start = l->arg_end, l->env_end = l->env_start + (uintptr_t)boot.envp_len;
		return (long)need;
	}
	}
	return -EINVAL;
}
