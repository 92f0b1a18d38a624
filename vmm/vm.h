/* SPDX-License-Identifier: GPL-2.0-only */
/* One KVM virtual machine with one vCPU, started directly in 64-bit mode. */
#ifndef HUSK_VM_H
#define HUSK_VM_H
#include <linux/kvm.h>
#include <stdint.h>
#include "guest_mem.h"

struct vm {
	int kvm, fd, vcpu;
	struct kvm_run *run;
	size_t run_size;
	struct guest_mem mem;
	int pvm;            /* /dev/kvm is kvm_pvm and the guest uses it */
	int fsgsbase;       /* CR4.FSGSBASE: the guest's CPUID has it, and KVM took it (HUSK_BOOT_FSGSBASE) */
	uint64_t tsc_khz;
	uint8_t cpuid_digest[32]; /* SHA-256 of the CPUID table the vCPU has (a snapshot's key) */
};

/* Returns 0, or -1 with a one-line reason in err; *user_error is set when the
 * cause is the user's (no /dev/kvm, no permission). */
int vm_create(struct vm *v, uint64_t ram_size, int allow_pvm, char *err, size_t errlen, int *user_error);
/* Page tables, GDT, segment and control registers, boot registers. */
int vm_setup_cpu(struct vm *v, uint64_t entry, char *err, size_t errlen);
void vm_destroy(struct vm *v);
#endif
