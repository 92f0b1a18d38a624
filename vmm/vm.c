/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "husk/abi.h"
#include "disks/copyin.h"
#include "errmsg.h"
#include "vm.h"

#define MSR_STAR   0xc0000081u
#define MSR_LSTAR  0xc0000082u
#define MSR_SFMASK 0xc0000084u
#define CR4_FSGSBASE (1ull << 16)

static int get_msr(int vcpu, uint32_t index, uint64_t *value)
{
	struct { struct kvm_msrs h; struct kvm_msr_entry e; } b = { .h.nmsrs = 1, .e.index = index };
	if (ioctl(vcpu, KVM_GET_MSRS, &b) != 1)
		return -1;
	*value = b.e.data;
	return 0;
}

static int set_msrs(int vcpu, const uint32_t *index, const uint64_t *value, int n)
{
	struct { struct kvm_msrs h; struct kvm_msr_entry e[8]; } b = { .h.nmsrs = n };
	for (int i = 0; i < n; i++)
		b.e[i].index = index[i], b.e[i].data = value[i];
	return ioctl(vcpu, KVM_SET_MSRS, &b) == n ? 0 : -1;
}

/* KVM_GET_SUPPORTED_CPUID costs ~0.7-1 ms here, more than the rest of VM
 * creation.  Its answer is fixed while the kernel runs, so it is kept in
 * /run/husk keyed by the boot id; a missing, unreadable or malformed cache
 * just means asking KVM again. */
struct cpuid_table {
	struct kvm_cpuid2 c;
	struct kvm_cpuid_entry2 e[256];
};

/* The cache's name in /run/husk: by the boot id. */
static int cpuid_cache_name(char *name, size_t n)
{
	char id[64] = "";
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = read(fd, id, sizeof id - 1);
	close(fd);
	if (k < 32)
		return -1;
	id[strcspn(id, "\n")] = 0;
	snprintf(name, n, "cpuid-%s", id);
	return 0;
}

/* /run/husk, checked as husk's own (copyin_own_dir: not a symlink, the
 * user's or root's, writable by nobody else), or -1. */
static int run_dir(unsigned create_mode)
{
	char why[160];
	return copyin_own_dir("/run/husk", create_mode, why, sizeof why);
}

static int cpuid_from_cache(const char *name, struct cpuid_table *t)
{
	int dir = run_dir(0);
	int fd = dir < 0 ? -1 : openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (dir >= 0)
		close(dir);
	struct stat st;
	if (fd < 0)
		return -1;
	ssize_t k = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, t, sizeof *t) : -1;
	close(fd);
	if (k < (ssize_t)sizeof t->c || t->c.nent == 0 || t->c.nent > 256 ||
	    (size_t)k != sizeof t->c + t->c.nent * sizeof t->e[0])
		return -1;
	return 0;
}

static void cpuid_to_cache(const char *name, const struct cpuid_table *t)
{
	char tmp[256];
	int dir = run_dir(0755);
	if (dir < 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.%d", name, (int)getpid());
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t len = sizeof t->c + t->c.nent * sizeof t->e[0];
		int ok = write(fd, t, len) == (ssize_t)len;
		close(fd);
		if (!ok || renameat(dir, tmp, dir, name) < 0)
			unlinkat(dir, tmp, 0);
	}
	close(dir);
}

/* CPUID leaf 7 subleaf 0, EBX bit 0: rdfsbase, wrfsbase and friends. */
static int has_fsgsbase(const struct cpuid_table *t)
{
	for (uint32_t i = 0; i < t->c.nent && i < 256; i++)
		if (t->e[i].function == 7 && t->e[i].index == 0)
			return t->e[i].ebx & 1;
	return 0;
}

