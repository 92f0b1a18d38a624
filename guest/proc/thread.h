/* SPDX-License-Identifier: GPL-2.0-only */
/* Threads: clone, their exit, and the calls that name them. */
#ifndef GUEST_THREAD_H
#define GUEST_THREAD_H
#include <stddef.h>
#include <stdint.h>

#include "arch/regs.h"

/* The caller's registers as its system call returns them (a new task
 * starts there). */
struct user_regs caller_regs(void);
long sys_clone(unsigned long flags, uint64_t stack, uint32_t *ptid, uint32_t *ctid, uint64_t tls);
_Noreturn void sys_exit(int code);
long sys_set_tid_address(uint32_t *p);
long sys_munmap(uintptr_t addr, size_t len);
long sys_set_robust_list(uint64_t head, uint64_t len);
long sys_get_robust_list(long tid, uint64_t *head, uint64_t *len);
long sys_arch_prctl(long code, uint64_t addr);
#endif
