/* SPDX-License-Identifier: GPL-2.0-only */
/* Address spaces.  Each process has page tables of its own for the program's
 * addresses, [HUSK_PROGRAM_MIN, top of RAM); the kernel's part (its first
 * 4 MiB, the direct map, the devices) is the same page in every root.  The
 * program's memory is handed out in 2 MiB regions, each backed by one 2 MiB
 * block (one mapping: one shadow fault on kvm_pvm) or, when no block is free,
 * page by page.  Its image sits at the bottom, the arena above it (brk and
 * mmap take pages from the bottom up, so a small program stays within the
 * regions it already has), the stack at the top in 4 KiB pages below which a
 * guard page stays unmapped; a stack page is backed when first touched.
 *
 * The first program's address space is the one the VMM built: everything
 * mapped to itself.  It takes a region's own block when that is free (no
 * mapping changes); the blocks of its regions it has not taken stay mapped
 * there too, which only a program writing where it allocated nothing sees.
 *
 * Shared mappings (MAP_SHARED) are backed page by page in regions without
 * a block, from the top of the arena down; fork gives the child the same
 * pages (pmem_share), so parent and child see each other's writes.
 *
 * Fork shares everything else copy-on-write: parent and child map the same
 * blocks and pages read-only, and the first write to one (a page fault, the
 * program's or the kernel's on its behalf: CR0.WP is on) copies its 4 KiB
 * page, or makes it writable again when no other process uses it (cow).  A
 * block one side writes to is taken apart into 4 KiB pages first (to_pages),
 * as Linux splits a huge page, and made one block again when that side goes
 * on writing there (collapse).  When the parent or child goes, what the
 * other alone holds now is made writable at once (take_back_writes).  So a
 * child costs what it writes, not what its parent has: a fork of a 30 MB
 * CPython is a few page-table entries, and 100 of them fit where 100 copies
 * did not.
 *
 * Of the protections only PROT_NONE is enforced, in the arena: its pages are
 * made not present (a block's mapping is split into 4 KiB ones for them), and
 * system calls refuse them (EFAULT).  A mapping made PROT_NONE is a
 * reservation: its pages get memory only when mprotect opens them (glibc
 * reserves 128 MiB of address space for each thread's malloc arena).
 * Read-only and no-exec are not enforced: the program shares the kernel's
 * privilege, and a page not writable is one shared copy-on-write. */
#include <errno.h>
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"
#include "mm/mm.h"
#include "mm/bitmap.h"
#include "mm/pmem.h"

enum region_kind {
	R_NONE,  /* nothing of it is this process's */
	R_BLOCK, /* one 2 MiB block */
	R_SPLIT, /* one block, mapped in 4 KiB pages (some PROT_NONE) */
	R_PAGES, /* 4 KiB pages, each its own (an entry of 0: not backed) */
};

#define PTE_PRESENT 1ull
#define PTE_WRITABLE 2ull
#define PTE_TABLE (1ull | 2ull | 4ull) /* present, writable, user: kvm_pvm wants U on every level */
#define PTE_ACCESSED 0x20ull
#define PDE_HUGE 0x80ull
#define PTE_ADDR 0x000ffffffffff000ull
#define NPD 3 /* page directories of the program's part: [0, 3 GiB) */

struct mm *mm_current;
static struct mm *all; /* every address space, linked by next */
static int flush_pending;

/* Page-table pages are reused only as page tables.  kvm_pvm write-protects
 * a page that served as one (its shadow stays cached after the process is
 * gone), so every later write to it traps: ~1.3 us each, a 4 KiB memset
 * ~650 us, which made a small fork + exit + wait take 720 us instead of 120.  A freed table has the entries
 * it used cleared and waits here for the next table. */
#define TABLE_POOL 1024
static uint64_t table_pool[TABLE_POOL];
static size_t tables_pooled;

static uint64_t table_alloc(void)
{
	return tables_pooled ? table_pool[--tables_pooled] : pmem_alloc(1);
}

static void table_free(uint64_t pa)
{
	uint64_t *e = phys_to_virt(pa);
	for (int i = 0; i < 512; i++)
		if (e[i])
			e[i] = 0;
	if (tables_pooled < TABLE_POOL && tables_pooled < boot.ram_size / PAGE_SIZE / 32) /* at most 1/32 of RAM */
		table_pool[tables_pooled++] = pa;
	else
		pmem_free(pa, 1);
}

static uint64_t *pd_entry(const struct mm *m, size_t r)
{
	return &m->pd[r / 512][r % 512];
}

static size_t pg(const struct mm *m, uintptr_t a) { return (a - m->lo) / PAGE_SIZE; }



