/* SPDX-License-Identifier: GPL-2.0-only */
/* loader/elf_load.c, built into the kernel too (proc/exec.c), includes
 * <stdio.h> but uses nothing of it; the kernel has no C library to offer
 * (its printing is kernel.h's kprintf and ksnprintf). */
#ifndef GUEST_STDIO_H
#define GUEST_STDIO_H
#include <stddef.h>
#endif
