/* SPDX-License-Identifier: GPL-2.0-only */
#include <fcntl.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "audit.h"
#include "errmsg.h"
#include "policy.h"

/* The run's id in every record: runs appending to one file at once stay
 * apart (husk audit show groups by it). */
static char run_id[17];

void audit_line(int fd, json_t *record)
{
	if (!record)
		return;
	if (run_id[0])
		json_object_set_new(record, "run", json_string(run_id));
	char *line = json_dumps(record, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(record);
	if (!line)
		return;
	struct iovec v[2] = { { line, strlen(line) }, { "\n", 1 } };
	if (writev(fd, v, 2) < 0) {
		/* the record's reader is gone: the run goes on */
	}
	free(line);
}

static void emit(int fd, json_t *event)
{
	audit_line(fd, event);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int audit_inherited_fd(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };
	for (size_t i = 0; path && i < sizeof dirs / sizeof dirs[0]; i++) {
		size_t n = strlen(dirs[i]);
		if (strncmp(path, dirs[i], n) || !path[n] || strspn(path + n, "0123456789") != strlen(path + n) ||
		    strlen(path + n) > 6)
			continue;
		int fd = atoi(path + n);
		return fd >= 3 ? fd : -1;
	}
	return -1;
}

int audit_open(const struct options *o, int *fd, char *err, size_t errlen)
{
	*fd = -1;
	if (!o->audit)
		return 0;
	*fd = open(o->audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (*fd < 0)
		return errmsg_errno(err, errlen, "cannot open the audit file %s", o->audit);
	int inherited = audit_inherited_fd(o->audit);
	if (inherited >= 0 && inherited != *fd) /* opened anew: the forks to come need not hold the caller's */
		close(inherited);
	uint8_t r[8];
	if (getrandom(r, sizeof r, 0) != sizeof r)
		return errmsg_errno(err, errlen, "getrandom");
	for (size_t i = 0; i < sizeof r; i++)
		snprintf(run_id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

void audit_start(int fd, const struct options *o, const struct isolation *iso, const char *image_digest)
{
	if (fd < 0)
		return;
	const char *names[5];
	json_t *ns = json_array();
	for (int i = 0, n = isolation_names(iso, names); i < n; i++)
		json_array_append_new(ns, json_string(names[i]));
	json_t *isolation = json_pack("{s:o, s:b, s:b}", "namespaces", ns, "shared_by_runs", iso->shared, "empty_root",
				      iso->empty_root);
	if (iso->why[0])
		json_object_set_new(isolation, "missing", json_string(iso->why));
	json_t *start = json_pack("{s:s, s:f, s:s, s:s, s:o, s:o}", "event", "start", "time", now_s(), "version",
				  HUSK_VERSION, "image", o->program ? o->program : "kernel-selftest", "policy",
				  policy_json(o), "isolation", isolation);
	if (o->image) /* the root file system: which Debian image, and exactly which disk */
		json_object_set_new(start, "debian_image",
				    json_pack("{s:s, s:s?}", "name", o->image, "disk_sha256", image_digest));
	emit(fd, start);
}

static void denial(json_t *list, const char *kind, const char *what, uint64_t count, const char *by)
{
	if (count)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:I, s:s}", "event", "denial", "kind", kind, "what", what, "count",
				   (json_int_t)count, "counted_by", by));
}

void audit_file_denial(int fd, const char *path, const char *action, const char *why)
{
	if (fd >= 0)
		emit(fd, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s}", "event", "denial", "kind", "file policy", "what",
				   action, "path", path, "why", why, "count", (json_int_t)1, "counted_by", "husk"));
}

/* A limit the guest kernel reports it enforced, count times. */
static void guest_limit(json_t *list, const char *kind, uint64_t count)
{
	if (count)
		json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:s}", "event", "limit", "kind", kind, "count", (json_int_t)count,
				   "counted_by", "guest"));
}

/* The phases of a run (audit.h), by the names the end record and --stats use. */
static const char *const phase_names[PHASES] = { "prepare", "create", "load", "run", "destroy", "write_back" };

static double phase_ms(const struct run_record *r, int i)
{
	return 1000 * (r->phase_s[i] - (i ? r->phase_s[i - 1] : 0));
}

