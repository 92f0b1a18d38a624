/* SPDX-License-Identifier: GPL-2.0-only */
/* x86-64 instructions the kernel needs, as inline functions. */
#ifndef GUEST_CPU_H
#define GUEST_CPU_H
#include <stdint.h>

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

/* MMIO: plain 32-bit moves, which KVM's instruction emulator decodes. */
static inline uint32_t mmio_read32(uintptr_t a)
{
	uint32_t v;
	__asm__ volatile("movl (%1), %0" : "=r"(v) : "r"(a) : "memory");
	return v;
}

static inline void mmio_write32(uintptr_t a, uint32_t v)
{
	__asm__ volatile("movl %0, (%1)" : : "r"(v), "r"(a) : "memory");
}

static inline void cpuid_count(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

static inline void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	cpuid_count(leaf, 0, a, b, c, d);
}

/* XCR0: the state components the CPU lets a program use (valid only where
 * CPUID.1:ECX.XSAVE is set). */
static inline uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

#define MSR_FS_BASE 0xc0000100u

#endif
