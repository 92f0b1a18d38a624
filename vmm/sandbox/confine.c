/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include "disks/file_server.h"
#include "sandbox/confine.h"
#include "errmsg.h"

/* What the run loop, the devices, the timeout and stdio need from here on,
 * besides the calls filtered by their arguments (vmm_fd_calls, mmap). */
static const int vmm_calls[] = {
	SCMP_SYS(fdatasync), SCMP_SYS(pselect6), SCMP_SYS(clock_nanosleep), SCMP_SYS(clock_gettime),
	SCMP_SYS(setitimer), SCMP_SYS(timer_settime), SCMP_SYS(rt_sigreturn), SCMP_SYS(close), SCMP_SYS(munmap),
	SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(futex), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(lseek),
	SCMP_SYS(getrandom), SCMP_SYS(mincore), SCMP_SYS(wait4), SCMP_SYS(exit), SCMP_SYS(exit_group),
};

/* The calls allowed only on the fds given for them (first argument). */
static const struct { unsigned may; int call; } vmm_fd_calls[] = {
	{ FD_READ, SCMP_SYS(read) }, { FD_WRITE, SCMP_SYS(write) }, { FD_WRITE, SCMP_SYS(writev) },
	{ FD_PREAD, SCMP_SYS(pread64) }, { FD_PWRITE, SCMP_SYS(pwrite64) }, { FD_RECVMSG, SCMP_SYS(recvmsg) },
};

/* The supervisor waits, passes a stop request to the VMM and kills it
 * after a grace period (kill: the VMM only; alarm), and ends like it
 * (tgkill: itself only). */
static const int supervisor_calls[] = {
	SCMP_SYS(wait4), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(alarm), SCMP_SYS(setitimer), SCMP_SYS(clock_gettime), /* a repeated stop signal */
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(write), SCMP_SYS(exit_group),
};

void vmm_fds_allow(struct vmm_fds *f, int fd, unsigned may)
{
	if (fd < 0)
		return;
	if (f->n == VMM_FDS_MAX)
		f->overflow = 1;
	else
		f->fd[f->n].fd = fd, f->fd[f->n++].may = may;
}

/* The VMM's own rules: file calls per fd, ioctl per request, no executable
 * mapping (the guest's memory and husk's code are mapped already). */
static int vmm_rules(scmp_filter_ctx ctx, const struct vmm_fds *f)
{
	int r = 0;
	for (int i = 0; !r && i < f->n; i++)
		for (size_t k = 0; !r && k < sizeof vmm_fd_calls / sizeof vmm_fd_calls[0]; k++)
			if (f->fd[i].may & vmm_fd_calls[k].may)
				r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, vmm_fd_calls[k].call, 1,
						     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f->fd[i].fd));
	if (!r && f->file_slots) /* the datasets' files, in their slots */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pread64), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, ~(scmp_datum_t)(FILE_SLOTS - 1), FILE_SLOT_BASE));
	if (!r && f->file_slots)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(dup3), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, ~(scmp_datum_t)(FILE_SLOTS - 1), FILE_SLOT_BASE));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, KVM_RUN));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, KVM_GET_REGS));
	if (!r) /* a stop signal passed to the guest */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, KVM_SIGNAL_MSI));
	return r;
}

/* The supervisor's: kill the VMM only, tgkill itself only. */
static int supervisor_rules(scmp_filter_ctx ctx, pid_t vmm)
{
	int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)vmm));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	return r;
}

/* fds: the VMM's filter; else the supervisor's, for vmm. */
static int confine(const int *calls, size_t ncalls, const struct vmm_fds *fds, pid_t vmm, char *err, size_t n)
{
	/* No core dumps of guest memory, no new processes or files. */
	struct rlimit zero = { 0, 0 }, slots = { FILE_SLOT_BASE + FILE_SLOTS, FILE_SLOT_BASE + FILE_SLOTS };
	setrlimit(RLIMIT_CORE, &zero);
	setrlimit(RLIMIT_NPROC, &zero);
	setrlimit(RLIMIT_NOFILE, fds && fds->file_slots ? &slots : &zero); /* the file server's fds come below it */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errmsg(err, n, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < ncalls; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);
	if (!r)
		r = fds ? vmm_rules(ctx, fds) : supervisor_rules(ctx, vmm);
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r ? errmsg(err, n, "cannot install the seccomp filter: %s", strerror(-r)) : 0;
}

int confine_vmm(const struct vmm_fds *fds, char *err, size_t n)
{
	if (fds->overflow)
		return errmsg(err, n, "more than %d file descriptors to confine", VMM_FDS_MAX);
	return confine(vmm_calls, sizeof vmm_calls / sizeof vmm_calls[0], fds, 0, err, n);
}

int confine_supervisor(pid_t vmm, char *err, size_t n)
{
	return confine(supervisor_calls, sizeof supervisor_calls / sizeof supervisor_calls[0], NULL, vmm, err, n);
}

#ifdef HUSK_TEST_HOOKS
/* The first fd allowed `may` but not `not`, or -1. */
static int fd_that(const struct vmm_fds *f, unsigned may, unsigned not)
{
	for (int i = 0; i < f->n; i++)
		if ((f->fd[i].may & may) && !(f->fd[i].may & not))
			return f->fd[i].fd;
	return -1;
}

static void allowed(const char *call, long r)
{
	fprintf(stderr, "husk-test: %s allowed (%ld)\n", call, r);
}

void confine_test_trigger(const char *what, const struct vmm_fds *f, int other_fd)
{
	static char buf[512];
	int disk = fd_that(f, FD_PREAD, FD_PWRITE); /* a read-only disk, with --ro */
	long r;
	if (!strcmp(what, "write")) {
		allowed("write to stderr", write(2, "", 0));
		r = write(other_fd, "x", 1);
	} else if (!strcmp(what, "read")) {
		allowed("read of stdin", read(0, buf, 0));
		r = read(other_fd, buf, 1);
	} else if (!strcmp(what, "pread")) {
		allowed("pread of a disk", pread(disk, buf, sizeof buf, 0));
		r = pread(other_fd, buf, sizeof buf, 0);
	} else if (!strcmp(what, "pwrite")) {
		allowed("pread of a read-only disk", pread(disk, buf, sizeof buf, 0));
		r = pwrite(disk, buf, sizeof buf, 0);
	} else if (!strcmp(what, "mmap-exec") || !strcmp(what, "mprotect")) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		allowed("mmap without PROT_EXEC", p == MAP_FAILED ? -1 : 0);
		r = strcmp(what, "mprotect") ? (long)mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
					     : mprotect(p, 4096, PROT_READ | PROT_EXEC);
	} else {
		r = getppid();
	}
	fprintf(stderr, "husk-test: %s was not refused (%ld)\n", what, r);
}
#endif