json_t *audit_findings(const struct run_record *r, const struct husk_report *g)
{
	json_t *list = json_array();
	static const struct { int nr; const char *kind; } watched[] = {
		{ 41, "network" }, { 53, "network" }, { 42, "network" }, { 56, "process" }, { 57, "process" },
		{ 58, "process" }, { 59, "process" }, { 322, "process" }, { 435, "process" },
	};
	/* Without a network every network call fails (with one, the broker
	 * recorded what it refused); a process call is a denial only when
	 * refused (-ENOSYS): clone makes threads. */
	for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++) {
		int nr = watched[i].nr;
		if (r->network && !strcmp(watched[i].kind, "network"))
			continue;
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		denial(list, watched[i].kind, name ? name : "?",
		       strcmp(watched[i].kind, "process") ? g->calls[nr] : g->enosys[nr], "guest");
		free(name);
	}
	for (int nr = 0; nr < HUSK_NSYSCALLS; nr++) {
		int is_watched = 0;
		for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++)
			is_watched |= watched[i].nr == nr;
		if (is_watched || !g->enosys[nr])
			continue;
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		denial(list, "unknown syscall", name ? name : "?", g->enosys[nr], "guest");
		free(name);
	}
	char beyond[48];
	snprintf(beyond, sizeof beyond, "numbers outside 0..%d", HUSK_NSYSCALLS - 1);
	denial(list, "unknown syscall", beyond, g->out_of_range, "guest");
	denial(list, "read-only disk", "write", g->denied_erofs, "guest");
	denial(list, "read-only disk", "device write", r->blk_denied_writes, "husk");
	if (r->blk_changed_reads)
		json_array_append_new(list, json_pack("{s:s, s:I, s:s}", "event", "host files changed", "reads",
				   (json_int_t)r->blk_changed_reads, "by", "husk"));
	guest_limit(list, "memory", g->denied_enomem);
	guest_limit(list, "disk full", g->denied_enospc);
	guest_limit(list, "open files", g->denied_emfile);
	if (r->output_cut)
		json_array_append_new(list, json_pack("{s:s, s:s}", "event", "limit", "kind", "output"));
	if (r->reason == RUN_END_TIMEOUT || r->reason == RUN_END_CPU)
		json_array_append_new(list, json_pack("{s:s, s:s}", "event", "limit", "kind", run_end_name(r->reason)));
	for (int i = 0; i < r->nconflict_paths; i++)
		json_array_append_new(list, json_pack("{s:s, s:s}", "event", "workdir conflict", "path", r->conflict_paths[i]));
	return list;
}

void audit_end(int fd, const struct run_record *r, const struct husk_report *g)
{
	if (fd < 0)
		return;
	json_t *findings = audit_findings(r, g), *f;
	size_t i;
	json_array_foreach(findings, i, f) emit(fd, json_incref(f));
	json_decref(findings);
	json_t *end = json_pack("{s:s, s:f, s:s, s:i, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			   "event", "end", "time", now_s(), "reason", run_end_name(r->reason), "status", r->status,
			   "wall_s", r->wall_s, "cpu_s", r->cpu_s, "peak_guest_memory", (json_int_t)r->peak_memory,
			   "bytes_out", (json_int_t)r->bytes_out, "bytes_err", (json_int_t)r->bytes_err,
			   "workdir_bytes_written", (json_int_t)r->workdir_bytes, "workdir_files_changed",
			   (json_int_t)r->workdir_files, "workdir_conflicts", (json_int_t)r->workdir_conflicts,
			   "workdir_failed", (json_int_t)r->workdir_failed, "scratch_bytes_left",
			   (json_int_t)r->scratch_bytes, "tasks_created", (json_int_t)r->tasks_created, "tasks_peak",
			   (json_int_t)r->tasks_peak);
	json_t *phases = json_object();
	for (int i = 0; end && phases && i < PHASES; i++)
		json_object_set_new(phases, phase_names[i], json_real(phase_ms(r, i)));
	json_object_set_new(end, "phases_ms", phases);
	if (r->program_s >= 0)
		json_object_set_new(end, "program_ms", json_real(1000 * r->program_s));
	json_object_set_new(end, "start", json_string(r->start ? r->start : "cold"));
	if (r->workdir_denied || r->workdir_stage) {
		json_object_set_new(end, "workdir_denied", json_integer((json_int_t)r->workdir_denied));
		json_object_set_new(end, "workdir_staged", json_integer((json_int_t)r->workdir_staged));
		json_object_set_new(end, "workdir_stage", r->workdir_stage ? json_string(r->workdir_stage) : json_null());
	}
	if (r->snapshot)
		json_object_set_new(end, "snapshot", json_string(r->snapshot));
	emit(fd, end);
	close(fd);
}

void stats_print(const struct run_record *r)
{
	fprintf(stderr, "husk: %s, status %d, %.3f s wall, %.3f s CPU, guest memory peak %llu KiB, "
		"%llu bytes out, %llu bytes err, tasks: %u created, %u at most at once, ",
		run_end_name(r->reason), r->status, r->wall_s, r->cpu_s, (unsigned long long)(r->peak_memory >> 10),
		(unsigned long long)r->bytes_out, (unsigned long long)r->bytes_err, r->tasks_created, r->tasks_peak);
	if (r->scratch)
		fprintf(stderr, "scratch /workdir: %llu bytes left there, discarded (-w DIR keeps files)\n",
			(unsigned long long)r->scratch_bytes);
	else
		fprintf(stderr, "workdir: %llu files / %llu bytes written back, %llu conflicts, %llu failed\n",
			(unsigned long long)r->workdir_files, (unsigned long long)r->workdir_bytes,
			(unsigned long long)r->workdir_conflicts, (unsigned long long)r->workdir_failed);
	fprintf(stderr, "husk: start: %s%s%s%s\n", r->start ? r->start : "cold", r->snapshot ? " (" : "",
		r->snapshot ? r->snapshot : "", r->snapshot ? ")" : "");
	fprintf(stderr, "husk: phases (ms):");
	for (int i = 0; i < PHASES; i++)
		fprintf(stderr, " %s %.2f%s", phase_names[i], phase_ms(r, i), i + 1 < PHASES ? "," : "\n");
	if (r->program_s >= 0)
		fprintf(stderr, "husk: of the run, the program's own (ms): %.2f (its first instruction to its exit; "
				"the rest is the guest kernel's start or restore)\n", 1000 * r->program_s);
}
