/* SPDX-License-Identifier: GPL-2.0-only */
/* A task's FPU and vector registers.  The kernel itself never uses them
 * (-mgeneral-regs-only), so a task's are saved only when another task
 * takes the CPU, and in a signal frame.  What must be saved is what the
 * CPU lets a program use, XCR0, not what the CPUID says: under kvm_pvm a
 * program runs with the host's XCR0 (on an AMD host with AVX-512 the guest's
 * CPUID is the host's too, and glibc, numpy and OpenBLAS use AVX-512), and
 * with fxsave alone one thread's YMM/ZMM upper halves and mask registers
 * leaked into another's: numpy's multithreaded FFT came out wrong. */
#include <string.h>
#include "arch/cpu.h"
#include "arch/fpu.h"
#include "kernel.h"

/* XSAVE state components: x87, SSE, AVX, AVX-512 (opmask, ZMM_Hi256,
 * Hi16_ZMM), PKRU.  AMX's are left out: a program asks Linux for them first
 * (arch_prctl), which this kernel refuses. */
#define XFEATURES_KNOWN 0x2e7ull
#define XFEATURES_LEGACY 3ull /* x87 and SSE: what the fxsave part holds */
#define XSAVE_HEADER FPU_LEGACY_SIZE
#define XSAVE_HEADER_SIZE 64
#define MXCSR_AT 24
#define MXCSR_DEFAULT 0x1f80u
#define FCW_DEFAULT 0x37fu

/* Linux's signal frame marks (struct _fpx_sw_bytes in the fxsave part's
 * bytes 464-511, which neither fxsave nor XSAVE writes; MAGIC2 after the
 * area). */
#define SW_BYTES_AT 464
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
struct sw_bytes {
	uint32_t magic1, extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size, padding[7];
};
_Static_assert(sizeof(struct sw_bytes) == FPU_LEGACY_SIZE - SW_BYTES_AT, "Linux's _fpx_sw_bytes");

static uint64_t saved; /* the components XSAVE saves; 0: fxsave */
static size_t area_size = FPU_LEGACY_SIZE;
static uint8_t init_area[FPU_AREA_MAX] __attribute__((aligned(64)));

void fpu_init(void)
{
	uint32_t a, b, c, d;
	cpuid(1, &a, &b, &c, &d);
	/* xgetbv faults unless CR4.OSXSAVE: the guest's own CR4 under hardware
	 * KVM (the VMM leaves it off: fxsave suffices), the host's under
	 * kvm_pvm, whatever this CPUID says there. */
	if (!(c >> 26 & 1) || !((c >> 27 & 1) || boot.pvm))
		return;
	uint64_t mask = xgetbv0() & XFEATURES_KNOWN;
	if ((mask & XFEATURES_LEGACY) != XFEATURES_LEGACY)
		return;
	size_t size = XSAVE_HEADER + XSAVE_HEADER_SIZE;
	for (uint32_t i = 2; i < 64; i++) {
		if (!(mask >> i & 1))
			continue;
		cpuid_count(0xd, i, &a, &b, &c, &d); /* eax: its size, ebx: its offset (standard form) */
		if ((size_t)b + a > FPU_AREA_MAX)
			panic("XSAVE component %u ends at %u, beyond the %u bytes a task keeps", i, a + b, FPU_AREA_MAX);
		if ((size_t)b + a > size)
			size = (size_t)b + a;
	}
	saved = mask;
	area_size = size;
	uint16_t fcw = FCW_DEFAULT;
	uint32_t mxcsr = MXCSR_DEFAULT;
	memcpy(init_area, &fcw, sizeof fcw);
	memcpy(init_area + MXCSR_AT, &mxcsr, sizeof mxcsr); /* XSTATE_BV 0: every component at its initial state */
}

void fpu_save(void *area)
{
	if (saved)
		__asm__ volatile("xsave64 (%0)" : : "r"(area), "a"((uint32_t)saved), "d"((uint32_t)(saved >> 32))
				 : "memory");
	else
		__asm__ volatile("fxsave64 (%0)" : : "r"(area) : "memory");
}

