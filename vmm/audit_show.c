/* SPDX-License-Identifier: GPL-2.0-only */
/* husk audit show FILE [--run N]: an audit file (--audit) in human form, one
 * screen per run: what it was, its policy and isolation, its timeline of
 * denials, limits and network records, how it ended, what it used, what
 * came back to the workdir.  Records are grouped by their run id (runs
 * appending to one file at once interleave); files from before the id group
 * by start and end records.  Lines that are not records are counted and
 * skipped: the file is the host's, but nothing in it is trusted to be
 * well-formed. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "audit.h"
#include "errmsg.h"
#include "exit_codes.h"

struct run {
	char id[24];
	json_t *records; /* the run's records, in the file's order */
	int ended;
};

struct runs {
	struct run *v;
	int n;
	long skipped; /* lines that were not a JSON object with an "event" */
};

/* A string of the record, as the terminal may show it: a file's (or a
 * guest's: paths, names) control characters and bytes beyond ASCII escaped
 * (\xNN).  Eight at a time stay valid. */
static const char *str(json_t *o, const char *key)
{
	static char buf[8][1024];
	static unsigned next;
	json_t *v = json_object_get(o, key);
	const char *s = json_string_value(v);
	if (!s)
		return "";
	char *out = buf[next++ % 8];
	return str_escape(s, json_string_length(v), out, sizeof buf[0]);
}

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* A count of the record, as a whole number: a file's value out of range
 * (1e300) is shown as the limit, never converted past it. */
static long long whole(json_t *o, const char *key)
{
	double v = num(o, key);
	return v != v ? 0 : v >= 9e18 ? 9000000000000000000ll : v <= -9e18 ? -9000000000000000000ll : (long long)v;
}

static struct run *new_run(struct runs *rs, const char *id)
{
	struct run *v = realloc(rs->v, (rs->n + 1) * sizeof *v);
	if (!v)
		die(EXIT_INTERNAL, "out of memory");
	rs->v = v;
	struct run *r = &rs->v[rs->n++];
	*r = (struct run){ .records = json_array() };
	snprintf(r->id, sizeof r->id, "%s", id);
	return r;
}

/* The run a record belongs to: by its id, else the last run not ended. */
static struct run *run_of(struct runs *rs, json_t *rec)
{
	const char *id = str(rec, "run");
	int start = !strcmp(str(rec, "event"), "start");
	for (int i = rs->n - 1; i >= 0 && id[0]; i--)
		if (!strcmp(rs->v[i].id, id))
			return &rs->v[i];
	if (start || id[0] || !rs->n || rs->v[rs->n - 1].ended)
		return new_run(rs, id);
	return &rs->v[rs->n - 1];
}

static void read_runs(FILE *f, struct runs *rs)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		json_t *rec = json_loadb(line, (size_t)len, 0, NULL);
		if (!json_is_object(rec) || !json_is_string(json_object_get(rec, "event"))) {
			json_decref(rec);
			rs->skipped += len > 1 || line[0] != '\n';
			continue;
		}
		struct run *r = run_of(rs, rec);
		r->ended |= !strcmp(str(rec, "event"), "end");
		json_array_append_new(r->records, rec);
	}
	free(line);
}

static const char *when(double t, char *buf, size_t n)
{
	time_t s = t > -1e12 && t < 1e12 ? (time_t)t : 0;
	struct tm tm;
	if (!s || !gmtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, n, "?");
	return buf;
}

/* "KEY=VALUE, ..." of a JSON object of strings. */
static void print_pairs(json_t *o, const char *sep)
{
	const char *k;
	json_t *v;
	int first = 1;
	json_object_foreach(o, k, v) {
		printf("%s%s%s%s", first ? "" : ", ", k, sep, json_string_value(v) ? json_string_value(v) : "?");
		first = 0;
	}
	if (first)
		printf("none");
}

static void print_list(json_t *a)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		printf("%s%s", i ? ", " : "", json_string_value(v) ? json_string_value(v) : "?");
	if (!json_array_size(a))
		printf("none");
}

