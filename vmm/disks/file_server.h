/* SPDX-License-Identifier: GPL-2.0-only */
/* The file server (file_server.c) of the datasets and of the workdir's
 * copy-on-write view: a process forked before the
 * VMM is confined that opens, on the VMM's request, file F of dataset D as
 * the dataset's map names it (its path under the dataset's top, opened
 * with openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
 * read-only) and passes the fd back only if it is still the regular file
 * walked (device and inode).  The VMM can name no path: a request is two
 * numbers, checked against the maps.  The VMM keeps the fds it got in
 * FILE_SLOTS slots at fixed numbers (least recently used goes), the only
 * fds its seccomp filter lets it pread beyond its own. */
#ifndef HUSK_FILE_SERVER_H
#define HUSK_FILE_SERVER_H
#include <stddef.h>
#include <stdint.h>
#include "disks/disks.h"

#define FILE_SLOTS 64
#define FILE_SLOT_BASE 512 /* a multiple of FILE_SLOTS: the slots are one masked range */

/* Forks the server for the datasets of ds that have a map (none: no
 * server, *vmm_fd = -1).  Its pid, 0 without one, or -1 with a reason. */
int file_server_start(const struct disks *ds, int *vmm_fd, char *err, size_t errlen);

/* The VMM's side: an fd to pread file `file` of disk `disk` (its index in
 * ds) through, or -errno (ESTALE: the host file is not the one walked any
 * more; EIO: no answer from the server). */
int file_server_open(int vmm_fd, uint32_t disk, uint32_t file);
/* The write-back reader's side: a fresh fd of its own (no slot), or -errno. */
int file_server_fetch(int sock, uint32_t disk, uint32_t file);
#endif