/* Every translation again: kvm_pvm's hypercall, else a CR3 reload. */
static void flush_tlb(void)
{
	flush_pending = 0;
	if (boot.pvm) {
		long nr = 0x1007; /* FLUSH_TLB */
		__asm__ volatile("int $0x1b" : "+a"(nr) : : "memory");
	} else {
		uint64_t cr3;
		__asm__ volatile("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3) : : "memory");
	}
}

/* A mapping that was present changed: the TLB may hold it (only the live
 * root's matter: a switch flushes). */
static void changed(const struct mm *m)
{
	if (m == mm_current)
		flush_pending = 1;
}

static void flush_if_needed(void)
{
	if (flush_pending)
		flush_tlb();
}

/* One mapping of m's became writable (or moved): its translation again. */
static void flush_one(const struct mm *m, uintptr_t a)
{
	if (m != mm_current)
		return;
	if (boot.pvm) {
		long nr = 0x1008; /* FLUSH_TLB_ONE */
		__asm__ volatile("int $0x1b" : "+a"(nr) : "b"(a) : "memory");
	} else {
		__asm__ volatile("invlpg (%0)" : : "r"(a) : "memory");
	}
}

static uint64_t *table_of(const struct mm *m, size_t r)
{
	return phys_to_virt(*pd_entry(m, r) & PTE_ADDR);
}

/* The 2 MiB block a huge directory entry maps. */
static uint64_t block_base(uint64_t pde)
{
	return pde & PTE_ADDR & ~(BLOCK_SIZE - 1);
}

static void set_pde(struct mm *m, size_t r, uint64_t v)
{
	uint64_t old = *pd_entry(m, r);
	if (old == v)
		return;
	*pd_entry(m, r) = v;
	if (old & PTE_PRESENT)
		changed(m);
}

static uintptr_t region_start(size_t r) { return (uintptr_t)r * BLOCK_SIZE; }

/* Pages [from, to) of region r backed: its block, else (or when the
 * region should not have one) page by page. */
static int back_as(struct mm *m, size_t r, uintptr_t from, uintptr_t to, int block)
{
	if (m->region[r] == R_BLOCK || m->region[r] == R_SPLIT)
		return 0;
	if (m->region[r] == R_NONE) {
		uint64_t pa = block ? pmem_alloc_block(region_start(r)) : 0;
		if (pa) {
			set_pde(m, r, pa | PTE_TABLE | PDE_HUGE);
			m->region[r] = R_BLOCK;
			return 0;
		}
		uint64_t pt = table_alloc();
		if (!pt)
			return -ENOMEM;
		set_pde(m, r, pt | PTE_TABLE);
		m->region[r] = R_PAGES;
	}
	uint64_t *pt = table_of(m, r);
	for (uintptr_t a = from; a < to; a += PAGE_SIZE) {
		uint64_t *e = &pt[(a >> 12) & 511];
		if (*e)
			continue;
		uint64_t pa = pmem_alloc(1);
		if (!pa)
			return -ENOMEM;
		*e = pa | PTE_TABLE;
	}
	return 0;
}

static int back(struct mm *m, size_t r, uintptr_t from, uintptr_t to)
{
	return back_as(m, r, from, to, region_start(r) < m->hi); /* the stack: pages */
}

/* Back [a, a+len) region by region. */
static int back_range(struct mm *m, uintptr_t a, size_t len)
{
	for (uintptr_t end = a + len; a < end;) {
		size_t r = a / BLOCK_SIZE;
		uintptr_t next = region_start(r + 1) < end ? region_start(r + 1) : end;
		if (back(m, r, a, next))
			return -ENOMEM;
		a = next;
	}
	return 0;
}

static void free_region(struct mm *m, size_t r)
{
	uint64_t pde = *pd_entry(m, r);
	switch (m->region[r]) {
	case R_NONE:
		break;
	case R_BLOCK:
		pmem_free(block_base(pde), BLOCK_SIZE / PAGE_SIZE);
		break;
	case R_SPLIT:
		pmem_free(table_of(m, r)[0] & PTE_ADDR, BLOCK_SIZE / PAGE_SIZE);
		table_free(pde & PTE_ADDR);
		break;
	case R_PAGES: {
		uint64_t *pt = table_of(m, r);
		for (int i = 0; i < 512; i++)
			if (pt[i])
				pmem_free(pt[i] & PTE_ADDR, 1);
		if ((pde & PTE_ADDR) >= HUSK_PROGRAM_MIN) /* not one of the VMM's tables */
			table_free(pde & PTE_ADDR);
		else
			memset(pt, 0, PAGE_SIZE);
		break;
	}
	}
	m->region[r] = R_NONE;
	m->copies[r] = 0;
	set_pde(m, r, 0);
}

void *mm_page(struct mm *m, uintptr_t a)
{
	size_t r = a / BLOCK_SIZE;
	if (!m || a < m->image_lo || a >= m->stack_top || m->region[r] == R_NONE)
		return 0;
	uint64_t pde = *pd_entry(m, r);
	if (pde & PDE_HUGE)
		return phys_to_virt(block_base(pde) + (a & (BLOCK_SIZE - 1) & ~(PAGE_SIZE - 1)));
	uint64_t e = table_of(m, r)[(a >> 12) & 511];
	return e ? phys_to_virt(e & PTE_ADDR) : 0;
}

uint64_t virt_to_phys(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	if (a >= HUSK_DIRECT_MAP)
		return a - HUSK_DIRECT_MAP;
	if (a < HUSK_PROGRAM_MIN)
		return a; /* the kernel's own, mapped to itself */
	void *k = mm_page(mm_current, a);
	if (!k)
		panic("no page behind %lx", (unsigned long)a);
	return (uint64_t)((uintptr_t)k - HUSK_DIRECT_MAP) + (a & (PAGE_SIZE - 1));
}

/* Region r's block mapped by 512 entries instead, the same pages with the
 * same rights (R_SPLIT).  -ENOMEM: no page for the table. */
static int split(struct mm *m, size_t r)
{
	uint64_t pde = *pd_entry(m, r), base = block_base(pde), pt = table_alloc();
	if (!pt)
		return -ENOMEM;
	uint64_t *e = phys_to_virt(pt);
	for (int i = 0; i < 512; i++) /* writable as the block was: not when shared copy-on-write */
		e[i] = (base + (uint64_t)i * PAGE_SIZE) | (PTE_TABLE & ~PTE_WRITABLE) | (pde & PTE_WRITABLE);
	*pd_entry(m, r) = pt | PTE_TABLE;
	flush_one(m, region_start(r)); /* the same translations: only the block's own goes */
	m->region[r] = R_SPLIT;
	return 0;
}

/* The 4 KiB entry of a (an arena page), splitting its block first if need
 * be.  NULL: no memory for the table. */
static uint64_t *pte_of(struct mm *m, uintptr_t a)
{
	size_t r = a / BLOCK_SIZE;
	if (m->region[r] == R_BLOCK && split(m, r))
		return 0;
	return &table_of(m, r)[(a >> 12) & 511];
}

/* ---- copy-on-write ----------------------------------------------------------- */

static int block_shared(uint64_t base)
{
	for (uint64_t pa = base; pa < base + BLOCK_SIZE; pa += PAGE_SIZE)
		if (pmem_shared(pa))
			return 1;
	return 0;
}

/* Region r (a block, mapped whole or split) as 4 KiB pages, each its own:
 * what a write to a block shared copy-on-write needs first. */
static int to_pages(struct mm *m, size_t r)
{
	if (m->region[r] == R_BLOCK && split(m, r))
		return -ENOMEM;
	m->region[r] = R_PAGES;
	return 0;
}

/* A 4 KiB entry shared copy-on-write whose page no other process uses any
 * more: writable again.  1 when it changed. */
static int regain_write(uint64_t *e)
{
	if ((*e & (PTE_PRESENT | PTE_WRITABLE)) != PTE_PRESENT || pmem_shared(*e & PTE_ADDR))
		return 0;
	*e |= PTE_WRITABLE;
	return 1;
}

/* A region a process keeps writing after fork becomes one block again:
 * after this many of its pages copied one by one, the rest is copied at
 * once.  On kvm_pvm each fault costs ~40 us (the trap, and a shadow entry
 * for the new mapping): a block written page by page ~25 ms, copied whole
 * ~1 ms.  A process that writes a few pages here and there (a CPython
 * child's reference counts) copies only those. */
#define COPIES_BEFORE_BLOCK 8
/* Only while more than this share of memory is free: a hundred children of
 * a big parent must fit. */
#define BLOCKS_WHILE_FREE 4 /* a quarter */

static int collapse(struct mm *m, size_t r)
{
	uintptr_t rs = region_start(r);
	if (rs + BLOCK_SIZE > m->hi || pmem_free_bytes() < pmem_total_bytes() / BLOCKS_WHILE_FREE + BLOCK_SIZE)
		return 0; /* the stack's regions stay in pages */
	for (uintptr_t a = rs > m->lo ? rs : m->lo; a < rs + BLOCK_SIZE; a += PAGE_SIZE)
		if (bit_get(m->shared, pg(m, a)) || bit_get(m->noaccess, pg(m, a)))
			return 0;
	uint64_t pa = pmem_alloc_block(0), pde = *pd_entry(m, r), *pt = table_of(m, r);
	if (!pa)
		return 0;
	for (int i = 0; i < 512; i++)
		if (pt[i]) { /* not backed: zero in the block */
			memcpy(phys_to_virt(pa + (uint64_t)i * PAGE_SIZE), phys_to_virt(pt[i] & PTE_ADDR), PAGE_SIZE);
			pmem_free(pt[i] & PTE_ADDR, 1);
		}
	set_pde(m, r, pa | PTE_TABLE | PDE_HUGE);
	table_free(pde & PTE_ADDR);
	m->region[r] = R_BLOCK;
	m->copies[r] = 0;
	flush_if_needed();
	return 1;
}

/* A write to a's page, which m may share copy-on-write: the page becomes
 * m's own, copied unless m is its last user.  1: done; 0: a is not such a
 * page (not backed, PROT_NONE, or writable already); -ENOMEM. */
static int cow(struct mm *m, uintptr_t a)
{
	a &= ~(PAGE_SIZE - 1);
	if (a < m->image_lo || a >= m->stack_top)
		return 0;
	size_t r = a / BLOCK_SIZE;
	uint64_t *pde = pd_entry(m, r), *e;
	switch (m->region[r]) {
	case R_NONE:
		return 0;
	case R_BLOCK:
		if (*pde & PTE_WRITABLE)
			return 0;
		if (!block_shared(block_base(*pde))) {
			*pde |= PTE_WRITABLE; /* the other users are gone */
			flush_one(m, a);
			return 1;
		}
		if (to_pages(m, r))
			return -ENOMEM;
		break;
	case R_SPLIT: /* its entries must stay the block's: writable in place, or taken apart */
		e = &table_of(m, r)[(a >> 12) & 511];
		if (!(*e & PTE_PRESENT) || (*e & PTE_WRITABLE))
			return 0;
		if (pmem_shared(*e & PTE_ADDR) && to_pages(m, r))
			return -ENOMEM;
		break;
	}
	e = &table_of(m, r)[(a >> 12) & 511];
	if (!(*e & PTE_PRESENT) || (*e & PTE_WRITABLE))
		return 0;
	uint64_t old = *e & PTE_ADDR;
	if (pmem_shared(old)) {
		if (m->copies[r] + 1 >= COPIES_BEFORE_BLOCK && collapse(m, r))
			return 1;
		if (m->copies[r] < 255)
			m->copies[r]++;
		uint64_t pa = pmem_alloc(1);
		if (!pa) {
			REPORT->denied_enomem++;
			return -ENOMEM;
		}
		memcpy(phys_to_virt(pa), phys_to_virt(old), PAGE_SIZE);
		pmem_free(old, 1); /* one user fewer */
		*e = pa | (*e & ~PTE_ADDR);
	}
	*e |= PTE_WRITABLE;
	flush_one(m, a);
	return 1;
}

int mm_cow_fault(uintptr_t a)
{
	return mm_current ? cow(mm_current, a) : 0;
}

int user_write_ok(void *p, size_t len)
{
	if (!user_ok(p, len))
		return 0;
	for (uintptr_t a = (uintptr_t)p & ~(PAGE_SIZE - 1); a < (uintptr_t)p + len; a += PAGE_SIZE)
		if (cow(mm_current, a) < 0)
			return 0;
	return 1;
}

void *mm_page_for_write(struct mm *m, uintptr_t a)
{
	return m && cow(m, a) >= 0 ? mm_page(m, a) : 0;
}

int mm_is_shared(uintptr_t a)
{
	const struct mm *m = mm_current;
	return m && a >= m->lo && a < m->hi && bit_get(m->shared, pg(m, a));
}

/* Pages [a, a+len) of the arena present (or not): -ENOMEM when a table
 * page cannot be had.  A page with no memory behind it (reserved: mapped
 * PROT_NONE) only gets or loses the mark: mem_mprotect backs it first. */
static int set_access(struct mm *m, uintptr_t a, size_t len, int on)
{
	int r = 0;
	for (size_t i = pg(m, a), end = pg(m, a + len); i < end; i++) {
		uintptr_t p = m->lo + i * PAGE_SIZE;
		if (bit_get(m->noaccess, i) == !on)
			continue;
		if (mm_page(m, p)) { /* else reserved, never backed: only the mark changes */
			uint64_t *pte = pte_of(m, p);
			if (!pte || !*pte) {
				r = -ENOMEM;
				break;
			}
			if (on) {
				*pte |= PTE_PRESENT;
			} else {
				*pte &= ~PTE_PRESENT;
				changed(m);
			}
		}
		if (on)
			m->noaccess_pages--;
		else
			m->noaccess_pages++;
		bits_set(m->noaccess, i, 1, on ? 0 : 1);
	}
	flush_if_needed();
	return r;
}

/* The reserved pages of [a, end) (mapped PROT_NONE, never backed) get
 * memory: a region wholly inside as one block, else page by page. */
static int back_reserved(struct mm *m, uintptr_t a, uintptr_t end)
{
	while (a < end) {
		size_t r = a / BLOCK_SIZE;
		uintptr_t next = region_start(r + 1) < end ? region_start(r + 1) : end;
		int whole = a == region_start(r) && next == region_start(r + 1);
		if (back_as(m, r, a, next, whole && m->region[r] == R_NONE))
			return -ENOMEM;
		a = next;
	}
	flush_if_needed();
	return 0;
}

/* Hands out [a, a+len) of the arena: backed, zero (a page handed out before
 * was cleared when given back). */
static int take(struct mm *m, uintptr_t a, size_t len)
{
	int r = back_range(m, a, len);
	flush_if_needed(); /* the first program's region moved off its own block */
	if (r)
		return -ENOMEM;
	bits_set(m->used, pg(m, a), len / PAGE_SIZE, 1);
	return 0;
}

/* Gives back [a, a+len) of the arena: a region with nothing handed out is
 * freed; else its pages given back are cleared (or freed, page by page). */
static void release(struct mm *m, uintptr_t a, size_t len)
{
	if (m->noaccess_pages)
		set_access(m, a, len, 1); /* freed pages are usable memory again */
	bits_set(m->used, pg(m, a), len / PAGE_SIZE, 0);
	bits_set(m->shared, pg(m, a), len / PAGE_SIZE, 0);
	if (pg(m, a) < m->free_hint)
		m->free_hint = pg(m, a);
	for (uintptr_t end = a + len; a < end;) {
		size_t r = a / BLOCK_SIZE;
		uintptr_t rs = region_start(r), re = region_start(r + 1);
		uintptr_t next = re < end ? re : end;
		int empty = rs >= m->lo && re <= m->hi && bits_clear(m->used, pg(m, rs), BLOCK_SIZE / PAGE_SIZE);
		if (empty) {
			free_region(m, r);
			a = next;
			continue;
		}
		if (m->region[r] == R_BLOCK || m->region[r] == R_SPLIT) { /* cleared in place, unless shared */
			int shared = 0;
			for (uintptr_t p = a; p < next && !shared; p += PAGE_SIZE)
				shared = pmem_shared(virt_to_phys(mm_page(m, p)));
			if (shared && to_pages(m, r))
				REPORT->denied_enomem++; /* no table: the shared pages stay as they were */
		}
		if (m->region[r] == R_PAGES) { /* a shared page is freed by its last user */
			uint64_t *pt = table_of(m, r);
			for (uintptr_t p = a; p < next; p += PAGE_SIZE) {
				uint64_t *e = &pt[(p >> 12) & 511];
				if (*e) {
					pmem_free(*e & PTE_ADDR, 1);
					*e = 0;
					changed(m);
				}
			}
		} else if (m->region[r] != R_NONE) {
			for (uintptr_t p = a; p < next; p += PAGE_SIZE)
				if (!pmem_shared(virt_to_phys(mm_page(m, p))))
					memset(mm_page(m, p), 0, PAGE_SIZE);
		}
		a = next;
	}
	flush_if_needed();
}

/* ---- building address spaces ---------------------------------------------- */

static int alloc_maps(struct mm *m)
{
	m->words = ((m->hi - m->lo) / PAGE_SIZE + 63) / 64;
	m->used = kalloc(m->words * 8);
	m->noaccess = kalloc(m->words * 8);
	m->shared = kalloc(m->words * 8);
	return m->used && m->noaccess && m->shared ? 0 : -ENOMEM;
}

/* Bytes of the per-region maps, region and copies, allocated together. */
static size_t region_maps_size(uint64_t ram_size)
{
	return 2 * (ram_size / BLOCK_SIZE);
}

/* Page tables whose kernel part is the boot root's. */
static struct mm *mm_new(uint64_t ram_size)
{
	struct mm *m = kalloc(sizeof *m);
	if (!m)
		return 0;
	m->refs = 1;
	m->stack_top = ram_size;
	m->region = kalloc(region_maps_size(ram_size));
	uint64_t root = table_alloc(), pdpt = root ? table_alloc() : 0, pd[NPD] = { 0 };
	for (int i = 0; i < NPD && pdpt; i++)
		if (!(pd[i] = table_alloc()))
			pdpt = 0;
	if (!m->region || !pdpt) {
		for (int i = 0; i < NPD; i++)
			if (pd[i])
				table_free(pd[i]);
		if (root)
			table_free(root);
		kfree(m->region, region_maps_size(ram_size));
		kfree(m, sizeof *m);
		return 0;
	}
	m->copies = m->region + ram_size / BLOCK_SIZE;
	m->next = all;
	all = m;
	const uint64_t *boot_pml4 = phys_to_virt(HUSK_PML4), *boot_pdpt = phys_to_virt(HUSK_PDPT),
		       *boot_pd = phys_to_virt(HUSK_PD);
	uint64_t *pml4 = phys_to_virt(root), *dir = phys_to_virt(pdpt);
	pml4[0] = pdpt | PTE_TABLE;
	pml4[HUSK_DIRECT_MAP >> 39] = boot_pml4[HUSK_DIRECT_MAP >> 39];
	for (int i = 0; i < NPD; i++) {
		dir[i] = pd[i] | PTE_TABLE;
		m->pd[i] = phys_to_virt(pd[i]);
	}
	dir[NPD] = boot_pdpt[NPD]; /* 3..4 GiB: the devices */
	m->root = root;
	for (size_t r = 0; r < HUSK_PROGRAM_MIN / BLOCK_SIZE; r++)
		*pd_entry(m, r) = boot_pd[r]; /* the kernel */
	m->image_lo = HUSK_PROGRAM_MIN;
	return m;
}

struct mm *mm_boot(uint64_t image_end, uint64_t ram_size, uintptr_t data, size_t data_len)
{
	pmem_init(ram_size);
	uintptr_t image_top = ALIGN_UP(image_end, BLOCK_SIZE), stack = ram_size - HUSK_STACK_SIZE;
	uintptr_t data_lo = data & ~(BLOCK_SIZE - 1), data_hi = ALIGN_UP(data + data_len, BLOCK_SIZE);
	if (image_top > stack || (data_len && (data < image_end || data_hi > stack)))
		panic("program image ends at %lx, no room below the stack", (unsigned long)image_end);
	pmem_reserve(HUSK_PROGRAM_MIN, image_top - HUSK_PROGRAM_MIN);
	pmem_reserve(stack, HUSK_STACK_SIZE);
	if (data_len)
		pmem_reserve(data_lo, data_hi - data_lo);
	struct mm *m = kalloc(sizeof *m);
	if (!m || !(m->region = kalloc(region_maps_size(ram_size))))
		panic("no memory for the program's address space");
	m->copies = m->region + ram_size / BLOCK_SIZE;
	m->next = all;
	all = m;
	m->refs = 1;
	m->boot = 1;
	m->root = HUSK_PML4;
	for (int i = 0; i < NPD; i++)
		m->pd[i] = phys_to_virt(HUSK_PD + (uint64_t)i * PAGE_SIZE);
	m->image_lo = HUSK_PROGRAM_MIN;
	m->lo = m->brk = ALIGN_UP(image_end, PAGE_SIZE);
	m->hi = stack;
	m->stack_top = ram_size;
	for (size_t r = HUSK_PROGRAM_MIN / BLOCK_SIZE; r < image_top / BLOCK_SIZE; r++)
		m->region[r] = R_BLOCK;
	for (size_t r = stack / BLOCK_SIZE; r < ram_size / BLOCK_SIZE; r++)
		m->region[r] = R_PAGES; /* the VMM's tables, every page present */
	if (alloc_maps(m))
		panic("no memory for the program's address space");
	if (data_len) { /* its blocks are the program's, mapped to themselves */
		for (size_t r = data_lo / BLOCK_SIZE; r < data_hi / BLOCK_SIZE; r++)
			m->region[r] = R_BLOCK;
		bits_set(m->used, pg(m, data), ALIGN_UP(data_len, PAGE_SIZE) / PAGE_SIZE, 1);
	}
	mm_current = m;
	return m;
}

/* Which of the parent's pages a fork shares: the image, what the arena handed
 * out, and the stack pages ever touched (one the program never touched is
 * still zero: the child backs its own when it does). */
static int fork_wants(const struct mm *p, uintptr_t a, uint64_t entry)
{
	if (a < p->lo)
		return 1;
	if (a < p->hi)
		return bit_get(p->used, pg(p, a));
	return entry & PTE_ACCESSED;
}

static void write_protect(struct mm *m, uint64_t *e)
{
	if (*e & PTE_WRITABLE) {
		*e &= ~PTE_WRITABLE;
		changed(m);
	}
}

/* One more user of each page of a block. */
static int share_block(uint64_t base)
{
	for (uint64_t pa = base; pa < base + BLOCK_SIZE; pa += PAGE_SIZE)
		if (pmem_share(pa)) {
			while (pa > base)
				pmem_free(pa -= PAGE_SIZE, 1);
			return -ENOMEM;
		}
	return 0;
}

/* The child maps what the parent has in region r, both read-only (but
 * MAP_SHARED pages), one more user of each page. */
static int fork_region(struct mm *c, struct mm *p, size_t r)
{
	uint64_t *pde = pd_entry(p, r);
	if (p->region[r] != R_PAGES) { /* a block: shared whole */
		uint64_t base = p->region[r] == R_BLOCK ? block_base(*pde) : table_of(p, r)[0] & PTE_ADDR;
		uint64_t t = p->region[r] == R_SPLIT ? table_alloc() : 0;
		if ((p->region[r] == R_SPLIT && !t) || share_block(base)) {
			if (t)
				table_free(t);
			return -ENOMEM;
		}
		if (p->region[r] == R_BLOCK) {
			write_protect(p, pde);
			*pd_entry(c, r) = *pde;
		} else {
			uint64_t *ppt = table_of(p, r), *cpt = phys_to_virt(t);
			for (int i = 0; i < 512; i++) {
				write_protect(p, &ppt[i]);
				cpt[i] = ppt[i];
			}
			*pd_entry(c, r) = t | PTE_TABLE;
		}
		c->region[r] = p->region[r];
		return 0;
	}
	if (back_as(c, r, 0, 0, 0)) /* the child's table */
		return -ENOMEM;
	uint64_t *ppt = table_of(p, r), *cpt = table_of(c, r);
	for (int i = 0; i < 512; i++) {
		uintptr_t a = region_start(r) + (uintptr_t)i * PAGE_SIZE;
		if (!ppt[i] || a < p->image_lo || !fork_wants(p, a, ppt[i]))
			continue;
		if (pmem_share(ppt[i] & PTE_ADDR))
			return -ENOMEM;
		if (!(a >= p->lo && a < p->hi && bit_get(p->shared, pg(p, a))))
			write_protect(p, &ppt[i]);
		cpt[i] = ppt[i];
	}
	return 0;
}

/* A page parent and child both write first thing after fork (the stack at
 * the caller's stack pointer, the thread's own data at its thread pointer):
 * copied for the child now, and the parent's made writable again where it
 * alone has it, rather than a fault on each side (~100 us each on kvm_pvm:
 * a small fork took 480 us instead of 275 with eager copies). */
static void copy_hot(struct mm *c, struct mm *p, uintptr_t a)
{
	size_t r = a / BLOCK_SIZE;
	if (a < p->image_lo || a >= p->stack_top || cow(c, a) <= 0 || p->region[r] == R_NONE || p->region[r] == R_BLOCK)
		return;
	if (regain_write(&table_of(p, r)[(a >> 12) & 511]))
		flush_one(p, a);
}

struct mm *mm_fork(struct mm *p, uintptr_t sp, uintptr_t tp)
{
	struct mm *c = mm_new(p->stack_top);
	if (!c)
		return 0;
	c->lo = p->lo, c->hi = p->hi, c->brk = p->brk, c->free_hint = p->free_hint;
	c->forked_from = p;
	if (alloc_maps(c))
		goto fail;
	memcpy(c->used, p->used, p->words * 8);
	memcpy(c->shared, p->shared, p->words * 8);
	memcpy(c->noaccess, p->noaccess, p->words * 8); /* the entries shared are not present either */
	c->noaccess_pages = p->noaccess_pages;
	for (size_t r = p->image_lo / BLOCK_SIZE; r < p->stack_top / BLOCK_SIZE; r++)
		if (p->region[r] != R_NONE && fork_region(c, p, r))
			goto fail;
	flush_if_needed(); /* the parent's pages are read-only now */
	copy_hot(c, p, sp);
	copy_hot(c, p, sp - PAGE_SIZE); /* its calls go on below */
	copy_hot(c, p, tp);
	if (p->exe)
		mm_set_exe(c, p->exe, p->exe_dev, p->exe_ino);
	c->layout = p->layout;
	c->stub_page = p->stub_page, c->stub_used = p->stub_used, c->stub_pages = p->stub_pages;
	return c;
fail:
	flush_if_needed();
	REPORT->denied_enomem++;
	mm_put(c);
	return 0;
}

struct mm *mm_create(uint64_t ram_size)
{
	struct mm *m = mm_new(ram_size);
	if (m)
		m->hi = ram_size - HUSK_STACK_SIZE;
	return m;
}

long mm_map_image(struct mm *m, uintptr_t a, size_t len)
{
	uintptr_t end = ALIGN_UP(a + len, PAGE_SIZE);
	a &= ~(PAGE_SIZE - 1);
	if (a < HUSK_PROGRAM_MIN || end > m->hi || end < a)
		return -ENOMEM;
	return back_range(m, a, end - a);
}

long mm_image_done(struct mm *m, uintptr_t end)
{
	m->lo = m->brk = ALIGN_UP(end, PAGE_SIZE);
	if (m->lo >= m->hi)
		return -ENOMEM;
	return alloc_maps(m);
}

/* m's pages shared copy-on-write that no other process uses any more made
 * writable again: when the parent or a child it shared them with goes (an
 * exit, an exec), m writes on without a fault for each (a shell's fork +
 * exec).  A stale read-only translation is only a fault that finds the
 * entry writable. */
static void take_back_writes(struct mm *m)
{
	for (size_t r = m->image_lo / BLOCK_SIZE; r < m->stack_top / BLOCK_SIZE; r++) {
		uint64_t *pde = pd_entry(m, r);
		if (m->region[r] == R_BLOCK) {
			if (!(*pde & PTE_WRITABLE) && !block_shared(block_base(*pde))) {
				*pde |= PTE_WRITABLE;
				changed(m);
			}
		} else if (m->region[r] != R_NONE) {
			uint64_t *pt = table_of(m, r);
			for (int i = 0; i < 512; i++)
				if (regain_write(&pt[i]))
					changed(m);
		}
	}
	flush_if_needed();
}

void mm_put(struct mm *m)
{
	if (!m || --m->refs > 0)
		return;
	if (m == mm_current)
		mm_switch(0);
	for (size_t r = HUSK_PROGRAM_MIN / BLOCK_SIZE; r < m->stack_top / BLOCK_SIZE; r++) {
		free_region(m, r);
		if (m->boot)
			*pd_entry(m, r) = 0; /* the VMM mapped every block to itself */
	}
	struct mm **link = &all;
	while (*link != m)
		link = &(*link)->next;
	*link = m->next;
	for (struct mm *o = all; o; o = o->next)
		if (o->forked_from == m || o == m->forked_from) {
			take_back_writes(o);
			if (o->forked_from == m)
				o->forked_from = 0;
		}
	kfree(m->used, m->words * 8);
	kfree(m->noaccess, m->words * 8);
	kfree(m->shared, m->words * 8);
	kfree(m->region, region_maps_size(m->stack_top));
	if (m->exe)
		kfree(m->exe, strlen(m->exe) + 1);
	if (!m->boot) {
		uint64_t *pml4 = phys_to_virt(m->root), pdpt = pml4[0] & PTE_ADDR;
		uint64_t *dir = phys_to_virt(pdpt);
		dir[NPD] = 0; /* the devices' directory is the boot root's */
		pml4[HUSK_DIRECT_MAP >> 39] = 0; /* the direct map's too */
		for (int i = 0; i < NPD; i++) {
			for (size_t r = 0; r < HUSK_PROGRAM_MIN / BLOCK_SIZE; r++)
				if (i == 0)
					m->pd[0][r] = 0; /* the kernel's entries */
			table_free(virt_to_phys(m->pd[i]));
		}
		table_free(pdpt);
		table_free(m->root);
	}
	kfree(m, sizeof *m);
}

void mm_switch(struct mm *m)
{
	uint64_t root = m ? m->root : HUSK_PML4; /* none: the kernel's part is in the boot root */
	uint64_t was = mm_current ? mm_current->root : HUSK_PML4;
	mm_current = m;
	if (root == was)
		return;
	flush_pending = 0;
	if (boot.pvm) {
		long nr = 0x1001; /* SET_CR3 */
		__asm__ volatile("int $0x1b" : "+a"(nr) : "b"(root) : "memory");
	} else {
		__asm__ volatile("mov %0, %%cr3" : : "r"(root) : "memory");
	}
}

int mm_fault(uintptr_t a)
{
	struct mm *m = mm_current;
	if (!m || a < m->hi + PAGE_SIZE || a >= m->stack_top || mm_page(m, a))
		return 0;
	a &= ~(PAGE_SIZE - 1);
	return back(m, a / BLOCK_SIZE, a, a + PAGE_SIZE) == 0;
}

/* Highest run of n free arena pages in regions without a block, or 0. */
static uintptr_t find_free_shared(struct mm *m, size_t n)
{
	size_t run = 0;
	for (size_t i = pg(m, m->hi); i-- > 0;) {
		uintptr_t a = m->lo + i * PAGE_SIZE;
		int kind = m->region[a / BLOCK_SIZE];
		run = bit_get(m->used, i) || kind == R_BLOCK || kind == R_SPLIT || a < ALIGN_UP(m->lo, BLOCK_SIZE) ? 0 : run + 1;
		if (run == n)
			return a;
	}
	return 0;
}

long mm_map_shared(size_t len, void *(*page)(void *ctx, uint64_t i), void *ctx)
{
	struct mm *m = mm_current;
	len = ALIGN_UP(len, PAGE_SIZE);
	uintptr_t a = len && len <= m->hi - m->lo ? find_free_shared(m, len / PAGE_SIZE) : 0;
	if (!a) {
		REPORT->denied_enomem++;
		return -ENOMEM;
	}
	bits_set(m->used, pg(m, a), len / PAGE_SIZE, 1);
	bits_set(m->shared, pg(m, a), len / PAGE_SIZE, 1);
	for (uint64_t i = 0; i < len / PAGE_SIZE; i++) {
		uintptr_t v = a + i * PAGE_SIZE;
		size_t r = v / BLOCK_SIZE;
		void *k = page ? page(ctx, i) : 0;
		int bad = page ? !k || pmem_share(virt_to_phys(k)) : back_as(m, r, v, v + PAGE_SIZE, 0);
		if (!bad && page) {
			bad = back_as(m, r, v, v, 0); /* the region's table */
			if (!bad)
				table_of(m, r)[(v >> 12) & 511] = virt_to_phys(k) | PTE_TABLE;
			else
				pmem_free(virt_to_phys(k), 1);
		}
		if (bad) {
			release(m, a, len);
			REPORT->denied_enomem++;
			return -ENOMEM;
		}
	}
	flush_if_needed(); /* the first program's region left its own block's mapping */
	return (long)a;
}

/* ---- the program's calls on the current address space --------------------- */

uintptr_t mem_stack_top(void)
{
	return mm_current->stack_top;
}

/* Whether [p, p+len) is the program's memory: its image, what its arena
 * backs, its stack off the guard page (a stack page not yet touched is
 * backed now).  Below HUSK_PROGRAM_MIN is the kernel's: a system call must
 * not write there, as Linux refuses kernel addresses.  Syscalls check user
 * pointers with it and answer EFAULT. */
int mm_is_program(uintptr_t a)
{
	const struct mm *m = mm_current;
	return m && a >= m->image_lo && a < m->stack_top;
}

int user_ok(const void *p, size_t len)
{
	const struct mm *m = mm_current;
	uintptr_t a = (uintptr_t)p, end = a + len, guard = m ? m->hi : 0;
	if (!m || end < a || a < m->image_lo || end > m->stack_top || (a < guard + PAGE_SIZE && end > guard))
		return 0;
	for (uintptr_t x = a; x < end;) {
		size_t r = x / BLOCK_SIZE;
		uintptr_t next = region_start(r + 1) < end ? region_start(r + 1) : end;
		if (m->region[r] == R_NONE && !(x >= guard && mm_fault(x)))
			return 0;
		if (m->region[r] == R_PAGES) {
			const uint64_t *pt = table_of(m, r);
			for (uintptr_t q = x & ~(PAGE_SIZE - 1); q < next; q += PAGE_SIZE)
				if (!pt[(q >> 12) & 511] && !mm_fault(q))
					return 0;
		}
		x = next;
	}
	if (m->noaccess_pages && end > m->lo && a < m->hi) { /* PROT_NONE pages */
		uintptr_t from = a < m->lo ? m->lo : a, to = end > m->hi ? m->hi : end;
		for (size_t i = pg(m, from), last = pg(m, to + PAGE_SIZE - 1); i < last; i++)
			if (bit_get(m->noaccess, i))
				return 0;
	}
	return 1;
}

long mem_brk(uintptr_t want)
{
	struct mm *m = mm_current;
	if (want < m->lo || want > m->hi)
		return m->brk;
	uintptr_t old_end = ALIGN_UP(m->brk, PAGE_SIZE), new_end = ALIGN_UP(want, PAGE_SIZE);
	if (new_end > old_end) {
		if (!bits_clear(m->used, pg(m, old_end), pg(m, new_end) - pg(m, old_end)) ||
		    take(m, old_end, new_end - old_end))
			return m->brk;
	} else if (new_end < old_end) {
		release(m, new_end, old_end - new_end);
	}
	m->brk = want;
	return m->brk;
}

/* Lowest run of n free pages, or 0.  A word all taken or all free is one
 * step: a program refused memory tends to ask again and again, and each
 * search that failed walked 3 GiB of map bit by bit. */
static uintptr_t find_free(struct mm *m, size_t n)
{
	size_t total = pg(m, m->hi), run = 0;
	for (size_t i = m->free_hint; i < total; i++) {
		uint64_t w = m->used[i / 64];
		if (i % 64 == 0 && i + 64 <= total && (w == ~0ull || !w)) {
			if (w) {
				run = 0;
				if (i == m->free_hint)
					m->free_hint = i + 64;
			} else if ((run += 64) >= n) {
				return m->lo + (i + 64 - run) * PAGE_SIZE;
			}
			i += 63;
			continue;
		}
		if (bit_get(m->used, i)) {
			run = 0;
			if (i == m->free_hint)
				m->free_hint = i + 1;
			continue;
		}
		if (++run == n)
			return m->lo + (i + 1 - n) * PAGE_SIZE;
	}
	return 0;
}

long mem_mmap(uintptr_t addr, size_t len, int prot, int flags)
{
	struct mm *m = mm_current;
	if (!len || (addr & (PAGE_SIZE - 1)) || !(flags & (MAP_SHARED | MAP_PRIVATE)))
		return -EINVAL;
	if (!(flags & MAP_ANONYMOUS))
		return -ENODEV; /* no files to map */
	if (len > m->hi - m->lo)
		return -ENOMEM;
	len = ALIGN_UP(len, PAGE_SIZE);
	size_t n = len / PAGE_SIZE;
	if ((flags & MAP_SHARED) && !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))) {
		long a = mm_map_shared(len, 0, 0);
		if (a >= 0 && prot == PROT_NONE && set_access(m, (uintptr_t)a, len, 0)) {
			release(m, (uintptr_t)a, len);
			return -ENOMEM;
		}
		return a;
	}
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (addr < m->lo || addr > m->hi - len)
			return -ENOMEM;
		if ((flags & MAP_FIXED_NOREPLACE) && !bits_clear(m->used, pg(m, addr), n))
			return -EEXIST;
		release(m, addr, len); /* MAP_FIXED: what was there goes, zeroed */
	} else {
		addr = find_free(m, n);
		if (!addr) {
			REPORT->denied_enomem++;
			return -ENOMEM;
		}
	}
	if (prot == PROT_NONE) { /* a reservation (glibc's 64 MiB arenas, guard pages): memory comes with mprotect */
		for (size_t r = addr / BLOCK_SIZE; r <= (addr + len - 1) / BLOCK_SIZE; r++)
			if (m->region[r] == R_NONE)
				set_pde(m, r, 0); /* the first program's: the VMM's mapping of the block there goes */
		bits_set(m->used, pg(m, addr), n, 1);
		if (set_access(m, addr, len, 0)) { /* pages of a block or pages kept there: not present */
			release(m, addr, len);
			return -ENOMEM;
		}
		return (long)addr;
	}
	if (take(m, addr, len)) {
		release(m, addr, len);
		REPORT->denied_enomem++;
		return -ENOMEM;
	}
	return (long)addr;
}

