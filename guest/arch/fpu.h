/* SPDX-License-Identifier: GPL-2.0-only */
/* A task's FPU and vector registers while it is off the CPU, and in a
 * signal frame: XSAVE of every state component the CPU has enabled, else
 * fxsave (fpu.c). */
#ifndef GUEST_FPU_H
#define GUEST_FPU_H
#include <stddef.h>
#include <stdint.h>

/* Room for x87, SSE, AVX, AVX-512 and PKRU in XSAVE's standard form (2696
 * bytes); a component beyond it (AMX) is not enabled for programs. */
#define FPU_AREA_MAX 3072
#define FPU_LEGACY_SIZE 512 /* the fxsave area, also XSAVE's first part */

/* Boot: which components to save (XCR0, read with xgetbv), and how much. */
void fpu_init(void);
/* area: 64-byte aligned, FPU_AREA_MAX bytes, its XSAVE header zeroed once. */
void fpu_save(void *area);
void fpu_load(const void *area);
/* The state a program starts with (exec). */
void fpu_reset(void);

/* A signal frame's FPU part (Linux's layout): the area, then with XSAVE
 * the 4-byte end marker; fpu_frame_size() bytes. */
size_t fpu_frame_size(void);
void fpu_save_frame(void *frame);
/* The frame's state, fit to load, into area (kernel memory): a frame the
 * program changed or built never makes the load fault.  -1: it is not
 * readable program memory, or its XSAVE header is one Linux refuses. */
int fpu_frame_take(void *area, uint64_t frame);
#endif
