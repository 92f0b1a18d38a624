/* SPDX-License-Identifier: GPL-2.0-only */
/* The limits libfdt uses (gcc's own limits.h wants a C library's behind it),
 * and Linux's path limits. */
#ifndef GUEST_LIMITS_H
#define GUEST_LIMITS_H
#define CHAR_BIT 8
#define INT_MAX __INT_MAX__
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX (INT_MAX * 2u + 1u)
#define LONG_MAX __LONG_MAX__
#define ULONG_MAX (LONG_MAX * 2ul + 1ul)
#define PATH_MAX 4096
#define NAME_MAX 255
#endif
