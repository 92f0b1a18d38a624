/* SPDX-License-Identifier: GPL-2.0-only */
/* The program's memory: everything between the end of its image and the
 * stack at the top of RAM is one arena of 4 KiB pages.  brk and mmap both take
 * pages from the bottom up, so a small program stays within the 2 MiB pages its
 * image already touched (each new 2 MiB region costs the host a huge-page
 * fault); brk fails once mmap took the page above it, and musl's malloc then
 * uses mmap.  RAM is mapped up front, so an allocation is bookkeeping plus
 * zeroing; pages never handed out are still zero from the host and are not
 * cleared again.  Of the protections only PROT_NONE is enforced, in the
 * arena: its pages are made not present (the guard pages below thread
 * stacks; a 2 MiB mapping is split into 4 KiB ones for them), and system
 * calls refuse them (EFAULT).  Read-only and no-exec are not: the program
 * shares the kernel's privilege, which writes through any mapping. */
#include <errno.h>
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"

#define MAX_PAGES (HUSK_RAM_MAX / PAGE_SIZE)

static uint64_t used[MAX_PAGES / 64];
static uint64_t noaccess[MAX_PAGES / 64]; /* PROT_NONE: not present */
static size_t noaccess_pages;
static uintptr_t lo, hi;       /* arena bounds */
static uintptr_t brk_cur;      /* current break */
static uintptr_t dirty_end;    /* pages from here up were never handed out */
static size_t free_hint;       /* no free page below this index */
static uint64_t ram_end;

static size_t pg(uintptr_t a) { return (a - lo) / PAGE_SIZE; }
static int is_used(size_t i) { return used[i / 64] >> (i % 64) & 1; }
static int is_noaccess(size_t i) { return noaccess[i / 64] >> (i % 64) & 1; }

static void mark(size_t first, size_t n, int on)
{
	for (size_t i = first; i < first + n; i++) {
		if (on)
			used[i / 64] |= 1ull << (i % 64);
		else
			used[i / 64] &= ~(1ull << (i % 64));
	}
}

static int range_free(size_t first, size_t n)
{
	for (size_t i = first; i < first + n; i++)
		if (is_used(i))
			return 0;
	return 1;
}

#define PTE_TABLE (1ull | 2ull | 4ull) /* present, writable, user: kvm_pvm wants U on every level */
#define PTE_PRESENT 1ull
#define PDE_HUGE 0x80ull

/* The 4 KiB page-table entry of a, splitting its 2 MiB mapping first if
 * need be (a page from the arena, never given back).  NULL: no memory. */
static uint64_t *pte_of(uintptr_t a)
{
	uint64_t *pd = (uint64_t *)HUSK_PD, *e = &pd[a >> 21];
	if (*e & PDE_HUGE) {
		uint64_t *pt = kalloc(PAGE_SIZE), base = *e & ~((2ull << 20) - 1);
		if (!pt)
			return 0;
		for (int i = 0; i < 512; i++)
			pt[i] = (base + (uint64_t)i * PAGE_SIZE) | PTE_TABLE;
		*e = (uintptr_t)pt | PTE_TABLE;
	}
	uint64_t *pt = (uint64_t *)(uintptr_t)(*e & ~0xfffull & ((1ull << 52) - 1));
	return &pt[(a >> 12) & 511];
}

