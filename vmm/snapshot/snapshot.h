/* SPDX-License-Identifier: GPL-2.0-only */
/* Runs from snapshots.  A program's first run boots it and stops at the
 * snapshot point (guest/sys/snapshot.c): the VM there is saved in the cache
 * (snapshots/NAME.snap, snapshot_file.h), and the run goes on with its own
 * parameters.  Later runs of the same boot (the same program or image file,
 * system disk, memory size, husk build and CPU) map that file copy-on-write
 * into a fresh VM and go on from the same point: each run is still a VM of
 * its own, and nothing it does reaches the file.
 *
 * A snapshot older than SNAPSHOT_MAX_AGE is made again: what the snapshot
 * fixed for every run restored from it (an interpreter's string-hash key)
 * is shared for at most that long.  Concurrent first runs build one (a lock
 * on NAME.lock; the others boot afresh); a file that fails its checks is
 * removed and built again, with one line on stderr. */
#ifndef HUSK_SNAPSHOT_H
#define HUSK_SNAPSHOT_H
#include <stdint.h>
#include "options.h"
#include "snapshot/snapshot_file.h"
#include "vm.h"

#define SNAPSHOT_MAX_AGE_S (24 * 3600)

/* What the run was booted from, for the snapshot's key. */
struct snapshot_boot {
	const char *label;        /* the image's or program's name, for the file name */
	const char *program;      /* the program's file, or NULL (a Debian image's run) */
	const char *system_disk;  /* its image's system disk, or NULL */
	const char *image_digest; /* a Debian image's digest, or NULL */
	const char *argv0;        /* the program's name as given (a program-level snapshot's argv) */
	int level;                /* HUSK_SNAPSHOT_* */
	int rebuild;              /* husk snapshot build: made anew, whatever is there */
};

enum snapshot_use {
	SNAPSHOT_NONE,    /* boot afresh */
	SNAPSHOT_RESTORE, /* r->snap is open and checked */
	SNAPSHOT_BUILD,   /* boot afresh and save the VM at its snapshot point (r holds the lock) */
};

struct snapshot_run {
	int dir;          /* the snapshot directory, or -1 */
	int lock;         /* NAME.lock, held while building; or -1 */
	char name[160];
	struct snapshot_key key;
	uint8_t mac_key[SNAPSHOT_MAC_KEY];
	struct snapshot snap;
	char preload[1024];  /* a program-level snapshot's modules to import (LABEL.preload), or "" */
	int pagemap, ws_out; /* the first restored run records its working set (working_set.h): or -1 */
};

/* Whether the run restores, builds or neither, for the VM v (made, not yet
 * booted: its CPUID is in the key).  Never fails: a snapshot that cannot
 * be used is a cold boot. */
enum snapshot_use snapshot_begin(struct snapshot_run *r, const struct options *o, const struct snapshot_boot *b,
				 const struct vm *v);
/* Whether a run of a program-level snapshot's program can start from its
 * ready point (guest/sys/snapshot.c, python's Modules/main.c): a command
 * line of the shape the program restores (nothing, -c CMD, -m MODULE, - or
 * FILE, then any arguments: no other option), and an environment that
 * agrees with the image's own on every name read at start-up (PYTHON*,
 * LANG, LANGUAGE, LC_*, TZ, HOME, PATH, TERM, TMPDIR).  Else it boots afresh. */
int snapshot_program_run_ok(const struct options *o, const struct options *image_env);
/* The restore: guest memory mapped from the file, the vCPU's state; the
 * devices' are in r->snap.state.dev for the caller.  0, or -1 with a reason. */
int snapshot_restore(struct snapshot_run *r, struct vm *v, char *err, size_t errlen);
/* The first run restored from a snapshot: what it touched, for the next
 * restores (working_set.h).  Before the VM's memory goes; the fds were
 * opened by snapshot_restore, before the VMM was confined. */
void snapshot_record_working_set(struct snapshot_run *r, const struct guest_mem *m);
/* The save of v, stopped at its snapshot point; st: the devices' state and
 * the program's, filled by the caller (the vCPU's is taken here). */
int snapshot_save(struct snapshot_run *r, struct vm *v, struct snapshot_state *st, char *err, size_t errlen);
/* The snapshot just saved, opened as a run that restores it opens it (its
 * digest checked).  0, or -1 with a reason. */
int snapshot_reopen(struct snapshot_run *r, char *err, size_t errlen);
/* A snapshot that failed to restore or build: removed, so the next run
 * builds it again. */
void snapshot_discard(struct snapshot_run *r);
/* Removes the snapshot file `name` in dir (a path relative to it) with its
 * stamp, working set and lock: unlinkat's result for the file itself. */
int snapshot_remove(int dir, const char *name);
/* Closes the file and lets the lock go. */
void snapshot_end(struct snapshot_run *r);

/* husk snapshot ls|rm ... */
int snapshot_command(int argc, char **argv);
/* husk snapshot build --preload MODULES: kept for the label's later runs. */
int snapshot_set_preload(const char *label, const char *modules, char *err, size_t errlen);
#endif