static void show_policy(json_t *p)
{
	char mem[32], out[32], disk[32], t[32] = "none", cpu[32] = "none";
	if (num(p, "timeout") > 0)
		snprintf(t, sizeof t, "%g s", num(p, "timeout"));
	if (num(p, "cpu_time") > 0)
		snprintf(cpu, sizeof cpu, "%g s", num(p, "cpu_time"));
	printf("  policy      memory %s, timeout %s, CPU time %s, output %s, open files %lld, pids %lld, disk %s%s\n",
	       size_text(num(p, "memory"), mem, sizeof mem), t, cpu, size_text(num(p, "output_limit"), out, sizeof out),
	       whole(p, "open_files"), whole(p, "pids"), size_text(num(p, "disk"), disk, sizeof disk),
	       json_is_true(json_object_get(p, "cold")) ? ", cold boot" : "");
	printf("              datasets: ");
	print_pairs(json_object_get(p, "ro"), " = ");
	printf("; workdir: %s\n", json_is_string(json_object_get(p, "workdir")) ? str(p, "workdir") : "none (scratch)");
	printf("              environment: ");
	print_pairs(json_object_get(p, "env"), "=");
	printf("\n");
	json_t *files = json_object_get(p, "files");
	if (json_is_true(json_object_get(p, "review")))
		printf("              review: the workdir's changes staged for a person\n");
	if (json_is_object(files)) {
		char big[32], all[32];
		printf("              file policy: allow ");
		print_list(json_object_get(files, "allow"));
		printf("; refuse ");
		print_list(json_object_get(files, "refuse"));
		printf("; largest file %s, in all %s\n",
		       num(files, "max_size") > 0 ? size_text(num(files, "max_size"), big, sizeof big) : "any",
		       num(files, "max_total") > 0 ? size_text(num(files, "max_total"), all, sizeof all) : "any");
	}
	json_t *net = json_object_get(p, "network");
	if (!json_is_object(net)) {
		printf("              network: none\n");
		return;
	}
	printf("              network: allow ");
	print_list(json_object_get(net, "allow"));
	printf("; deny ");
	print_list(json_object_get(net, "deny"));
	printf("\n");
}

static void show_isolation(json_t *iso)
{
	printf("  isolation   a VM of its own; the VMM in namespaces ");
	print_list(json_object_get(iso, "namespaces"));
	printf("%s%s", json_is_true(json_object_get(iso, "shared_by_runs")) ? " (kept, shared by runs)" : "",
	       json_is_true(json_object_get(iso, "empty_root")) ? ", an empty root" : ", the host's root");
	if (json_object_get(iso, "missing"))
		printf("; missing: %s", str(iso, "missing"));
	printf("\n");
}

/* One timeline line for a record that is neither start nor end. */
void audit_event_text(FILE *out, json_t *rec)
{
	const char *ev = str(rec, "event");
	if (!strcmp(ev, "denial") && !strcmp(str(rec, "kind"), "file policy"))
		fprintf(out, "denied by the file policy: %s %s (%s)\n", str(rec, "what"), str(rec, "path"), str(rec, "why"));
	else if (!strcmp(ev, "denial"))
		fprintf(out, "denied: %s %s, %lld time(s) (counted by %s)\n", str(rec, "kind"), str(rec, "what"),
			whole(rec, "count"), str(rec, "counted_by"));
	else if (!strcmp(ev, "limit")) {
		fprintf(out, "limit: %s", str(rec, "kind"));
		if (json_object_get(rec, "count"))
			fprintf(out, ", %lld time(s)", whole(rec, "count"));
		if (json_object_get(rec, "counted_by"))
			fprintf(out, " (counted by %s)", str(rec, "counted_by"));
		fprintf(out, "\n");
	} else if (!strcmp(ev, "network")) {
		fprintf(out, "network %s %s: %s", str(rec, "op"), str(rec, "verdict"),
			json_object_get(rec, "name") ? str(rec, "name") : "");
		if (json_object_get(rec, "addr"))
			fprintf(out, "%s%s port %lld", json_object_get(rec, "name") ? " " : "", str(rec, "addr"),
				whole(rec, "port"));
		if (json_object_get(rec, "reason"))
			fprintf(out, " (%s)", str(rec, "reason"));
		fprintf(out, "\n");
	} else if (!strcmp(ev, "workdir conflict"))
		fprintf(out, "workdir conflict: %s (both sides changed it; the host's kept)\n", str(rec, "path"));
	else if (!strcmp(ev, "host files changed"))
		fprintf(out, "host files changed during the run: %lld read(s) got EIO\n", whole(rec, "reads"));
	else
		fprintf(out, "%s\n", ev);
}

static void show_event(json_t *rec, double t0)
{
	double t = num(rec, "time");
	char at[32] = "";
	if (t > 0 && t0 > 0)
		snprintf(at, sizeof at, "+%.3f s", t - t0);
	printf("    %-10s  ", at);
	audit_event_text(stdout, rec);
}