long mem_munmap(uintptr_t addr, size_t len)
{
	struct mm *m = mm_current;
	if (!len || (addr & (PAGE_SIZE - 1)) || addr + len < addr)
		return -EINVAL;
	uintptr_t end = ALIGN_UP(addr + len, PAGE_SIZE);
	if (addr < m->lo)
		addr = m->lo;
	if (end > m->hi)
		end = m->hi;
	if (addr < end)
		release(m, addr, end - addr);
	return 0;
}

long mem_mprotect(uintptr_t addr, size_t len, int prot)
{
	struct mm *m = mm_current;
	if ((addr & (PAGE_SIZE - 1)) || addr + len < addr)
		return -EINVAL;
	uintptr_t end = ALIGN_UP(addr + len, PAGE_SIZE);
	if (!len)
		return 0;
	if (addr < m->image_lo || end > m->stack_top)
		return -ENOMEM; /* not the program's memory */
	if (addr < m->lo || end > m->hi)
		return 0; /* the image, the stack: not enforced */
	for (size_t i = pg(m, addr); i < pg(m, end); i++)
		if (!bit_get(m->used, i))
			return -ENOMEM; /* as Linux: part of the range is not mapped */
	if (prot != PROT_NONE && m->noaccess_pages && back_reserved(m, addr, end)) {
		REPORT->denied_enomem++;
		return -ENOMEM;
	}
	return set_access(m, addr, end - addr, prot != PROT_NONE);
}

