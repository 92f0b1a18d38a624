/* SPDX-License-Identifier: GPL-2.0-only */
/* The contract between the VMM (host) and the husk guest kernel: where things
 * sit in guest physical memory, the I/O ports the guest uses to report, and
 * the report page layout.  Guest physical == guest virtual (identity map). */
#ifndef HUSK_ABI_H
#define HUSK_ABI_H

/* Low memory: the first 2 MiB is mapped with 4 KiB pages so page 0 stays
 * unmapped and a NULL dereference faults. */
#define HUSK_PML4        0x1000ul
#define HUSK_PDPT        0x2000ul
#define HUSK_PD          0x3000ul   /* 4 page directories: 0..4 GiB */
#define HUSK_PT0         0x7000ul   /* 4 KiB page table of the first 2 MiB */
#define HUSK_PT_STACK    0x8000ul   /* 4 page tables: the stack's 8 MiB in 4 KiB pages */
#define HUSK_GDT         0xc000ul
#define HUSK_TSS         0xd000ul
#define HUSK_VIF         0xe000ul   /* kvm_pvm virtual interrupt flag page */
/* The direct map: all RAM again at HUSK_DIRECT_MAP + its address, in 2 MiB
 * pages, in every address space (the kernel's heap and page tables live
 * there, since a process's own page tables map the program's addresses to
 * pages of its own).  Its PDPT and 3 page directories (0..3 GiB). */
#define HUSK_DIRECT_PDPT 0x10000ul
#define HUSK_DIRECT_PD   0x11000ul
#define HUSK_DIRECT_MAP  0x400000000000ul /* PML4 slot 128: no program's address */

/* [2 MiB, 4 MiB) is one 2 MiB page: the kernel and what it touches at boot
 * (first touches are costly on kvm_pvm: vmm/guest_mem.h). */
#define HUSK_KERNEL_BASE 0x200000ul /* the kernel ELF, starting with its header */
#define HUSK_KERNEL_END  0x300000ul
#define HUSK_IST2_TOP    0x308000ul /* interrupt stack (IST 2): [3 MiB, +32 KiB) */
#define HUSK_IST_TOP     0x310000ul /* exception stack (IST 1): the next 32 KiB */
#define HUSK_REPORT      0x310000ul /* struct husk_report, guest -> VMM */
#define HUSK_FDT         0x320000ul /* boot device tree */
#define HUSK_FDT_MAX     (0x400000ul - HUSK_FDT)
#define HUSK_PROGRAM_MIN 0x400000ul /* lowest address a program may use */
#define HUSK_PIE_BASE    0x400000ul /* load bias of a static-pie program */
/* The program's stack: the top 8 MiB of RAM, in 4 KiB pages with the lowest
 * one left unmapped as a guard.  A stack is touched sparsely: on kvm_pvm a
 * huge page would cost more to fault in than the pages it touches (guest_mem.h). */
#define HUSK_STACK_SIZE  (8ul << 20)
/* A program's image ends below this (1 MiB for its heap's start, then the stack). */
#define HUSK_IMAGE_LIMIT(ram) ((ram) - HUSK_STACK_SIZE - (1ull << 20))

#define HUSK_MMIO_BASE   0xd0000000ul /* virtio-mmio devices, one 4 KiB window each */
#define HUSK_MMIO_SIZE   0x1000ul
#define HUSK_MMIO_MAX    16
/* Disks one run may have (the boot tree lists at most this many, and the
 * guest mounts no more). */
#define MAX_DISKS 12
#define HUSK_RAM_MAX     0xc0000000ul /* 3 GiB: RAM stays below the MMIO window */
#define HUSK_RAM_MIN     (32ul << 20)

/* Segment selectors (the layout Linux uses, so STAR works). */
#define HUSK_KCS   0x10
#define HUSK_KDS   0x18
#define HUSK_UCS32 0x23
#define HUSK_TSS_SEL 0x40

/* Boot registers: rdi = HUSK_FDT, rsi = flags. */
#define HUSK_BOOT_PVM 1ul  /* running on kvm_pvm: register the VIF page first */
#define HUSK_BOOT_FSGSBASE 2ul /* CR4.FSGSBASE is on: wrfsbase/rdfsbase work */

/* kvm_pvm MSRs */
#define PVM_MSR_VIF       0x4b564d10u
#define PVM_MSR_SIGNATURE 0x4b564d11u
#define PVM_MSR_TSC_KHZ   0x4b564d13u
#define PVM_SIGNATURE     0x4d5650u

/* Ports the guest writes (32-bit OUT) to end the run. */
#define HUSK_PORT_EXIT  0x510 /* eax = exit status of the program */
#define HUSK_PORT_FAULT 0x511 /* program fault, details in report.fault */
#define HUSK_PORT_PANIC 0x512 /* kernel panic, message in report.msg */
#define HUSK_PORT_SLEEP 0x513 /* sleep report.sleep_ns on the host, then resume */
/* The snapshot point (eax = 0; the VMM saves the VM here) or, eax = 1, none
 * can be taken (the reason in report.msg).  The VM goes on with the run's
 * device tree at HUSK_FDT. */