void fpu_load(const void *area)
{
	if (saved)
		__asm__ volatile("xrstor64 (%0)" : : "r"(area), "a"((uint32_t)saved), "d"((uint32_t)(saved >> 32))
				 : "memory");
	else
		__asm__ volatile("fxrstor64 (%0)" : : "r"(area) : "memory");
}

void fpu_reset(void)
{
	if (saved) {
		fpu_load(init_area);
		return;
	}
	uint32_t mxcsr = MXCSR_DEFAULT;
	__asm__ volatile("fninit; ldmxcsr %0" : : "m"(mxcsr));
}

size_t fpu_frame_size(void)
{
	return area_size + (saved ? sizeof(uint32_t) : 0);
}

void fpu_save_frame(void *frame)
{
	uint8_t *f = frame;
	if (!saved) {
		fpu_save(f);
		return;
	}
	memset(f + XSAVE_HEADER, 0, XSAVE_HEADER_SIZE); /* XSAVE writes XSTATE_BV alone */
	fpu_save(f);
	struct sw_bytes sw = { FP_XSTATE_MAGIC1, (uint32_t)area_size + sizeof(uint32_t), saved, (uint32_t)area_size,
			       { 0 } };
	memcpy(f + SW_BYTES_AT, &sw, sizeof sw);
	uint32_t magic2 = FP_XSTATE_MAGIC2;
	memcpy(f + area_size, &magic2, sizeof magic2);
}

/* Whether f, of the program's memory, is an XSAVE frame as fpu_save_frame
 * writes it (sw: its marks, read already). */
static int frame_marked(const uint8_t *f, const struct sw_bytes *sw)
{
	uint32_t magic2;
	if (sw->magic1 != FP_XSTATE_MAGIC1 || sw->xstate_size != area_size ||
	    sw->extended_size != area_size + sizeof magic2 || !user_ok(f, area_size + sizeof magic2))
		return 0;
	memcpy(&magic2, f + area_size, sizeof magic2);
	return magic2 == FP_XSTATE_MAGIC2;
}

int fpu_frame_take(void *area, uint64_t frame)
{
	uint8_t *a = area;
	const uint8_t *f = (const uint8_t *)frame;
	if (!user_ok(f, FPU_LEGACY_SIZE))
		return -1;
	memcpy(a, f, FPU_LEGACY_SIZE);
	uint32_t mxcsr;
	memcpy(&mxcsr, a + MXCSR_AT, sizeof mxcsr);
	mxcsr &= 0xffff; /* reserved bits would fault in the load */
	memcpy(a + MXCSR_AT, &mxcsr, sizeof mxcsr);
	if (!saved)
		return 0;
	/* With Linux's marks the whole area (what the handler may have
	 * changed), else the fxsave part alone and the rest at its initial
	 * state, as Linux.  A header Linux refuses is refused (a component
	 * not enabled, the compacted form, a reserved bit): xrstor would fault
	 * on it; the header is written anew either way. */
	struct sw_bytes sw;
	memcpy(&sw, f + SW_BYTES_AT, sizeof sw);
	uint64_t present = XFEATURES_LEGACY;
	if (frame_marked(f, &sw)) {
		uint64_t header[XSAVE_HEADER_SIZE / 8];
		memcpy(header, f + XSAVE_HEADER, sizeof header);
		for (size_t i = 1; i < XSAVE_HEADER_SIZE / 8; i++)
			if (header[i])
				return -1;
		if (header[0] & ~saved)
			return -1;
		memcpy(a + XSAVE_HEADER, f + XSAVE_HEADER, area_size - XSAVE_HEADER);
		present = header[0] & sw.xfeatures;
	}
	memset(a + XSAVE_HEADER, 0, XSAVE_HEADER_SIZE);
	memcpy(a + XSAVE_HEADER, &present, sizeof present);
	return 0;
}
