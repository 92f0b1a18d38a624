/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk: run programs in husk's microVMs from C.
 *
 * A run is configured (husk_config_*), run (husk_run) and its result read
 * (husk_result_*).  Each run is a husk process of its own, as from the
 * command line: the library starts the husk executable (HUSK_BIN, else the
 * one installed beside the library), feeds its stdin, collects or streams
 * its stdout and stderr, and reads the run's audit record.  The options are
 * the command line's (husk run --help), by their long names; husk checks
 * them, and a bad one is an error value with husk's own message.
 *
 * Errors are values: a function that fails returns -1 or NULL and, where it
 * takes one, fills a struct husk_error.  The library never exits, never
 * changes signal dispositions, and keeps no global state: concurrent runs
 * from several threads are safe (one config or result per thread at a time).
 * Every fd it makes is close-on-exec. */
#ifndef HUSK_H
#define HUSK_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI's version: the shared library is libhusk.so.HUSK_ABI_VERSION. */
#define HUSK_ABI_VERSION 0

/* husk's own exit statuses (husk run: the program's status otherwise, or
 * 128 + the signal that killed it).  vmm/exit_codes.h is these. */
enum husk_exit_status {
	HUSK_EXIT_INTERNAL = 120,    /* husk or KVM failed on the host */
	HUSK_EXIT_GUEST_ERROR = 121, /* the guest broke the device protocol */
	HUSK_EXIT_PANIC = 122,       /* the guest kernel panicked or crashed */
	HUSK_EXIT_WORKDIR = 123,     /* the workdir could not be written back (fully) */
	HUSK_EXIT_TIMEOUT = 124,     /* the timeout expired */
	HUSK_EXIT_USAGE = 125,       /* bad option, policy, image, program; no /dev/kvm */
	HUSK_EXIT_CPU = 152,         /* the CPU-time limit: 128 + SIGXCPU */
	HUSK_EXIT_OUTPUT = 153       /* the output limit: 128 + SIGXFSZ */
};

/* What went wrong when a call failed.  code: HUSK_E_* below, or for
 * HUSK_E_HUSK the exit status of husk itself (125: a bad option, policy,
 * program or no /dev/kvm; 120: husk or KVM failed on the host: the
 * HUSK_EXIT_* above). */
enum husk_error_code {
	HUSK_E_NONE = 0,
	HUSK_E_INVALID = 1, /* a bad argument to the library (unknown option, NULL, ...) */
	HUSK_E_SYSTEM = 2,  /* a host call failed (errno_value says which) */
	HUSK_E_START = 3,   /* the husk executable could not be started */
	HUSK_E_HUSK = 4,    /* husk refused the run or failed before it ran (status, message) */
	HUSK_E_CALLBACK = 5 /* an output callback asked to stop: the run was killed */
};

struct husk_error {
	int code;         /* enum husk_error_code */
	int status;       /* HUSK_E_HUSK: husk's exit status */
	int errno_value;  /* HUSK_E_SYSTEM, HUSK_E_START: the errno */
	char message[512];
};

typedef struct husk_config husk_config;
typedef struct husk_result husk_result;

/* Output as it comes: stream 1 (stdout) or 2 (stderr), len bytes.  Return
 * 0 to go on, non-zero to stop the run (it is killed; husk_run then fails
 * with HUSK_E_CALLBACK). */
typedef int (*husk_output_fn)(void *arg, int stream, const void *data, size_t len);

/* The library's version ("0.1.0" style), the same as husk --version's. */
const char *husk_version(void);

/* A run of PROGRAM: an image name (python, lua, ...) or a static ELF file,
 * or with husk_config_set(c, "image", NAME) a Debian image's command.
 * NULL when out of memory or program is NULL. */
husk_config *husk_config_new(const char *program);
void husk_config_free(husk_config *c);

/* The program's next argument (argv[1], argv[2], ...). */
int husk_config_arg(husk_config *c, const char *arg, struct husk_error *err);

/* NAME=VALUE in the program's environment (husk run -e). */
int husk_config_env(husk_config *c, const char *name, const char *value, struct husk_error *err);

/* An option of husk run by its long name without dashes, with its value
 * (NULL for a flag): "memory" "256M", "timeout" "5", "cpu-time",
 * "output-limit", "disk", "open-files", "pids", "policy" (a file),
 * "allow-net", "deny-net", "net-dns", "net-host", "net-max-*", "cold",
 * "net-loopback", "net-no-name-check", "no-pvm", "no-namespaces", "image",
 * "syscalls".  Options that take a list (allow-net, deny-net, net-host) add
 * one entry per call; the others replace an earlier value.  An unknown
 * name, or a value missing or given where none is taken, is HUSK_E_INVALID
 * at once; a bad value is husk's to refuse (HUSK_E_HUSK from husk_run). */
