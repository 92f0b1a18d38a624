/* SPDX-License-Identifier: GPL-2.0-only */
/* Cheap system calls for programs that make them with the `syscall`
 * instruction (glibc, and so Debian's programs): on kvm_pvm the instruction
 * costs ~30 us (a round trip through the hypervisor), the fast entry a few
 * nanoseconds.  The first time a site
 *     b8 imm32    mov $NR, %eax
 *     0f 05       syscall
 * (436 of glibc 2.36's 526 `syscall` sites) traps with rax == NR, its first
 * five bytes become `jmp stub`.  The stub, in a page of the process's own,
 * steps below the red zone (the `syscall` instruction touches no stack; a
 * leaf function may keep data there), sets eax, calls syscall_abi_entry
 * (entry.S: the fast entry, every register kept as by the instruction),
 * steps back and jumps to the instruction after the site.  The `syscall` at
 * site + 5 stays: a jump straight to it still works, the slow way.
 * This is zpoline's and lazypoline's idea (rewrite what is known to be a
 * system call once it has run), with a jump instead of `call *%rax`: no
 * page at address 0 and no return address pushed into the red zone.
 * Left alone: hardware KVM (boot.pvm 0: the instruction is native there);
 * the calls that return twice or on another stack (fork, vfork, clone,
 * clone3) and rt_sigreturn (its frame is at rsp); a site in shared memory;
 * a stub out of a rel32 jump's reach.  A process's stubs are inherited by
 * fork (its memory is) and gone at exec (its address space is). */
#include <string.h>
#include "arch/regs.h"
#include "kernel.h"
#include "linux_abi.h"
#include "linux_syscall.h"
#include "mm/mm.h"

#define STUB_SIZE 32
#define STUB_FIRST 32       /* the page starts with syscall_abi_entry's address */
#define STUB_PAGES_MAX 64   /* ~8,000 sites a process */

void syscall_abi_entry(void);

static int rewritable(long nr)
{
	return nr != SYS_fork && nr != SYS_vfork && nr != SYS_clone && nr != SYS_clone3 && nr != SYS_rt_sigreturn;
}

static int fits_rel32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

/* The next stub's address, a new page of stubs taken when the last one is
 * full (0: no room, or the limit). */
static uintptr_t next_stub(struct mm *m)
{
	if (!m->stub_page || m->stub_used + STUB_SIZE > PAGE_SIZE) {
		if (m->stub_pages == STUB_PAGES_MAX)
			return 0;
		long a = mem_mmap(0, PAGE_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS);
		if (a < 0 || !user_write_ok((void *)a, PAGE_SIZE))
			return 0;
		*(uint64_t *)a = (uintptr_t)syscall_abi_entry;
		m->stub_page = (uintptr_t)a, m->stub_used = STUB_FIRST, m->stub_pages++;
	}
	return m->stub_page + m->stub_used;
}

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

void syscall_rewrite(const struct user_regs *r)
{
	struct mm *m = mm_current;
	uintptr_t site = r->rip - 7;
	uint8_t code[7];
	if (!boot.pvm || !rewritable((long)r->rax) || r->rip < HUSK_PROGRAM_MIN + 7 || !user_ok((void *)site, 7) ||
	    mm_is_shared(site) || mm_is_shared(site + 6))
		return;
	memcpy(code, (void *)site, 7);
	uint32_t imm;
	memcpy(&imm, code + 1, 4);
	if (code[0] != 0xb8 || imm != r->rax || code[5] != 0x0f || code[6] != 0x05)
		return;
	uintptr_t stub = next_stub(m);
	if (!stub || !fits_rel32((int64_t)stub - (int64_t)(site + 5)) ||
	    !fits_rel32((int64_t)(site + 7) - (int64_t)(stub + 29)) || !user_write_ok((void *)stub, STUB_SIZE) ||
	    !user_write_ok((void *)site, 5))
		return;
	uint8_t s[STUB_SIZE] = {
		0x48, 0x8d, 0x64, 0x24, 0x80,                   /* lea -128(%rsp), %rsp */
		0xb8, 0, 0, 0, 0,                               /* mov $nr, %eax */
		0xff, 0x15, 0, 0, 0, 0,                         /* call *page(%rip): syscall_abi_entry */
		0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00, /* lea 128(%rsp), %rsp */
		0xe9, 0, 0, 0, 0,                               /* jmp site + 7 */
		0xcc, 0xcc, 0xcc,
	};
	put32(s + 6, (int32_t)imm);
	put32(s + 12, (int32_t)((int64_t)(stub & ~(uintptr_t)(PAGE_SIZE - 1)) - (int64_t)(stub + 16)));
	put32(s + 25, (int32_t)((int64_t)(site + 7) - (int64_t)(stub + 29)));
	memcpy((void *)stub, s, STUB_SIZE);
	m->stub_used += STUB_SIZE;
	uint8_t jmp[5] = { 0xe9 };
	put32(jmp + 1, (int32_t)((int64_t)stub - (int64_t)(site + 5)));
	memcpy((void *)site, jmp, 5); /* one vCPU, the kernel not preempted: no thread sees half of it */
	REPORT->syscall_sites++;
}
