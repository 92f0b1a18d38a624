/* SPDX-License-Identifier: GPL-2.0-only */
/* husk's own exit statuses, by their short names; defined once, in the
 * public header (include/husk.h, enum husk_exit_status).  Otherwise husk
 * exits with the program's status, or 128 + signal when the program
 * faulted. */
#ifndef HUSK_EXIT_CODES_H
#define HUSK_EXIT_CODES_H
#include "husk.h"
#define EXIT_INTERNAL    HUSK_EXIT_INTERNAL
#define EXIT_GUEST_ERROR HUSK_EXIT_GUEST_ERROR
#define EXIT_PANIC       HUSK_EXIT_PANIC
#define EXIT_WORKDIR     HUSK_EXIT_WORKDIR
#define EXIT_TIMEOUT     HUSK_EXIT_TIMEOUT
#define EXIT_CPU         HUSK_EXIT_CPU
#define EXIT_OUTPUT      HUSK_EXIT_OUTPUT
#define EXIT_USAGE       HUSK_EXIT_USAGE
#endif