long mem_msync(uintptr_t addr, size_t len, int flags)
{
	struct mm *m = mm_current;
	if ((addr & (PAGE_SIZE - 1)) || (flags & ~(MS_ASYNC | MS_SYNC | MS_INVALIDATE)) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)) || addr + len < addr)
		return -EINVAL;
	uintptr_t end = ALIGN_UP(addr + len, PAGE_SIZE);
	if (end == addr)
		return 0;
	if (addr < m->lo || end > m->hi)
		return addr >= m->image_lo && end <= m->stack_top ? 0 : -ENOMEM; /* the image, the stack */
	for (size_t i = pg(m, addr); i < pg(m, end); i++)
		if (!bit_get(m->used, i))
			return -ENOMEM; /* as Linux: part of the range is not mapped */
	return 0;
}

uint64_t mem_free_bytes(void)
{
	return pmem_free_bytes();
}

uint64_t mem_total_bytes(void)
{
	return pmem_total_bytes();
}

void mem_release_boot_data(uintptr_t a, size_t len)
{
	release(mm_current, a, ALIGN_UP(len, PAGE_SIZE));
}

/* ---- what /proc shows (fs/procfs.c) ----------------------------------------- */

void mm_set_exe(struct mm *m, const char *path, int dev, uint32_t ino)
{
	size_t n = strlen(path) + 1;
	if (m->exe)
		kfree(m->exe, strlen(m->exe) + 1);
	m->exe = kalloc(n);
	if (m->exe)
		memcpy(m->exe, path, n);
	m->exe_dev = dev, m->exe_ino = ino;
}

