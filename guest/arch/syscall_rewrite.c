/* SPDX-License-Identifier: GPL-2.0-only */
/* Cheap system calls for programs that make them with the `syscall`
 * instruction (glibc, and so Debian's programs): on kvm_pvm the instruction
 * costs ~30 us (a round trip through the hypervisor), the fast entry a few
 * nanoseconds.  The first time a site traps, it is made a jump to a stub in
 * a page of the process's own, one of two ways:
 *   mov $NR, %eax; syscall (b8 imm32 0f 05, rax == NR: 436 of glibc 2.36's
 *     526 sites): the mov's five bytes become `jmp stub`;
 *   any other: the `syscall`'s two bytes become a short jump to the
 *     alignment padding after the `ret` that follows it (decoded forward
 *     from the instruction after the `syscall`: what is known to be code),
 *     five bytes of which become `jmp stub` (glibc's read, xor %eax, %eax).
 * The stub checks that rax is the number seen when the site was rewritten,
 * steps below the red zone (the `syscall` instruction touches no stack; a
 * leaf function may keep data there), saves what a call clobbers, calls
 * syscall_abi_entry (entry.S: the fast entry with the instruction's
 * argument registers), restores, steps back and jumps to the instruction
 * after the site; another number takes a real `syscall` in the stub.  The
 * stub's pushes are the program's own (a first touch of a stack page is
 * its fault, handled as any).  Nothing a thread may be stopped at changes
 * meaning: after the first way the site's `syscall` is still there, and a
 * thread stopped before a rewritten `syscall` takes the jump.
 * This is zpoline's and lazypoline's idea (rewrite what is known to be a
 * system call once it has run), with jumps instead of `call *%rax`: no page
 * at address 0 and no return address pushed into the red zone.
 * Left alone: hardware KVM (boot.pvm 0: the instruction is native there);
 * numbers that return twice or on another stack (fork, vfork, clone,
 * clone3) or read their frame at rsp (rt_sigreturn); a site in shared
 * memory; one with no padding in reach; a stub out of a rel32 jump's reach.
 * A process's stubs are inherited by fork (its memory is) and gone at exec
 * (its address space is). */
#include <string.h>
#include "arch/regs.h"
#include "kernel.h"
#include "linux_abi.h"
#include "linux_syscall.h"
#include "mm/mm.h"

#define STUB_SIZE 80
#define STUB_FIRST 64       /* the page starts with syscall_abi_entry's address */
#define STUB_PAGES_MAX 64   /* ~3,000 sites a process */
#define PAD_REACH 127       /* how far after a `syscall` its padding may be: a rel8 jump */

void syscall_abi_entry(void);

static int rewritable(uint64_t nr)
{
	return nr < HUSK_NSYSCALLS && nr != SYS_fork && nr != SYS_vfork && nr != SYS_clone && nr != SYS_clone3 &&
	       nr != SYS_rt_sigreturn;
}

static int fits_rel32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

