/* SPDX-License-Identifier: GPL-2.0-only */
/* The local APIC, through the x2APIC MSRs: the in-kernel APIC of the VMM's
 * split irqchip.  Enabled at boot (each MSR write traps, ~3.5 us on
 * kvm_pvm), so that the VMM's interrupt for a host signal is taken, with
 * interrupts on: on kvm_pvm that is the VIF page's flag (sti changes nothing
 * there), elsewhere sti.  Its timer is one-shot; KVM's APIC bus runs at
 * 1 GHz, so with divide-by-1 a count is a nanosecond. */
#include "arch/cpu.h"
#include "kernel.h"

#define MSR_APIC_BASE    0x1bu
#define APIC_X2APIC_ON   (1u << 10 | 1u << 11) /* xAPIC enable, x2APIC mode */
#define X2APIC_EOI       0x80bu
#define X2APIC_SVR       0x80fu
#define X2APIC_LVT_TIMER 0x832u
#define X2APIC_TIMER_ICR 0x838u
#define X2APIC_TIMER_DCR 0x83eu
#define SVR_ENABLE       0x100u
#define DCR_DIVIDE_BY_1  0xbu
#define MAX_COUNT        0xffffffffull

struct vif { volatile uint8_t if_, pending; };

static int ready;
uint8_t vif_on; /* entry.S: return_to_program turns VIF.if_ on again */

void interrupts_on(void)
{
	if (boot.pvm) {
		struct vif *v = (struct vif *)HUSK_VIF;
		vif_on = 1;
		v->if_ = 1;
		if (v->pending) /* noticed only at the next trap: make one */
		{
			long nr = 0x1008; /* FLUSH_TLB_ONE of address 0: harmless */
			__asm__ volatile("int $0x1b" : "+a"(nr) : "b"(0) : "memory");
		}
	} else {
		__asm__ volatile("sti" : : : "memory");
	}
}

void apic_init(void)
{
	ready = 0; /* again after a restore: the local APIC starts afresh */
	wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_X2APIC_ON);
	wrmsr(X2APIC_SVR, SVR_ENABLE | 0xff);
	interrupts_on();
}

void apic_timer_arm(uint64_t ns)
{
	if (!ready) { /* the timer's set-up, on first use */
		wrmsr(X2APIC_TIMER_DCR, DCR_DIVIDE_BY_1);
		wrmsr(X2APIC_LVT_TIMER, HUSK_TIMER_VECTOR); /* one-shot */
		ready = 1;
	}
	wrmsr(X2APIC_TIMER_ICR, ns < 1000 ? 1000 : ns > MAX_COUNT ? MAX_COUNT : ns);
}

void apic_eoi(void)
{
	wrmsr(X2APIC_EOI, 0);
}