/* The CPUID KVM supports, as the guest's; notes FSGSBASE in v. */
static int set_cpuid(struct vm *v)
{
	static struct cpuid_table t;
	char name[128];
	int cached = cpuid_cache_name(name, sizeof name) == 0;
	if (!cached || cpuid_from_cache(name, &t) < 0) {
		t.c.nent = 256;
		if (ioctl(v->kvm, KVM_GET_SUPPORTED_CPUID, &t) < 0)
			return -1;
		if (cached)
			cpuid_to_cache(name, &t);
	}
	v->fsgsbase = has_fsgsbase(&t);
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, sizeof t.c + t.c.nent * sizeof t.e[0], (const uint8_t *)&t);
	sha256_digest(&c, sizeof v->cpuid_digest, v->cpuid_digest);
	return ioctl(v->vcpu, KVM_SET_CPUID2, &t);
}

int vm_create(struct vm *v, uint64_t ram_size, int allow_pvm, char *err, size_t errlen, int *user_error)
{
	memset(v, 0, sizeof *v);
	v->kvm = v->fd = v->vcpu = -1;
	*user_error = 0;
	errno = 0;
	v->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (v->kvm < 0) {
		*user_error = 1;
		return errmsg_errno(err, errlen, "cannot open /dev/kvm");
	}
	if (ioctl(v->kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return errmsg_errno(err, errlen, "/dev/kvm speaks an unknown KVM API version");
	v->fd = ioctl(v->kvm, KVM_CREATE_VM, 0);
	if (v->fd < 0)
		return errmsg_errno(err, errlen, "KVM_CREATE_VM");
	int e = guest_mem_alloc(&v->mem, ram_size);
	if (e) {
		errno = -e;
		return errmsg_errno(err, errlen, "cannot allocate %llu MiB of guest memory", (unsigned long long)(ram_size >> 20));
	}
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = ram_size, .userspace_addr = (uintptr_t)v->mem.host,
	};
	if (ioctl(v->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_USER_MEMORY_REGION");
	/* The guest's own local APIC, in the kernel, for its timer (alarm,
	 * setitimer): a split irqchip costs ~5 us, KVM_CREATE_IRQCHIP ms.  No
	 * interrupt comes from the VMM. */
	struct kvm_enable_cap split = { .cap = KVM_CAP_SPLIT_IRQCHIP, .args = { 24 } };
	if (ioctl(v->fd, KVM_ENABLE_CAP, &split) < 0)
		return errmsg_errno(err, errlen, "KVM_ENABLE_CAP(KVM_CAP_SPLIT_IRQCHIP)");
	v->vcpu = ioctl(v->fd, KVM_CREATE_VCPU, 0);
	if (v->vcpu < 0)
		return errmsg_errno(err, errlen, "KVM_CREATE_VCPU");
	int sz = ioctl(v->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (sz <= 0)
		return errmsg_errno(err, errlen, "KVM_GET_VCPU_MMAP_SIZE");
	v->run_size = sz;
	v->run = mmap(NULL, v->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->vcpu, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		return errmsg_errno(err, errlen, "mmap of the vCPU run area");
	}
	if (set_cpuid(v) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_CPUID2");
	uint64_t sig = 0;
	v->pvm = allow_pvm && get_msr(v->vcpu, PVM_MSR_SIGNATURE, &sig) == 0 && sig == PVM_SIGNATURE;
	uint64_t khz = 0;
	if (get_msr(v->vcpu, PVM_MSR_TSC_KHZ, &khz) || !khz) {
		int k = ioctl(v->vcpu, KVM_GET_TSC_KHZ, 0);
		khz = k > 0 ? (uint64_t)k : 0;
	}
	if (!khz)
		return errmsg_errno(err, errlen, "cannot learn the TSC frequency");
	v->tsc_khz = khz;
	if (!v->pvm)
		ioctl(v->fd, KVM_SET_TSS_ADDR, 0xfffbd000ul); /* VMX wants one; harmless elsewhere */
	return 0;
}

/* Identity map with the U/S bit at every level (kvm_pvm runs the guest at
 * hardware CPL 3 and needs it): RAM in 2 MiB pages (a guest 4 KiB page costs
 * ~10 us to touch first on kvm_pvm, part of a 2 MiB one on a huge page far
 * less), except two ranges in 4 KiB pages: the first 2 MiB with page 0 left
 * out, and the stack with its guard page left out.  Plus the virtio-mmio
 * window, and the direct map of all RAM (abi.h). */
static void build_page_tables(struct vm *v)
{
	const uint64_t P = 1, RW = 2, US = 4, PCD = 0x10, PS = 0x80, TABLE = P | RW | US;
	uint64_t *pml4 = gpa_fixed(&v->mem, HUSK_PML4, 4096);
	uint64_t *pdpt = gpa_fixed(&v->mem, HUSK_PDPT, 4096);
	uint64_t *pd = gpa_fixed(&v->mem, HUSK_PD, 4 * 4096);
	uint64_t *pt0 = gpa_fixed(&v->mem, HUSK_PT0, 4096);
	pml4[0] = HUSK_PDPT | TABLE;
	for (int i = 0; i < 4; i++)
		pdpt[i] = (HUSK_PD + 4096ull * i) | TABLE;
	pd[0] = HUSK_PT0 | TABLE;
	for (uint64_t i = 1; i < 512; i++)
		pt0[i] = i * 4096 | TABLE;
	uint64_t stack = v->mem.size - HUSK_STACK_SIZE;
	for (uint64_t a = HUSK_KERNEL_BASE; a < stack; a += 2ull << 20)
		pd[a >> 21] = a | TABLE | PS;
	uint64_t *pt = gpa_fixed(&v->mem, HUSK_PT_STACK, HUSK_STACK_SIZE >> 9);
	for (uint64_t a = stack + 4096, i = 1; a < v->mem.size; a += 4096, i++)
		pt[i] = a | TABLE;
	for (uint64_t a = stack, i = 0; a < v->mem.size; a += 2ull << 20, i++)
		pd[a >> 21] = (HUSK_PT_STACK + 4096 * i) | TABLE;
	pd[HUSK_MMIO_BASE >> 21] = HUSK_MMIO_BASE | TABLE | PS | PCD;
	uint64_t *dpdpt = gpa_fixed(&v->mem, HUSK_DIRECT_PDPT, 4096);
	uint64_t *dpd = gpa_fixed(&v->mem, HUSK_DIRECT_PD, 3 * 4096);
	pml4[HUSK_DIRECT_MAP >> 39] = HUSK_DIRECT_PDPT | TABLE;
	for (int i = 0; i < 3; i++)
		dpdpt[i] = (HUSK_DIRECT_PD + 4096ull * i) | TABLE;
	for (uint64_t a = 0; a < v->mem.size; a += 2ull << 20)
		dpd[a >> 21] = a | TABLE | PS;
}

static void write_gdt_tss(struct vm *v)
{
	uint64_t *g = gpa_fixed(&v->mem, HUSK_GDT, 10 * 8);
	g[1] = 0x00cf9b000000ffffull; /* 0x08 32-bit code */
	g[2] = 0x00af9b000000ffffull; /* 0x10 kernel 64-bit code */
	g[3] = 0x00cf93000000ffffull; /* 0x18 kernel data */
	g[4] = 0x00cffb000000ffffull; /* 0x20 user 32-bit code */
	g[5] = 0x00cff3000000ffffull; /* 0x28 user data */
	g[6] = 0x00affb000000ffffull; /* 0x30 user 64-bit code */
	uint64_t base = HUSK_TSS, limit = 0x67;
	g[8] = (limit & 0xffff) | (base & 0xffffff) << 16 | 0x8bull << 40 | ((base >> 24) & 0xff) << 56;
	g[9] = base >> 32;
	uint64_t ist[2] = { HUSK_IST_TOP, HUSK_IST2_TOP };
	memcpy(gpa_fixed(&v->mem, HUSK_TSS + 0x24, sizeof ist), ist, sizeof ist);
}

static void segment(struct kvm_segment *s, uint16_t sel, uint8_t type, int code64)
{
	memset(s, 0, sizeof *s);
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->l = code64;
	s->db = !code64;
	s->g = 1;
}

int vm_setup_cpu(struct vm *v, uint64_t entry, char *err, size_t errlen)
{
	errno = 0;
	const struct husk_kernel_header *kh = gpa_fixed(&v->mem, HUSK_KERNEL_BASE, sizeof *kh);
	if (kh->magic != HUSK_KERNEL_MAGIC)
		return errmsg_errno(err, errlen, "guest kernel has no husk header");
	build_page_tables(v);
	write_gdt_tss(v);
	struct kvm_sregs s;
	if (ioctl(v->vcpu, KVM_GET_SREGS, &s) < 0)
		return errmsg_errno(err, errlen, "KVM_GET_SREGS");
	s.cr0 = 0x80050033; /* PG WP NE ET MP PE, AM */
	s.cr3 = HUSK_PML4;
	s.cr4 = 0x620;      /* PAE OSFXSR OSXMMEXCPT */
	s.efer = 0x501;     /* LMA LME SCE */
	segment(&s.cs, HUSK_KCS, 0xb, 1);
	segment(&s.ss, HUSK_KDS, 0x3, 0);
	s.ds = s.es = s.ss;
	segment(&s.fs, 0, 0x3, 0);
	s.gs = s.fs;
	memset(&s.ldt, 0, sizeof s.ldt);
	s.ldt.type = 2;
	s.ldt.unusable = 1;
	memset(&s.tr, 0, sizeof s.tr);
	s.tr.selector = HUSK_TSS_SEL;
	s.tr.base = HUSK_TSS;
	s.tr.limit = 0x67;
	s.tr.type = 11;
	s.tr.present = 1;
	s.gdt.base = HUSK_GDT;
	s.gdt.limit = 10 * 8 - 1;
	s.idt.base = 0;   /* the kernel loads its own */
	s.idt.limit = 0;
	/* CR4.FSGSBASE where the CPUID has it: the guest kernel is told
	 * (HUSK_BOOT_FSGSBASE); a KVM that refuses it gets the CPU without. */
	if (v->fsgsbase) {
		s.cr4 |= CR4_FSGSBASE;
		if (ioctl(v->vcpu, KVM_SET_SREGS, &s) < 0) {
			v->fsgsbase = 0;
			s.cr4 &= ~CR4_FSGSBASE;
		}
	}
	if (!v->fsgsbase && ioctl(v->vcpu, KVM_SET_SREGS, &s) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_SREGS");
	/* syscall enters at CS 0x10 / SS 0x18; SFMASK clears TF IF DF AC NT. */
	uint32_t msr[] = { MSR_STAR, MSR_LSTAR, MSR_SFMASK };
	uint64_t val[] = { (uint64_t)HUSK_UCS32 << 48 | (uint64_t)HUSK_KCS << 32, kh->syscall_entry, 0x47700 };
	if (set_msrs(v->vcpu, msr, val, 3) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_MSRS");
	uint64_t flags = (v->pvm ? HUSK_BOOT_PVM : 0) | (v->fsgsbase ? HUSK_BOOT_FSGSBASE : 0);
	struct kvm_regs r = { .rip = entry, .rdi = HUSK_FDT, .rsi = flags, .rflags = 2 };
	if (ioctl(v->vcpu, KVM_SET_REGS, &r) < 0)
		return errmsg_errno(err, errlen, "KVM_SET_REGS");
	return 0;
}

void vm_destroy(struct vm *v)
{
	if (v->run)
		munmap(v->run, v->run_size);
	guest_mem_free(&v->mem);
	if (v->vcpu >= 0)
		close(v->vcpu);
	if (v->fd >= 0)
		close(v->fd);
	if (v->kvm >= 0)
		close(v->kvm);
}