static void show_end(json_t *e)
{
	char a[32], o[32], er[32];
	printf("  ended       %s, status %lld, after %.3f s (%.3f s CPU)%s%s\n", str(e, "reason"),
	       whole(e, "status"), num(e, "wall_s"), num(e, "cpu_s"),
	       json_object_get(e, "start") ? "; start: " : "", str(e, "start"));
	printf("  resources   guest memory at its peak %s, stdout %s, stderr %s, tasks %lld (%lld at once)\n",
	       size_text(num(e, "peak_guest_memory"), a, sizeof a), size_text(num(e, "bytes_out"), o, sizeof o),
	       size_text(num(e, "bytes_err"), er, sizeof er), whole(e, "tasks_created"),
	       whole(e, "tasks_peak"));
	printf("  files       ");
	if (num(e, "workdir_files_changed") || num(e, "workdir_bytes_written") || num(e, "workdir_conflicts") ||
	    num(e, "workdir_failed"))
		printf("%lld changed in the workdir, %s written back, %lld conflict(s), %lld failed\n",
		       whole(e, "workdir_files_changed"), size_text(num(e, "workdir_bytes_written"), a, sizeof a),
		       whole(e, "workdir_conflicts"), whole(e, "workdir_failed"));
	else if (num(e, "scratch_bytes_left"))
		printf("none came back (a scratch /workdir: %s left there, discarded)\n",
		       size_text(num(e, "scratch_bytes_left"), a, sizeof a));
	else
		printf("none changed\n");
	if (num(e, "workdir_denied"))
		printf("              %lld change(s) refused by the file policy, never applied\n", whole(e, "workdir_denied"));
	if (json_is_string(json_object_get(e, "workdir_stage")))
		printf("              %lld change(s) staged in %s (husk review|apply|discard)\n",
		       whole(e, "workdir_staged"), str(e, "workdir_stage"));
	json_t *ph = json_object_get(e, "phases_ms");
	if (json_is_object(ph)) {
		const char *k;
		json_t *v;
		int first = 1;
		printf("  phases      ");
		json_object_foreach(ph, k, v) {
			printf("%s%s %.2f", first ? "" : ", ", k, json_number_value(v));
			first = 0;
		}
		printf(" (ms)\n");
	}
}

static void show_run(const struct run *r, int index, int total)
{
	json_t *start = NULL, *end = NULL, *rec;
	size_t i;
	json_array_foreach(r->records, i, rec) {
		if (!strcmp(str(rec, "event"), "start") && !start)
			start = rec;
		if (!strcmp(str(rec, "event"), "end"))
			end = rec;
	}
	char t[64];
	printf("run %d of %d%s%s\n", index, total, r->id[0] ? ", id " : "", r->id);
	if (start) {
		printf("  started     %s, husk %s, %s", when(num(start, "time"), t, sizeof t), str(start, "version"),
		       str(start, "image"));
		json_t *deb = json_object_get(start, "debian_image");
		if (json_is_object(deb))
			printf(" (Debian image %s, disk sha256 %.16s...)", str(deb, "name"), str(deb, "disk_sha256"));
		printf("\n");
		show_policy(json_object_get(start, "policy"));
		show_isolation(json_object_get(start, "isolation"));
	} else {
		printf("  started     (no start record in the file)\n");
	}
	int events = 0;
	json_array_foreach(r->records, i, rec) {
		const char *ev = str(rec, "event");
		if (!strcmp(ev, "start") || !strcmp(ev, "end"))
			continue;
		if (!events++)
			printf("  timeline\n");
		show_event(rec, start ? num(start, "time") : 0);
	}
	if (!events)
		printf("  timeline    no denials, limits or network records\n");
	if (end)
		show_end(end);
	else
		printf("  ended       (no end record: the run was killed, or is still running)\n");
}

int audit_show_stream(FILE *f, const char *name, long want, long *skipped, char *err, size_t errlen)
{
	struct runs rs = { 0 };
	read_runs(f, &rs);
	*skipped = rs.skipped;
	int status = 0;
	if (!rs.n) {
		errmsg(err, errlen, "%s holds no audit records%s", name, rs.skipped ? " (only lines that are not records)" : "");
		status = -1;
	} else if (want && (want + (want < 0 ? rs.n + 1 : 0) < 1 || want > rs.n)) {
		errmsg(err, errlen, "%s holds %d run(s); there is no run %ld", name, rs.n, want);
		status = -1;
	}
	if (want < 0)
		want += rs.n + 1;
	for (int i = 0; i < rs.n && !status; i++)
		if (!want || want == i + 1) {
			if (i && !want)
				printf("\n");
			show_run(&rs.v[i], i + 1, rs.n);
		}
	for (int i = 0; i < rs.n; i++)
		json_decref(rs.v[i].records);
	free(rs.v);
	return status;
}

int audit_show_command(int argc, char **argv)
{
	const char *usage = "usage: husk audit show FILE [--run N] (N from 1; -1 for the last)";
	if (argc < 4 || strcmp(argv[2], "show") || (argc != 4 && argc != 6))
		usage_error("%s", usage);
	long want = 0;
	if (argc == 6) {
		char *end;
		errno = 0;
		want = strtol(argv[5], &end, 10);
		if (strcmp(argv[4], "--run") || errno || end == argv[5] || *end || want == 0)
			usage_error("%s", usage);
	}
	FILE *f = fopen(argv[3], "re");
	if (!f)
		die(EXIT_USAGE, "cannot read the audit file %s: %s", argv[3], strerror(errno));
	char err[512];
	long skipped;
	int r = audit_show_stream(f, argv[3], want, &skipped, err, sizeof err);
	fclose(f);
	if (r)
		die(EXIT_USAGE, "%s", err);
	if (skipped)
		fprintf(stderr, "husk: note: %ld line(s) of %s are not audit records; skipped\n", skipped, argv[3]);
	return 0;
}
