/* Confining the VMM itself before the first KVM_RUN: the guest is untrusted,
 * so a bug in husk's device code must not reach the rest of the host.
 * PR_SET_NO_NEW_PRIVS, then a libseccomp allowlist (kill on violation) of
 * the 24 system calls the run loop and its devices make; ioctl only with
 * KVM_RUN and KVM_GET_REGS. */
#ifndef HUSK_CONFINE_H
#define HUSK_CONFINE_H
#include <stddef.h>
#include <sys/types.h>

/* 0, or -1 with a reason in err.  Also rlimits: no core, no new process,
 * no new file descriptor. */
int confine_vmm(char *err, size_t errlen);
/* The supervisor (isolate.h): waiting, killing the VMM, exiting. */
int confine_supervisor(pid_t vmm, char *err, size_t errlen);
#endif
