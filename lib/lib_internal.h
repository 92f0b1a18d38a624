/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk's insides: the configuration (config.c), the run (run.c), the
 * result (result.c). */
#ifndef HUSK_LIB_INTERNAL_H
#define HUSK_LIB_INTERNAL_H
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include "husk.h"

#include "version.h"

struct strlist {
	char **v; /* NULL-terminated */
	size_t n;
};

enum stdin_mode { STDIN_NONE, STDIN_BYTES, STDIN_FD };

/* Where a stream goes: fn, else fd >= 0, else collected. */
struct output {
	int fd;
	husk_output_fn fn;
	void *arg;
};

struct husk_config {
	char *program;
	char *husk_path;
	struct strlist args;    /* the program's arguments */
	struct strlist options; /* husk run's, as on its command line */
	enum stdin_mode stdin_mode;
	void *stdin_data;
	size_t stdin_len;
	int stdin_fd;
	struct output out[3]; /* [1] stdout, [2] stderr */
};

struct buffer {
	char *data;
	size_t len, cap;
};

struct husk_result {
	int status;
	char *reason;
	struct buffer out[3]; /* collected stdout [1] and stderr [2] */
	char *audit;          /* the audit file's text */
	void *end;            /* the end record (json_t *) */
};

/* The husk executable to start: configured (if not NULL), $HUSK_BIN, the
 * one installed beside this library, or PREFIX/bin/husk (buf may hold it). */
const char *husk_lib_husk_path(const char *configured, char *buf, size_t size);

/* Waits for husk: its exit status (128 + signal if it was killed), or -1. */
int husk_lib_wait(pid_t pid);

/* err filled (if not NULL); returns -1. */
int husk_lib_fail(struct husk_error *err, int code, int errno_value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* len bytes appended (0, or -1: out of memory). */
int husk_lib_buffer_add(struct buffer *b, const void *data, size_t len);

/* The result of a husk that exited with status, its audit text (taken
 * over) and its stderr's last lines (for an error's message). */
husk_result *husk_lib_result_make(int status, char *audit, struct buffer out[3], const char *stderr_tail,
			 struct husk_error *err);
#endif
