#include <errno.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include "confine.h"
#include "errmsg.h"

/* What the run loop, the devices, the timeout and stdio need from here on. */
static const int vmm_calls[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(fdatasync),
	SCMP_SYS(poll), SCMP_SYS(clock_nanosleep), SCMP_SYS(clock_gettime), SCMP_SYS(setitimer),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(close), SCMP_SYS(munmap), SCMP_SYS(brk), SCMP_SYS(mmap),
	SCMP_SYS(madvise), SCMP_SYS(futex), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(lseek),
	SCMP_SYS(getrandom), SCMP_SYS(mincore), SCMP_SYS(wait4), SCMP_SYS(exit), SCMP_SYS(exit_group),
};

/* The supervisor waits, kills the VMM on a stop request (kill: the VMM
 * only), and ends like it (tgkill: itself only). */
static const int supervisor_calls[] = {
	SCMP_SYS(wait4), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(write), SCMP_SYS(exit_group),
};

/* kvm: the VMM's ioctls; vmm > 0: the supervisor's kill and tgkill. */
static int confine(const int *calls, size_t ncalls, int kvm, pid_t vmm, char *err, size_t n)
{
	/* No core dumps of guest memory, no new processes or files. */
	struct rlimit zero = { 0, 0 };
	setrlimit(RLIMIT_CORE, &zero);
	setrlimit(RLIMIT_NPROC, &zero);
	setrlimit(RLIMIT_NOFILE, &zero);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errmsg(err, n, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;
	for (size_t i = 0; !r && i < ncalls; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);
	if (!r && kvm)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, KVM_RUN));
	if (!r && kvm)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, KVM_GET_REGS));
	if (!r && vmm > 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)vmm));
	if (!r && vmm > 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r ? errmsg(err, n, "cannot install the seccomp filter: %s", strerror(-r)) : 0;
}

int confine_vmm(char *err, size_t n)
{
	return confine(vmm_calls, sizeof vmm_calls / sizeof vmm_calls[0], 1, 0, err, n);
}

int confine_supervisor(pid_t vmm, char *err, size_t n)
{
	return confine(supervisor_calls, sizeof supervisor_calls / sizeof supervisor_calls[0], 0, vmm, err, n);
}
