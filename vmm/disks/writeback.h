/* SPDX-License-Identifier: GPL-2.0-only */
/* The workdir write-back runs in a helper process started before the VM
 * exists: the VMM is confined during the run and may no longer create files,
 * and the helper never touches the VM.  After the run the VMM tells it to
 * go and waits for its report.  A write-back the host could not complete
 * (a full disk, a read-only file system...) keeps the image and its record
 * for a retry. */
#ifndef HUSK_WRITEBACK_H
#define HUSK_WRITEBACK_H
#include <sys/types.h>
#include "disks/disks.h"

struct writeback {
	int go, result; /* pipe ends held by the VMM; -1: no helper */
	pid_t pid;
};

int writeback_start(struct writeback *w, struct disks *ds, char *err, size_t errlen);
/* Runs the write-back and returns husk's final status for the run; *st (if
 * not NULL) gets what was written. */
struct extract_stats;
int writeback_finish(struct writeback *w, struct disks *ds, int status, struct extract_stats *st);
/* `husk writeback IMAGE DIR`: applies an image kept by a write-back that
 * could not complete (with IMAGE.record), by the same rules; husk's status. */
int writeback_retry(const char *image, const char *dir);
#endif