#define HUSK_PORT_READY 0x514
#define HUSK_SNAPSHOT_KERNEL  1 /* the snapshot point: the kernel's, before the first program starts */
#define HUSK_SNAPSHOT_PROGRAM 2 /* the program's, once initialised (husk_ready) */

/* husk's own system call, for a program that can be snapshotted once it has
 * initialised itself (an interpreter): husk_ready(op, buf, len). */
#define HUSK_SYSCALL_READY 0x48534b /* "HSK": far from Linux's numbers, below the x32 bit */
#define HUSK_READY_QUERY 0 /* 1: this boot builds a snapshot at the program's ready point; 0: it does not */
#define HUSK_READY_WAIT  1 /* the ready point: returns in the run (built or restored), 0 */
#define HUSK_READY_ARGS  2 /* the run's argv and envp into buf: u32 argc, u32 envc, then the strings,
			    * each NUL-terminated; returns the bytes they need (copied if len holds them) */

/* The interrupt the VMM sends (an MSI to the guest's local APIC) when it has
 * put signals in report.host_signals. */
#define HUSK_HOST_SIGNAL_VECTOR 0x41
/* The interrupt the VMM sends when a device has put something in a receive
 * queue by itself (the network's messages): the guest looks at its devices. */
#define HUSK_DEVICE_VECTOR 0x42
#define HUSK_NSYSCALLS 512
#define HUSK_OPEN_FILES_MAX 1024 /* the guest's fd table */
#define HUSK_FAULT_SIGNAL 256 /* husk_fault.vector: the program died of a signal; .error says why: */
#define HUSK_SIGNAL_SENT      0 /* it sent the signal to itself */
#define HUSK_SIGNAL_BAD_FRAME 1 /* SIGSEGV: a handler's frame did not fit, or rt_sigreturn's was bad */
#define HUSK_SIGNAL_FROM_HOST 2 /* husk received it (report.host_signals) */
#define HUSK_SIGNAL_NO_MEMORY 3 /* SIGKILL: no page left to copy one it wrote that it shared after fork */
/* The guest kernel sets i_generation to this in every inode it writes to an
 * ext2 disk; husk builds the workdir image with 0 there.  After the run an
 * inode still at 0 and at the name it was copied to is one the program left
 * alone: only what it changed is written back (a guest that lies only
 * loses its own changes). */
#define HUSK_EXT2_TOUCHED 1u
#define HUSK_KERNEL_MAGIC 0x4c4e524b4b535548ull /* "HUSKKRNL" */

#ifdef __ASSEMBLER__
/* A guest kernel's first instructions (rsi = boot flags): kvm_pvm emulates
 * the guest until the VIF page is registered. */
.macro HUSK_REGISTER_VIF
	test $HUSK_BOOT_PVM, %esi
	jz 1f
	mov $PVM_MSR_VIF, %ecx
	mov $HUSK_VIF, %eax
	xor %edx, %edx
	wrmsr
1:
.endm
#else
struct husk_fault {
	unsigned long vector, error, rip, addr, signal;
};

/* At HUSK_KERNEL_BASE: what the VMM needs to set up the CPU for the kernel. */
struct husk_kernel_header {
	unsigned long magic;
	unsigned long syscall_entry; /* MSR_LSTAR */
};

struct husk_report {
	struct husk_fault fault;
	unsigned long sleep_ns;
	unsigned int denied_erofs;   /* writes refused on read-only file systems */
	unsigned int denied_enomem;  /* allocations that did not fit in guest memory */
	unsigned int denied_emfile;  /* opens refused: the open-files limit */
	unsigned int denied_enospc;  /* system calls that found the disk (or /tmp) full */
	char msg[256];                       /* NUL-terminated (not trusted) */
	unsigned int calls[HUSK_NSYSCALLS];  /* syscalls made, by number */
	unsigned int enosys[HUSK_NSYSCALLS]; /* of those, answered -ENOSYS */
	unsigned int out_of_range;           /* calls numbered outside 0..511 (all -ENOSYS) */
	unsigned long scratch_bytes;         /* file data left in the scratch /workdir at exit */
	/* VMM -> guest: stop signals husk received (bit sig - 1), announced by
	 * an interrupt at HUSK_HOST_SIGNAL_VECTOR; the guest takes and clears
	 * them and raises each in the program. */
	unsigned long host_signals;
	unsigned int tasks_created;          /* threads (and processes) the run made, the first included */
	unsigned int tasks_peak;             /* the most alive at once */
	unsigned int by_instruction;         /* of the calls, those made by the `syscall` instruction */
	unsigned int syscall_sites;          /* `syscall` sites made fast entries (arch/syscall_rewrite.c) */
	/* The guest's TSC when the program's first instruction ran (or the
	 * restored program went on) and at the exit: the VMM places the first
	 * in its own clock from the second (--stats, husk bench; not trusted
	 * for anything else). */
	unsigned long tsc_program, tsc_exit;
};
#endif

#endif
