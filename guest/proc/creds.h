/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's user and group ids (real, effective, saved) and
 * supplementary groups: kept and reported as Linux's are, so a program can
 * drop root as it would (a shell's su, subprocess's user= and group=).
 * They are not a boundary: the guest checks no file permissions, the
 * processes of one run being one tenant (the VM is the boundary). */
#ifndef GUEST_CREDS_H
#define GUEST_CREDS_H
#include <stdint.h>

#define NGROUPS_KEPT 64

struct creds {
	uint32_t uid[3], gid[3]; /* real, effective, saved */
	int ngroups;
	uint32_t groups[NGROUPS_KEPT];
};

/* RLIMIT_NPROC at fork: the threads of c's real user below limit, or
 * root (exempt, as Linux's CAP_SYS_RESOURCE). */
int creds_may_fork(const struct creds *c, uint64_t limit);

/* The system calls on ids (their numbers: linux_syscall.h); -ENOSYS for
 * another number. */
long creds_syscall(long nr, long a1, long a2, long a3);
#endif
