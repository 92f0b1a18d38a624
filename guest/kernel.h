/* SPDX-License-Identifier: GPL-2.0-only */
/* Declarations shared across the guest kernel. */
#ifndef GUEST_KERNEL_H
#define GUEST_KERNEL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "husk/abi.h"

#define PAGE_SIZE 4096ul
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uintptr_t)(a) - 1))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define REPORT ((volatile struct husk_report *)HUSK_REPORT)

/* What the VMM told us at boot (bootinfo.c, from the device tree). */
struct console_info {
	uintptr_t mmio;   /* 0: absent */
	int fd;           /* the guest fd it serves: 0, 1 or 2 */
};

struct disk_info {
	uintptr_t mmio;
	const char *mount; /* where to mount it: /usr, /data/NAME, /workdir */
	int read_only;
};

struct bootinfo {
	uint64_t ram_size;
	const char *argv, *envp; /* NUL-separated string lists */
	int argv_len, envp_len, argc, envc;
	uint64_t entry, phdr, phnum, image_end;
	uint64_t wall_ns, mono_ns, tsc, tsc_khz;
	const uint8_t *seed;      /* 32 bytes */
	int selftest, pvm;
	int open_files;           /* the policy's limit on open files */
	int max_tasks;            /* the policy's limit on threads and processes alive at once */
	int fsgsbase;             /* wrfsbase/rdfsbase are usable */
	int tty[3];               /* is host fd 0/1/2 a terminal */
	uint16_t rows, cols;      /* its window size */
	struct console_info console[3];
	struct disk_info disk[MAX_DISKS];
	int ndisks;
	uintptr_t net_mmio;       /* the network's device; 0: the run has no network */
	int loopback;             /* AF_INET sockets exist at least for the guest's loopback */
	uint64_t script_gpa, script_size; /* a script for the scratch /workdir (size 0: none) */
	const void *script_data;  /* ... in the device tree (then script_gpa is 0) */
	const char *script_name;
	int snapshot;             /* HUSK_SNAPSHOT_*: this boot builds a snapshot; 0: it does not */
};
extern struct bootinfo boot;
/* sys/snapshot.c: the snapshot point, when boot.snapshot is `level` (the VM
 * stops for the VMM there, then takes the run's parameters: the device tree
 * is read again), and husk_ready (HUSK_SYSCALL_READY). */
void snapshot_point(int level);
long sys_husk_ready(long op, char *buf, size_t len);

void bootinfo_parse(const void *fdt, int pvm);

/* printk.c */
int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void halt_exit(int status);

/* clock.c: times in nanoseconds (NSEC_PER_SEC: the guest's one definition) */
#define NSEC_PER_SEC 1000000000L
void clock_init(void);
uint64_t clock_mono_ns(void);
/* Since the VM booted: uptime, and the program's CPU time (it is all the VM runs). */
uint64_t clock_since_boot_ns(void);
uint64_t clock_wall_ns(void);
int64_t clock_wall_s(void); /* file timestamps */
/* A program's timeout as a monotonic deadline (0: none; 1: passed): in ms
 * (negative: none), or a relative timespec (NULL: none; -EFAULT, -EINVAL). */
uint64_t deadline_ms(long ms);
long deadline_ts(const int64_t *ts, uint64_t *out);
long deadline_in(int64_t sec, int64_t nsec, uint64_t *out); /* values already copied in */

/* random.c */
void random_init(const uint8_t seed[32]);
void random_fill(void *buf, size_t n);

/* mm.c: the current process's address space (mm/mm.h has the rest) */
uintptr_t mem_stack_top(void);
long mem_brk(uintptr_t want);
long mem_mmap(uintptr_t addr, size_t len, int prot, int flags);
long mem_munmap(uintptr_t addr, size_t len);
long mem_mprotect(uintptr_t addr, size_t len, int prot);
/* msync: a MAP_SHARED mapping is the file's own pages (tmpfs, mm_map_shared)
 * and a private one never reaches the file, so there is nothing to write:
 * the arguments are checked as Linux checks them. */
long mem_msync(uintptr_t addr, size_t len, int flags);
int user_ok(const void *p, size_t len);
/* user_ok, and the pages made the process's own to write (those shared
 * copy-on-write copied now): for what the kernel writes where a page fault
 * must not happen (a signal frame, the way back) and for the devices, which
 * write memory past the page tables.  0 also when no memory is left. */
int user_write_ok(void *p, size_t len);
uint64_t mem_free_bytes(void);
uint64_t mem_total_bytes(void);
/* The boot data (the script) the first program's arena held is no longer
 * needed: zeroed and given back. */
void mem_release_boot_data(uintptr_t a, size_t len);

/* kalloc.c: zeroed kernel memory; kfree needs the size given to kalloc */
void *kalloc(size_t size);
void kfree(void *p, size_t size);

/* blk.c: a virtio-blk disk as a struct blockdev (fs/blockdev.h), or NULL */
struct blockdev *blk_open(uintptr_t mmio, int read_only);

/* console.c: fds 0-2 on the virtio consoles */
struct kiovec { const void *base; size_t len; };
long console_write(int fd, const void *buf, size_t len);
/* The three consoles set up now rather than at first use (a snapshot's
 * boot: then no run restored from it pays their exits). */
void console_bring_up(void);
long console_writev(int fd, const struct kiovec *iov, int n);
long console_read(int fd, void *buf, size_t len, int nonblock);
/* stdin: is there input (or its end) to read now?  Asks the VMM if not. */
unsigned console_readable(void);
/* The scheduler's look at events: input that came wakes its readers; and
 * when it should look next while input is awaited (0: it is not). */
void console_poll(void);

/* net.c: the network's device (dev/net.h has the rest) */
void net_poll(void);
uint64_t console_poll_deadline(void);

/* apic.c: the local APIC; its timer, one-shot, in ns (at least 1 us, at
 * most ~4.3 s) */
void apic_init(void);
/* Interrupts on in the kernel: VIF.if_ on kvm_pvm (and a trap if one is
 * waiting), else sti. */
void interrupts_on(void);
void apic_timer_arm(uint64_t ns);
void apic_eoi(void);

/* syscall.c */
long syscall_dispatch(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/* trap.c */
#define HUSK_TIMER_VECTOR 0x40 /* the local APIC timer's interrupt */
void trap_init(void);
extern volatile int trap_expect; /* selftest: the next #UD is expected */
extern volatile unsigned long trap_seen;

/* program.c */
_Noreturn void program_start(void);

/* selftest.c */
_Noreturn void selftest_run(void);

/* entry.S */
_Noreturn void enter_program(uintptr_t entry, uintptr_t sp);
struct user_regs;
/* The `syscall` site that just trapped, made a jump to a stub calling the
 * fast entry (kvm_pvm only; arch/syscall_rewrite.c). */
void syscall_rewrite(const struct user_regs *r);
long fast_entry(long nr, long a1, long a2, long a3, long a4, long a5, long a6); /* AT_SYSINFO */
#endif