int husk_config_set(husk_config *c, const char *option, const char *value, struct husk_error *err);

/* A read-only dataset: the host directory dir at /data/NAME in the guest
 * (NAME: letters, digits, '.', '_', '-'). */
int husk_config_ro(husk_config *c, const char *name, const char *dir, struct husk_error *err);

/* The writable workdir: the host directory dir, /workdir in the guest,
 * written back after the run. */
int husk_config_workdir(husk_config *c, const char *dir, struct husk_error *err);

/* The program's stdin: these bytes (copied), or the host fd (used during
 * husk_run, not closed), or nothing (the default: end of file at once). */
int husk_config_stdin_bytes(husk_config *c, const void *data, size_t len, struct husk_error *err);
int husk_config_stdin_fd(husk_config *c, int fd, struct husk_error *err);

/* Where stream 1 (stdout) or 2 (stderr) goes: collected in the result (the
 * default), written to the host fd (not closed; the result holds none of
 * it), or handed to fn as it comes (the result holds none of it).  husk's
 * own lines on stderr ("husk: note: ...") go with the program's. */
int husk_config_output_fd(husk_config *c, int stream, int fd, struct husk_error *err);
int husk_config_output_callback(husk_config *c, int stream, husk_output_fn fn, void *arg, struct husk_error *err);

/* The husk executable to start (default: $HUSK_BIN, else the one
 * installed beside the library, LIBDIR/../bin/husk, else PREFIX/bin/husk). */
int husk_config_husk_path(husk_config *c, const char *path, struct husk_error *err);

/* The run, to its end.  NULL with *err filled when husk did not run the
 * program (a bad option, no /dev/kvm, the executable missing ...); a
 * program that fails, crashes or hits a limit is a result, not an error. */
husk_result *husk_run(const husk_config *c, struct husk_error *err);
void husk_result_free(husk_result *r);

/* How the run ended (the audit's reason): "exit", "crash" (a fault or a
 * signal), "timeout", "cpu", "output", "memory" (failed after memory ran
 * out), "panic" (the guest kernel), "error" (the guest broke the device
 * protocol, or husk failed during the run). */
const char *husk_result_reason(const husk_result *r);

/* husk's exit status: the program's, or husk's own for a limit (124
 * timeout, 152 CPU time, 153 output, 123 the workdir not written back). */
int husk_result_status(const husk_result *r);

/* The collected stdout (1) or stderr (2), and its length; never NULL. */
const void *husk_result_output(const husk_result *r, int stream, size_t *len);

/* The run's audit records, one JSON object per line (start, denials,
 * limits, end), as husk --audit writes them. */
const char *husk_result_audit(const husk_result *r);

/* A number of the end record by name ("wall_s", "cpu_s",
 * "peak_guest_memory", "bytes_out", "workdir_files_changed", ...; the
 * phases as "phases_ms.run"): 0 and *value set, or -1 if it has none. */
int husk_result_number(const husk_result *r, const char *name, double *value);

/* A string of the end record by name ("start": cold or snapshot, ...), or
 * NULL. */
const char *husk_result_string(const husk_result *r, const char *name);

/* A run's staged changes (husk run --review, or a file policy whose
 * changes the host refused): the stage is the end record's
 * "workdir_stage" (husk_result_string).  These start the husk executable
 * (husk review|apply|discard), found as for husk_run. */

/* The stage's manifest, its changes as JSON text (husk review STAGE
 * --json: "changes", each with "path", "action", "type", "state"...),
 * to release with husk_free; NULL with *err. */
char *husk_stage_manifest(const char *stage, struct husk_error *err);
void husk_free(void *p);
/* The change at path (a rename: either name) as a unified diff against
 * the host's file (husk review STAGE --diff PATH: diff -u's text; a binary
 * file's sizes and SHA-256; empty for a change without contents), to
 * release with husk_free; NULL with *err. */
char *husk_stage_diff(const char *stage, const char *path, struct husk_error *err);
/* Applies the pending changes at or under each of the n paths (n 0:
 * all) to the workdir: 0; HUSK_EXIT_WORKDIR when some were refused (the
 * host changed those paths since; they stay staged; *err says which);
 * -1 with *err when husk could not (not a stage, ...). */
int husk_stage_apply(const char *stage, const char *const *paths, size_t n, struct husk_error *err);
/* Drops them (n 0: all; the stage goes when nothing is left): 0, or -1. */
int husk_stage_discard(const char *stage, const char *const *paths, size_t n, struct husk_error *err);

#ifdef __cplusplus
}
#endif
#endif
