/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "errmsg.h"
#include "husk/abi.h"
#include "snapshot/vcpu_state.h"

/* MSRs a restore must not set: the TSC and its deadline (the guest's TSC is
 * the host's; a restored one would be in the past), and kvm_pvm's read-only
 * ones (0x4b564d06 cannot be set without an in-kernel irqchip). */
static int restorable(uint32_t index)
{
	switch (index) {
	case 0x10:  /* IA32_TSC */
	case 0x3b:  /* IA32_TSC_ADJUST */
	case 0x6e0: /* IA32_TSC_DEADLINE */
	case 0x4b564d06:
	case 0x4b564d11:
	case 0x4b564d12:
	case 0x4b564d13:
		return 0;
	}
	return 1;
}

/* The MSRs KVM saves and restores, plus kvm_pvm's VIF page (it reads back
 * as gpa|0x400, and is written back so), those that can be restored. */
static int msr_indices(struct vm *v, uint32_t *out, uint32_t max)
{
	struct kvm_msr_list probe = { .nmsrs = 0 };
	if (ioctl(v->kvm, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
		return -1;
	struct kvm_msr_list *l = calloc(1, sizeof *l + probe.nmsrs * sizeof l->indices[0]);
	if (!l)
		return -1;
	l->nmsrs = probe.nmsrs;
	int n = 0;
	if (ioctl(v->kvm, KVM_GET_MSR_INDEX_LIST, l) == 0) {
		for (uint32_t i = 0; i < l->nmsrs && (uint32_t)n < max - 1; i++)
			if (restorable(l->indices[i]) && l->indices[i] != PVM_MSR_VIF)
				out[n++] = l->indices[i];
		if (v->pvm)
			out[n++] = PVM_MSR_VIF;
	} else {
		n = -1;
	}
	free(l);
	return n;
}

/* Reads every MSR of the list KVM lets the vCPU read: one that fails is
 * left out (some in KVM's list are not readable on every CPU). */
static int save_msrs(struct vm *v, struct vcpu_state *s)
{
	static uint32_t index[VCPU_MAX_MSRS];
	int n = msr_indices(v, index, VCPU_MAX_MSRS);
	if (n < 0)
		return -1;
	struct { struct kvm_msrs h; struct kvm_msr_entry e[VCPU_MAX_MSRS]; } b;
	s->nmsrs = 0;
	for (int from = 0; from < n;) {
		memset(&b, 0, sizeof b);
		b.h.nmsrs = (uint32_t)(n - from);
		for (int i = from; i < n; i++)
			b.e[i - from].index = index[i];
		int got = ioctl(v->vcpu, KVM_GET_MSRS, &b);
		if (got < 0)
			return -1;
		memcpy(&s->msrs[s->nmsrs], b.e, (size_t)got * sizeof b.e[0]);
		s->nmsrs += (uint32_t)got;
		from += got + 1; /* the one at from + got could not be read */
	}
	return 0;
}

int vcpu_state_save(struct vm *v, struct vcpu_state *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	errno = 0;
	v->run->immediate_exit = 1;
	int r = ioctl(v->vcpu, KVM_RUN, 0);
	v->run->immediate_exit = 0;
	if (r == 0 || errno != EINTR)
		return errmsg_errno(err, errlen, "KVM_RUN to complete the exit");
	if (ioctl(v->vcpu, KVM_GET_REGS, &s->regs) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_REGS");
	if (ioctl(v->vcpu, KVM_GET_SREGS, &s->sregs) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_SREGS");
	if (ioctl(v->vcpu, KVM_GET_FPU, &s->fpu) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_FPU");
	s->has_xsave = ioctl(v->kvm, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0;
	if (s->has_xsave && ioctl(v->vcpu, KVM_GET_XSAVE, s->xsave) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_XSAVE");
	s->has_xcrs = ioctl(v->kvm, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0;
	if (s->has_xcrs && ioctl(v->vcpu, KVM_GET_XCRS, &s->xcrs) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_XCRS");
	if (ioctl(v->vcpu, KVM_GET_VCPU_EVENTS, &s->events) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_VCPU_EVENTS");
	if (ioctl(v->vcpu, KVM_GET_DEBUGREGS, &s->debugregs) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_DEBUGREGS");
	if (save_msrs(v, s) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_MSRS");
	return 0;
}

int vcpu_state_valid(const struct vcpu_state *s)
{
	if (s->nmsrs > VCPU_MAX_MSRS || s->has_xsave > 1 || s->has_xcrs > 1 || s->xcrs.nr_xcrs > KVM_MAX_XCRS)
		return 0;
	for (uint32_t i = 0; i < s->nmsrs; i++)
		if (!restorable(s->msrs[i].index))
			return 0;
	return 1;
}

int vcpu_state_restore(struct vm *v, const struct vcpu_state *s, char *err, size_t errlen)
{
	errno = 0;
	if (!vcpu_state_valid(s))
		return errmsg(err, errlen, "the saved vCPU state is malformed");
	if (ioctl(v->vcpu, KVM_SET_SREGS, &s->sregs) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_SREGS");
	struct { struct kvm_msrs h; struct kvm_msr_entry e[VCPU_MAX_MSRS]; } b = { .h.nmsrs = s->nmsrs };
	memcpy(b.e, s->msrs, s->nmsrs * sizeof b.e[0]);
	int set = ioctl(v->vcpu, KVM_SET_MSRS, &b);
	if (set != (int)s->nmsrs)
		return set < 0 ? errmsg_errno(err, errlen, "KVM_SET_MSRS")
			       : errmsg(err, errlen, "KVM_SET_MSRS refused MSR %#x", s->msrs[set].index);
	if (ioctl(v->vcpu, KVM_SET_REGS, &s->regs) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_REGS");
	if (s->has_xsave ? ioctl(v->vcpu, KVM_SET_XSAVE, s->xsave) < 0 : ioctl(v->vcpu, KVM_SET_FPU, &s->fpu) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_XSAVE");
	if (s->has_xcrs && ioctl(v->vcpu, KVM_SET_XCRS, &s->xcrs) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_XCRS");
	if (ioctl(v->vcpu, KVM_SET_VCPU_EVENTS, &s->events) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_VCPU_EVENTS");
	if (ioctl(v->vcpu, KVM_SET_DEBUGREGS, &s->debugregs) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_DEBUGREGS");
	return 0;
}
