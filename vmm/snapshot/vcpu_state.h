/* SPDX-License-Identifier: GPL-2.0-only */
/* The vCPU's whole state, as KVM gives it, for a snapshot
 * (../shared/platform/KVM-PVM.md, "Snapshot / restore"). */
#ifndef HUSK_VCPU_STATE_H
#define HUSK_VCPU_STATE_H
#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>
#include "vm.h"

#define VCPU_MAX_MSRS 256

/* Plain data (no pointers): a snapshot file stores it as it is. */
struct vcpu_state {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	uint32_t xsave[1024];     /* struct kvm_xsave's region (its extra[] is for KVM_GET_XSAVE2) */
	struct kvm_xcrs xcrs;
	struct kvm_vcpu_events events;
	struct kvm_debugregs debugregs;
	uint32_t has_xsave, has_xcrs;
	uint32_t nmsrs;
	uint32_t pad;
	struct kvm_msr_entry msrs[VCPU_MAX_MSRS];
};

/* Completes the instruction the vCPU exited on (KVM_RUN with immediate_exit)
 * and reads the state.  0, or -1 with a reason in err. */
int vcpu_state_save(struct vm *v, struct vcpu_state *s, char *err, size_t errlen);
/* Sets it on a fresh vCPU of a VM made like the saved one (vm_create: the
 * same CPUID).  The TSC is not set: the guest's is the host's, and the run's
 * clock pair is new.  0, or -1 with a reason in err. */
int vcpu_state_restore(struct vm *v, const struct vcpu_state *s, char *err, size_t errlen);
/* Whether s can be handed to KVM: counts in range (a snapshot's bytes are
 * checked before use). */
int vcpu_state_valid(const struct vcpu_state *s);
#endif
