/* SPDX-License-Identifier: GPL-2.0-only */
/* Confining the VMM itself before the first KVM_RUN: the guest is untrusted,
 * so a bug in husk's device code must not reach the rest of the host.
 * PR_SET_NO_NEW_PRIVS, then a libseccomp allowlist (kill on violation) of
 * the system calls the run loop and its devices make: read, write, pread64
 * and pwrite64 only on the file descriptors given for each, mmap never with
 * PROT_EXEC (mprotect not at all), ioctl only with KVM_RUN and KVM_GET_REGS;
 * with datasets, recvmsg of the file server's fds into the file slots. */
#ifndef HUSK_CONFINE_H
#define HUSK_CONFINE_H
#include <stddef.h>
#include <sys/types.h>

/* What the confined VMM may do with a file descriptor. */
enum { FD_READ = 1, FD_WRITE = 2, FD_PREAD = 4, FD_PWRITE = 8, FD_RECVMSG = 16 };

/* Room for stdio, the audit file, the write-back helper's pipes and the
 * disks (MAX_DISKS, 12). */
#define VMM_FDS_MAX 32

struct vmm_fds {
	int n, overflow;
	int file_slots; /* the datasets' file slots (file_server.h): pread there, dup3 into them */
	struct { int fd; unsigned may; } fd[VMM_FDS_MAX];
};

/* Allows the calls in `may` on fd; fd < 0 is ignored (a file not there). */
void vmm_fds_allow(struct vmm_fds *f, int fd, unsigned may);
/* 0, or -1 with a reason in err.  Also rlimits: no core, no new process,
 * no new file descriptor. */
int confine_vmm(const struct vmm_fds *fds, char *err, size_t errlen);
/* The supervisor (isolate.h): waiting, killing the VMM, exiting. */
int confine_supervisor(pid_t vmm, char *err, size_t errlen);
#ifdef HUSK_TEST_HOOKS
/* Test builds: after confine_vmm, a call the allowlist refuses (`what`:
 * write, read, pread, pwrite, mmap-exec, mprotect; anything else: getppid),
 * after an allowed one of its kind that says so on stderr.  other_fd is an
 * fd the VMM holds but was not given. */
void confine_test_trigger(const char *what, const struct vmm_fds *fds, int other_fd);
#endif
#endif