static void put32(uint8_t *p, int64_t v)
{
	int32_t w = (int32_t)v;
	memcpy(p, &w, 4);
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

/* Length of the NOP at p (the assembler's alignment padding: 90 or
 * 0f 1f /0 with its operand, behind any 66 and 2e prefixes), or 0. */
static size_t nop_length(const uint8_t *p)
{
	static const uint8_t base[][8] = {
		{ 0x0f, 0x1f, 0x00 }, { 0x0f, 0x1f, 0x40, 0x00 }, { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 }, { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};
	static const size_t len[] = { 3, 4, 5, 7, 8 };
	size_t n = 0;
	while (n < 6 && p[n] == 0x66)
		n++;
	if (p[n] == 0x2e)
		n++;
	if (p[n] == 0x90)
		return n + 1;
	for (size_t i = 0; i < sizeof len / sizeof len[0]; i++)
		if (!memcmp(p + n, base[i], len[i]))
			return n + len[i];
	return 0;
}

/* Length of the instruction at p if it is one of the plain ones that follow
 * a `syscall` in libc wrappers (compare, test, move, arithmetic, jumps over
 * the error path, a call), 0 otherwise; *stop: it ends the straight line
 * (1: a `ret`; 2: anything else that does not fall through). */
static size_t insn_length(const uint8_t *p, int *stop)
{
	size_t n = 0;
	*stop = 0;
	if (p[n] == 0x64 || p[n] == 0x65 || p[n] == 0x66) /* fs, gs, operand size */
		n++;
	if (p[n] >= 0x40 && p[n] <= 0x4f) /* REX */
		n++;
	uint8_t op = p[n++];
	int modrm = 0, imm = 0;
	switch (op) {
	case 0xc3: *stop = 1; return n;
	case 0x90: return n;
	case 0x3d: case 0x05: case 0x25: case 0x2d: case 0xa9: return n + 4;     /* op eax, imm32 */
	case 0x70 ... 0x7f: return n + 1;                                          /* jcc rel8 */
	case 0xb8 ... 0xbf: return n + 4;                                          /* mov imm32 */
	case 0xe8: return n + 4;                                                   /* call rel32 */
	case 0xeb: case 0xe9: case 0xff: *stop = 2; return 0;                      /* jmp: no straight line */
	case 0x0f:
		if (p[n] >= 0x80 && p[n] <= 0x8f) /* jcc rel32 */
			return n + 5;
		return 0;
	case 0x01: case 0x03: case 0x09: case 0x0b: case 0x21: case 0x23: case 0x29: case 0x2b:
	case 0x31: case 0x33: case 0x39: case 0x3b: case 0x85: case 0x89: case 0x8b: case 0x8d:
		modrm = 1; break;
	case 0x83: case 0xc1: modrm = 1, imm = 1; break;
	case 0x81: case 0xc7: modrm = 1, imm = 4; break;
	case 0xf7:
		if (((p[n] >> 3) & 7) != 2 && ((p[n] >> 3) & 7) != 3) /* not, neg; test has an immediate */
			return 0;
		modrm = 1; break;
	default: return 0;
	}
	uint8_t m = p[n++], mod = m >> 6, rm = m & 7;
	if (mod != 3 && rm == 4) /* SIB */
		rm = p[n++] & 7, n += mod == 0 && rm == 5 ? 4 : 0;
	else if (mod == 0 && rm == 5) /* rip-relative */
		n += 4;
	n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return modrm ? n + imm : 0;
}

/* Five bytes of padding a rel8 jump from from reaches: decoding forward
 * from from (the instruction after a `syscall`) to the `ret` that ends the
 * straight line, the NOPs after it (never executed: nothing falls through a
 * `ret`, and a jump goes to the aligned label after them).  0: none. */
static uintptr_t find_padding(uintptr_t from)
{
	uint8_t code[PAD_REACH + 16];
	if (!user_ok((void *)from, sizeof code))
		return 0;
	memcpy(code, (void *)from, sizeof code);
	size_t i = 0;
	for (int stop = 0; !stop && i < PAD_REACH;) {
		size_t k = insn_length(code + i, &stop);
		if (!k)
			return 0;
		i += k;
	}
	size_t n = 0, k;
	while (n < 5 && i + n < PAD_REACH && (k = nop_length(code + i + n)))
		n += k;
	return n >= 5 && i + 5 <= PAD_REACH ? from + i : 0;
}

static size_t put(uint8_t *s, size_t o, const uint8_t *b, size_t n)
{
	memcpy(s + o, b, n);
	return o + n;
}

/* Writes the stub: the replayed instruction, the number check, the fast
 * call (registers saved and a6 pushed here, in the program's code, below
 * the red zone), the way back to back; and the slow way for another
 * number. */
static void write_stub(uintptr_t stub, const uint8_t *replay, size_t rn, uint32_t nr, uintptr_t back)
{
	static const uint8_t below_red_zone[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 };      /* lea -128(%rsp), %rsp */
	static const uint8_t save[] = { 0x57, 0x56, 0x52, 0x41, 0x50, 0x41, 0x51, 0x41, 0x52, /* rdi rsi rdx r8 r9 r10 */
					0x41, 0x51 };                                   /* a6: r9 */
	static const uint8_t restore[] = { 0x48, 0x8d, 0x64, 0x24, 0x08,               /* lea 8(%rsp), %rsp: a6 */
					   0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, 0x5a, 0x5e, 0x5f,
					   0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0 };     /* lea 128(%rsp), %rsp */
	uint8_t s[STUB_SIZE];
	memset(s, 0xcc, sizeof s);
	size_t o = put(s, 0, replay, rn);
	s[o++] = 0x3d, put32(s + o, nr), o += 4;                        /* cmp $nr, %eax */
	size_t jne = o;
	s[o++] = 0x75, o++;                                             /* jne slow */
	o = put(s, o, below_red_zone, sizeof below_red_zone);
	o = put(s, o, save, sizeof save);
	s[o++] = 0xff, s[o++] = 0x15;                                   /* call *page(%rip) */
	put32(s + o, (int64_t)(stub & ~(uintptr_t)(PAGE_SIZE - 1)) - (int64_t)(stub + o + 4)), o += 4;
	o = put(s, o, restore, sizeof restore);
	s[o++] = 0xe9, put32(s + o, (int64_t)back - (int64_t)(stub + o + 4)), o += 4; /* jmp back */
	s[jne + 1] = (uint8_t)(o - (jne + 2));
	s[o++] = 0x0f, s[o++] = 0x05;                                   /* slow: syscall */
	s[o++] = 0xe9, put32(s + o, (int64_t)back - (int64_t)(stub + o + 4)), o += 4; /* jmp back */
	memcpy((void *)stub, s, sizeof s);
}

void syscall_rewrite(const struct user_regs *r)
{
	struct mm *m = mm_current;
	uintptr_t end = r->rip; /* after the `syscall` */
	uint8_t code[7];
	if (!boot.pvm || !rewritable(r->rax) || end < HUSK_PROGRAM_MIN + 7 || !user_ok((void *)(end - 7), 7) ||
	    mm_is_shared(end - 7) || mm_is_shared(end - 1))
		return;
	memcpy(code, (void *)(end - 7), 7);
	uint32_t imm;
	memcpy(&imm, code + 1, 4);
	int mov = code[0] == 0xb8 && imm == r->rax; /* mov $NR, %eax just before */
	uintptr_t pad = mov ? 0 : find_padding(end), from = mov ? end - 7 : pad;
	if (!from || mm_is_shared(from) || mm_is_shared(from + 4))
		return;
	uintptr_t stub = next_stub(m);
	if (!stub || !fits_rel32((int64_t)stub - (int64_t)(from + 5)) || !fits_rel32((int64_t)end - (int64_t)stub) ||
	    !user_write_ok((void *)stub, STUB_SIZE) || !user_write_ok((void *)from, 5) ||
	    (pad && !user_write_ok((void *)(end - 2), 2)))
		return;
	write_stub(stub, code, mov ? 5 : 0, (uint32_t)r->rax, end);
	m->stub_used += STUB_SIZE;
	uint8_t jmp[5] = { 0xe9 };
	put32(jmp + 1, (int64_t)stub - (int64_t)(from + 5));
	/* one vCPU, the kernel not preempted: no thread sees half of it */
	memcpy((void *)from, jmp, 5);
	if (pad)
		memcpy((void *)(end - 2), (uint8_t[]){ 0xeb, (uint8_t)(pad - end) }, 2);
	REPORT->syscall_sites++;
}