/* A stack page the program touched: its accessed bit, as fork judges it. */
static int stack_touched(const struct mm *m, uintptr_t a)
{
	size_t r = a / BLOCK_SIZE;
	if (m->region[r] != R_PAGES)
		return m->region[r] != R_NONE;
	return (table_of(m, r)[(a >> 12) & 511] & PTE_ACCESSED) != 0;
}

void mm_usage(const struct mm *m, struct mm_usage *u)
{
	*u = (struct mm_usage){ .image = m->lo - m->image_lo };
	for (size_t w = 0; w < m->words; w++) {
		u->arena += (uint64_t)__builtin_popcountll(m->used[w]) * PAGE_SIZE;
		u->shared += (uint64_t)__builtin_popcountll(m->shared[w]) * PAGE_SIZE;
	}
	for (uintptr_t a = m->hi + PAGE_SIZE; a < m->stack_top; a += PAGE_SIZE)
		u->stack += stack_touched(m, a) ? PAGE_SIZE : 0;
}

static int page_kind(const struct mm *m, size_t i)
{
	if (bit_get(m->noaccess, i))
		return AREA_NONE;
	if (bit_get(m->shared, i))
		return AREA_SHARED;
	return m->lo + i * PAGE_SIZE < ALIGN_UP(m->brk, PAGE_SIZE) ? AREA_HEAP : AREA_PRIVATE;
}

int mm_area(const struct mm *m, uintptr_t a, struct mm_area *out)
{
	if (a < m->lo) {
		*out = (struct mm_area){ m->image_lo, m->lo, AREA_IMAGE };
		return 1;
	}
	size_t n = pg(m, m->hi);
	for (size_t i = a < m->hi ? pg(m, a) : n; i < n; i++) {
		if (i % 64 == 0 && !m->used[i / 64]) {
			i += 63; /* a word of free pages */
			continue;
		}
		if (!bit_get(m->used, i))
			continue;
		int kind = page_kind(m, i);
		size_t j = i + 1;
		while (j < n && bit_get(m->used, j) && page_kind(m, j) == kind)
			j++;
		*out = (struct mm_area){ m->lo + i * PAGE_SIZE, m->lo + j * PAGE_SIZE, kind };
		return 1;
	}
	if (a >= m->stack_top)
		return 0;
	*out = (struct mm_area){ m->hi + PAGE_SIZE, m->stack_top, AREA_STACK };
	return 1;
}