/* Every translation again: kvm_pvm's hypercall, else a CR3 reload. */
static void flush_tlb(void)
{
	if (boot.pvm) {
		long nr = 0x1007; /* FLUSH_TLB */
		__asm__ volatile("int $0x1b" : "+a"(nr) : : "memory");
	} else {
		uint64_t cr3;
		__asm__ volatile("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3) : : "memory");
	}
}

/* Pages [a, a+len) of the arena present (or not): -ENOMEM when a table
 * page cannot be had. */
static int set_access(uintptr_t a, size_t len, int on)
{
	int changed = 0, r = 0;
	for (size_t i = pg(a), end = pg(a + len); i < end; i++) {
		if (is_noaccess(i) == !on)
			continue;
		uint64_t *pte = pte_of(lo + i * PAGE_SIZE);
		if (!pte) {
			r = -ENOMEM;
			break;
		}
		if (on) {
			*pte |= PTE_PRESENT;
			noaccess[i / 64] &= ~(1ull << (i % 64));
			noaccess_pages--;
		} else {
			*pte &= ~PTE_PRESENT;
			noaccess[i / 64] |= 1ull << (i % 64);
			noaccess_pages++;
		}
		changed = 1;
	}
	if (changed)
		flush_tlb();
	return r;
}

/* Mark [a, a+len) in use and zero what was handed out before. */
static void take(uintptr_t a, size_t len)
{
	mark(pg(a), len / PAGE_SIZE, 1);
	if (a < dirty_end)
		memset((void *)a, 0, (a + len < dirty_end ? a + len : dirty_end) - a);
	if (a + len > dirty_end)
		dirty_end = a + len;
}

static void release(uintptr_t a, size_t len)
{
	if (noaccess_pages)
		set_access(a, len, 1); /* freed pages are usable memory again */
	mark(pg(a), len / PAGE_SIZE, 0);
	if (pg(a) < free_hint)
		free_hint = pg(a);
}

void mem_init(uint64_t image_end, uint64_t ram_size)
{
	ram_end = ram_size;
	lo = ALIGN_UP(image_end, PAGE_SIZE);
	hi = ram_size - HUSK_STACK_SIZE;
	if (lo >= hi)
		panic("program image ends at %lx, no room below the stack", (unsigned long)image_end);
	brk_cur = dirty_end = lo;
	free_hint = 0;
}

uintptr_t mem_stack_top(void)
{
	return ram_end;
}

/* Whether [p, p+len) is the program's memory: above the kernel and its data
 * (below HUSK_PROGRAM_MIN: a system call must not write there, as Linux
 * refuses kernel addresses), below the end of RAM, off the stack's guard
 * page.  Syscalls check user pointers with it and answer EFAULT. */
int user_ok(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, guard = ram_end - HUSK_STACK_SIZE;
	if (!(a >= HUSK_PROGRAM_MIN && a + len >= a && a + len <= ram_end && (a + len <= guard || a >= guard + PAGE_SIZE)))
		return 0;
	if (noaccess_pages && a + len > lo && a < hi) { /* PROT_NONE pages */
		uintptr_t from = a < lo ? lo : a, to = a + len > hi ? hi : a + len;
		for (size_t i = pg(from), end = pg(to + PAGE_SIZE - 1); i < end; i++)
			if (is_noaccess(i))
				return 0;
	}
	return 1;
}

long mem_brk(uintptr_t want)
{
	if (want < lo || want > hi)
		return brk_cur;
	uintptr_t old_end = ALIGN_UP(brk_cur, PAGE_SIZE), new_end = ALIGN_UP(want, PAGE_SIZE);
	if (new_end > old_end) {
		if (!range_free(pg(old_end), pg(new_end) - pg(old_end)))
			return brk_cur;
		take(old_end, new_end - old_end);
	} else if (new_end < old_end) {
		release(new_end, old_end - new_end);
	}
	brk_cur = want;
	return brk_cur;
}

/* Lowest run of n free pages, or 0. */
static uintptr_t find_free(size_t n)
{
	size_t total = pg(hi), run = 0;
	for (size_t i = free_hint; i < total; i++) {
		if (i % 64 == 0 && used[i / 64] == ~0ull && i + 64 <= total) {
			run = 0;
			i += 63;
			continue;
		}
		if (is_used(i)) {
			run = 0;
			if (i == free_hint)
				free_hint = i + 1;
			continue;
		}
		if (++run == n)
			return lo + (i + 1 - n) * PAGE_SIZE;
	}
	return 0;
}

long mem_mmap(uintptr_t addr, size_t len, int prot, int flags)
{
	if (!len || (addr & (PAGE_SIZE - 1)) || !(flags & (MAP_SHARED | MAP_PRIVATE)))
		return -EINVAL;
	if (!(flags & MAP_ANONYMOUS))
		return -ENODEV; /* no files to map */
	if (len > hi - lo)
		return -ENOMEM;
	len = ALIGN_UP(len, PAGE_SIZE);
	size_t n = len / PAGE_SIZE;
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (addr < lo || addr > hi - len)
			return -ENOMEM;
		if ((flags & MAP_FIXED_NOREPLACE) && !range_free(pg(addr), n))
			return -EEXIST;
	} else {
		addr = find_free(n);
		if (!addr) {
			REPORT->denied_enomem++;
			return -ENOMEM;
		}
	}
	if (noaccess_pages && set_access(addr, len, 1)) /* MAP_FIXED over PROT_NONE pages */
		return -ENOMEM;
	take(addr, len);
	if (prot == PROT_NONE && set_access(addr, len, 0)) {
		release(addr, len);
		return -ENOMEM;
	}
	return (long)addr;
}

long mem_munmap(uintptr_t addr, size_t len)
{
	if (!len || (addr & (PAGE_SIZE - 1)) || addr + len < addr)
		return -EINVAL;
	uintptr_t end = ALIGN_UP(addr + len, PAGE_SIZE);
	if (addr < lo)
		addr = lo;
	if (end > hi)
		end = hi;
	if (addr < end)
		release(addr, end - addr);
	return 0;
}

long mem_mprotect(uintptr_t addr, size_t len, int prot)
{
	if ((addr & (PAGE_SIZE - 1)) || addr + len < addr)
		return -EINVAL;
	uintptr_t end = ALIGN_UP(addr + len, PAGE_SIZE);
	if (!len)
		return 0;
	if (addr < HUSK_PROGRAM_MIN || end > ram_end)
		return -ENOMEM; /* not the program's memory */
	if (addr < lo || end > hi)
		return 0; /* the image, the stack: not enforced */
	for (size_t i = pg(addr); i < pg(end); i++)
		if (!is_used(i))
			return -ENOMEM; /* as Linux: part of the range is not mapped */
	return set_access(addr, end - addr, prot != PROT_NONE);
}

uint64_t mem_free_bytes(void)
{
	size_t n = pg(hi), used_pages = 0;
	for (size_t w = 0; w < n / 64; w++)
		used_pages += __builtin_popcountll(used[w]);
	for (size_t i = n / 64 * 64; i < n; i++)
		used_pages += is_used(i);
	return (n - used_pages) * PAGE_SIZE;
}

uint64_t mem_total_bytes(void)
{
	return hi - lo;
}

/* Marked used without moving dirty_end: the pages are zeroed on release, so
 * pages above dirty_end stay as the host gave them, zero. */
void mem_reserve_boot_data(uintptr_t a, size_t len)
{
	mark(pg(a), ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE, 1);
}

void mem_release_boot_data(uintptr_t a, size_t len)
{
	memset((void *)a, 0, len);
	release(a, ALIGN_UP(len, PAGE_SIZE));
}
