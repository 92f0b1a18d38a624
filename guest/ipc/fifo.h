/* SPDX-License-Identifier: GPL-2.0-only */
/* Named pipes: open of a FIFO node (mkfifo, mknod S_IFIFO). */
#ifndef GUEST_FIFO_H
#define GUEST_FIFO_H
#include <stdint.h>

struct mount;
/* A new fd on the FIFO (mount, inode): flags as open's.  Waits for the
 * other end unless O_NONBLOCK or O_RDWR; -ENXIO for a non-blocking writer
 * without a reader. */
long fifo_open(struct mount *m, uint32_t ino, int flags);
#endif
