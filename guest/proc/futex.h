/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_FUTEX_H
#define GUEST_FUTEX_H
#include <stdint.h>

long sys_futex(uint32_t *a, long op, uint32_t val, const void *timeout, uint32_t *a2, uint32_t val3);
/* Wakes at most n waiters of the futex word at a: how many woke. */
long futex_wake(const uint32_t *a, long n);
#endif
