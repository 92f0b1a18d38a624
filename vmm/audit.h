/* SPDX-License-Identifier: GPL-2.0-only */
/* The audit trail (--audit FILE): JSON lines appended to FILE, a start
 * record, the denials and limits the run met, and an end record; --stats
 * prints the end record's gist on stderr.  Counts the guest kernel reports
 * (denials it answered itself) are marked as such: the guest is untrusted. */
#ifndef HUSK_AUDIT_H
#define HUSK_AUDIT_H
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <jansson.h>
#include "husk/abi.h"
#include "sandbox/isolate.h"
#include "options.h"
#include "run.h"

/* Where a run's time went, in seconds from husk's start: the host side
 * prepared (disks, helpers, namespaces), the VM created, the kernel and
 * program loaded with the vCPU set, the guest done, the VM destroyed, the
 * workdir written back. */
enum run_phase { PHASE_PREPARED, PHASE_VM, PHASE_LOADED, PHASE_RAN, PHASE_DESTROYED, PHASE_WRITTEN_BACK, PHASES };

struct run_record {
	enum run_end reason;
	int status;
	double wall_s, cpu_s;
	uint64_t peak_memory;          /* guest RAM the host had to back */
	uint64_t bytes_out, bytes_err;
	int output_cut;
	uint64_t blk_denied_writes;    /* host-counted, at the virtio-blk device */
	uint64_t blk_changed_reads;    /* ... reads of host files replaced or removed during the run */
	uint64_t workdir_bytes, workdir_files;
	uint64_t workdir_conflicts, workdir_failed; /* paths: both sides changed; could not be written */
	const char (*conflict_paths)[200];          /* the first EXTRACT_NOTED of them, escaped */
	uint64_t workdir_denied, workdir_staged;    /* refused by the file policy; left staged ... */
	const char *workdir_stage;                  /* ... in this stage (review/stage.h), or NULL */
	int nconflict_paths;
	int scratch;                   /* no -w: /workdir was the guest's scratch directory */
	uint64_t scratch_bytes;        /* file data left there, as the guest counted it */
	/* threads and processes, as the guest counted them: made (the first
	 * included), the most alive at once */
	unsigned tasks_created, tasks_peak;
	int network;                   /* the run had a network: its broker recorded each resolve and connect */
	double phase_s[PHASES];
	double program_s;              /* of the run phase, the program's own: its first instruction to its exit (-1: unknown) */
	const char *start;             /* how the VM began: "cold", "snapshot" (restored), "cold, snapshot saved" */
	const char *snapshot;          /* ... the snapshot's file name, or NULL */
};

/* The descriptor an audit path names when it is an inherited one,
 * "/dev/fd/N" or "/proc/self/fd/N" with N >= 3 (a shell's >(...), libhusk's
 * pipe): kept open from husk's start until audit_open; else -1. */
int audit_inherited_fd(const char *path);
/* Opened before the VMM loses its view of the host's files (an inherited
 * descriptor is opened anew and closed).  Returns 0 with the file in *fd
 * (-1 without --audit), or -1 with a reason in err. */
int audit_open(const struct options *o, int *fd, char *err, size_t errlen);
/* The start record, with the isolation the VMM got. */
/* One record (taken) as a line of JSON, marked with the run's id, in one
 * writev (the network broker writes its records with it too: its filter
 * allows writev, and dprintf would fstat). */
void audit_line(int fd, json_t *record);

void audit_start(int fd, const struct options *o, const struct isolation *iso, const char *image_digest);
void audit_end(int fd, const struct run_record *r, const struct husk_report *guest);
/* The run's denials and limits as a list of the end's event records (the
 * review shows them too). */
json_t *audit_findings(const struct run_record *r, const struct husk_report *guest);

/* husk audit show FILE [--run N] (audit_show.c); returns husk's status. */
int audit_show_command(int argc, char **argv);
/* The runs of the audit records in f (named name), or run want alone (0:
 * all; from 1, or -1 for the last) on stdout; *skipped: the lines that were
 * not records.  0, or -1 with a reason in err (no records, no such run).
 * Never trusts the file to be well-formed (fuzz_audit_show). */
int audit_show_stream(FILE *f, const char *name, long want, long *skipped, char *err, size_t errlen);
void stats_print(const struct run_record *r);
/* One denial, limit or other event of a run as a line for people (husk
 * audit show, the review). */
void audit_event_text(FILE *out, json_t *rec);
/* A change to the workdir the file policy refused (review/stage.c): its
 * path, what the program did ("create", "modify", "delete"...) and why. */
void audit_file_denial(int fd, const char *path, const char *action, const char *why);
#endif
