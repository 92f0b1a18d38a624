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

struct file_policy;
struct writeback {
	int go, result; /* pipe ends held by the VMM; -1: no helper */
	pid_t pid;
	/* Set before writeback_start: with either, the changes are staged
	 * (review/stage.h), then reviewed, or applied as the policy allows. */
	int review;
	const struct file_policy *files;
	int audit; /* the audit file, for the policy's denials (-1: none) */
};

int writeback_start(struct writeback *w, struct disks *ds, char *err, size_t errlen);
/* Runs the write-back and returns husk's final status for the run; *st (if
 * not NULL) gets what was written.  run (JSON text, or NULL): how the run
 * ended, for a review. */
struct extract_stats;
int writeback_finish(struct writeback *w, struct disks *ds, int status, const char *run, struct extract_stats *st);
/* `husk writeback IMAGE DIR`: applies an image kept by a write-back that
 * could not complete (with IMAGE.record), by the same rules; husk's status. */
int writeback_retry(const char *image, const char *dir);
#endif
