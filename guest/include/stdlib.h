/* SPDX-License-Identifier: GPL-2.0-only */
/* libfdt_env.h includes <stdlib.h>; the kernel has no C library to offer. */
#ifndef GUEST_STDLIB_H
#define GUEST_STDLIB_H
#include <stddef.h>
#endif
