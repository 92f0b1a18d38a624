/* SPDX-License-Identifier: GPL-2.0-only */
/* The helper processes husk forks beside the VMM before anything is
 * confined (the network broker, the datasets' file server), each with a
 * SOCK_SEQPACKET pair between it and the VMM (helper.c). */
#ifndef HUSK_HELPER_H
#define HUSK_HELPER_H
#include <stddef.h>
#include <sys/types.h>

/* Forks a helper.  In husk: the helper's pid, *fd husk's end of the pair.
 * In the helper, which dies with husk: 0, *fd its end.  -1 with a
 * one-line reason naming `what` when it cannot. */
pid_t helper_fork(const char *what, int *fd, char *err, size_t errlen);
#endif
