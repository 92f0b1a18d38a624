/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk's C API (include/husk.h), built with ASan and UBSan: every kind
 * of option, bad inputs as error values, stdin/stdout/stderr each way,
 * limits as results, husk's own errors, 1,000 runs leaking no fd, memory
 * or child, 16 threads running at once.  Needs /dev/kvm and HUSK_BIN. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "husk.h"
#include "option_table.h"
#include "tap.h"
#include "version.h"

static struct husk_error e;

static husk_config *prog(const char *program, const char **args)
{
	husk_config *c = husk_config_new(program);
	for (; args && *args; args++)
		husk_config_arg(c, *args, &e);
	return c;
}

static const char *out(const husk_result *r, int stream)
{
	return r ? husk_result_output(r, stream, NULL) : "(no result)";
}

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static int no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void bad_inputs(void)
{
	ok(husk_config_new(NULL) == NULL, "a config needs a program");
	husk_config *c = husk_config_new("python");
	ok(husk_config_arg(c, NULL, &e) == -1 && e.code == HUSK_E_INVALID, "a NULL argument: HUSK_E_INVALID");
	ok(husk_config_env(c, "A=B", "x", &e) == -1 && e.code == HUSK_E_INVALID, "a variable name with '=': refused");
	ok(husk_config_set(c, "no-such-option", "1", &e) == -1 && e.code == HUSK_E_INVALID &&
		   strstr(e.message, "no-such-option"), "an unknown option: refused, named (%s)", e.message);
	ok(husk_config_set(c, "memory", NULL, &e) == -1 && strstr(e.message, "needs a value"), "memory without a value");
	ok(husk_config_set(c, "cold", "yes", &e) == -1 && strstr(e.message, "takes no value"), "cold with a value");
	ok(husk_config_set(c, "audit", "/tmp/x", &e) == -1, "audit is the library's: refused by name");
	ok(husk_config_set(c, "env", "A=1", &e) == -1, "env has its own call");
	ok(husk_config_ro(c, "a/b", "/tmp", &e) == -1 && e.code == HUSK_E_INVALID, "a dataset name with '/'");
	ok(husk_config_output_fd(c, 3, 1, &e) == -1, "stream 3 does not exist");
	ok(husk_config_stdin_fd(c, -1, &e) == -1, "stdin from fd -1");
	ok(husk_run(NULL, &e) == NULL && e.code == HUSK_E_INVALID, "husk_run(NULL)");
	husk_config_free(c);
	husk_config_free(NULL);
	husk_result_free(NULL);
}

/* Every option of husk run the library takes by name is known to it. */
static void every_option(void)
{
	int taken = 0, all = 0;
	husk_config *c = husk_config_new("python");
	for (const struct option *o = husk_run_options; o->name; o++) {
		static const char *const own[] = { "env", "ro", "workdir", "audit", "stats", "help", "version",
						   "kernel-selftest" };
		int is_own = 0;
		for (size_t i = 0; i < sizeof own / sizeof *own; i++)
			is_own |= !strcmp(o->name, own[i]);
		if (is_own)
			continue;
		all++;
		taken += husk_config_set(c, o->name, o->has_arg == no_argument ? NULL : "1", &e) == 0;
	}
	ok(all > 20 && taken == all, "each of husk run's %d options is taken by name (%d)", all, taken);
	husk_config_free(c);
}

static void basic_runs(void)
{
	const char *a1[] = { "-c", "import os, sys; print(sys.argv[1:], os.environ['K'], sys.stdin.read())", "x", "y z",
			     NULL };
	husk_config *c = prog("python", a1);
	husk_config_env(c, "K", "V", &e);
	husk_config_stdin_bytes(c, "from stdin", 10, &e);
	husk_result *r = husk_run(c, &e);
	ok(r && husk_result_status(r) == 0 && !strcmp(husk_result_reason(r), "exit"), "python ran: exit 0 (%s)",
	   r ? "" : e.message);
	ok(!strcmp(out(r, 1), "['x', 'y z'] V from stdin\n"), "argv, env and stdin are the run's (%s)", out(r, 1));
	double wall = 0, run_ms = 0;
	ok(husk_result_number(r, "wall_s", &wall) == 0 && wall > 0 && husk_result_number(r, "phases_ms.run", &run_ms) == 0,
	   "the end record's numbers: wall_s %.3f, phases_ms.run %.2f", wall, run_ms);
	ok(husk_result_number(r, "no_such", &wall) == -1 && husk_result_string(r, "nothing") == NULL,
	   "a field the record lacks: -1 / NULL");
	const char *start = husk_result_string(r, "start");
	ok(start && (!strncmp(start, "cold", 4) || !strcmp(start, "snapshot")), "start: %s", start ? start : "?");
	const char *audit = husk_result_audit(r);
	ok(audit && strstr(audit, "\"event\":\"start\"") && strstr(audit, "\"event\":\"end\""),
	   "the audit records: start and end");
	husk_result_free(r);
	husk_config_free(c);

	const char *a2[] = { "-c", "import sys; print('to err', file=sys.stderr); sys.exit(7)", NULL };
	c = prog("python", a2);
	r = husk_run(c, &e);
	ok(r && husk_result_status(r) == 7 && !strcmp(out(r, 2), "to err\n"), "a failing program is a result: status 7, stderr");
	husk_result_free(r);
	husk_config_free(c);

	const char *a3[] = { "-e", "while true do end", NULL };
	c = prog("lua", a3);
	husk_config_set(c, "timeout", "0.5", &e);
	r = husk_run(c, &e);
	ok(r && husk_result_status(r) == 124 && !strcmp(husk_result_reason(r), "timeout"),
	   "a timeout is a result: reason timeout, status 124");
	husk_result_free(r);
	husk_config_set(c, "timeout", "60", &e); /* replaces the earlier value */
	husk_config_set(c, "cpu-time", "0.5", &e);
	r = husk_run(c, &e);
	ok(r && !strcmp(husk_result_reason(r), "cpu"), "a later value replaces one set before; cpu-time ends it (%s)",
	   r ? husk_result_reason(r) : e.message);
	husk_result_free(r);
	husk_config_free(c);

	const char *a4[] = { "-c", "print('x' * 100000)", NULL };
	c = prog("python", a4);
	husk_config_set(c, "output-limit", "1000", &e);
	r = husk_run(c, &e);
	size_t n = 0;
	if (r)
		husk_result_output(r, 1, &n);
	ok(r && !strcmp(husk_result_reason(r), "output") && n <= 1000, "the output limit: reason output, %zu bytes", n);
	husk_result_free(r);
	husk_config_free(c);
}

static void husk_errors(void)
{
	const char *a[] = { "-c", "pass", NULL };
	husk_config *c = prog("python", a);
	husk_config_set(c, "memory", "1K", &e);
	husk_result *r = husk_run(c, &e);
	ok(!r && e.code == HUSK_E_HUSK && e.status == 125 && strstr(e.message, "memory size"),
	   "a bad value: husk's error, status 125, its message (%s)", e.message);
	husk_config_free(c);

	c = prog("no-such-image", NULL);
	r = husk_run(c, &e);
	ok(!r && e.code == HUSK_E_HUSK && e.status == 125 && !strncmp(e.message, "husk: ", 6),
	   "no such program: husk's one line (%s)", e.message);
	husk_config_free(c);

	c = prog("python", a);
	husk_config_husk_path(c, "/nonexistent/husk", &e);
	r = husk_run(c, &e);
	ok(!r && e.code == HUSK_E_START && e.errno_value == ENOENT, "no husk executable: HUSK_E_START, ENOENT (%s)",
	   e.message);
	husk_config_free(c);

	c = prog("python", a);
	ok(husk_config_ro(c, NULL, "/tmp", &e) == -1 && e.code == HUSK_E_INVALID, "a dataset needs a name");
	husk_config_ro(c, "missing", "/nonexistent/dir", &e);
	r = husk_run(c, &e);
	ok(!r && e.code == HUSK_E_HUSK && strstr(e.message, "/nonexistent/dir"), "a missing dataset: named (%s)", e.message);
	husk_config_free(c);
}

struct stream_log {
	int calls;
	double first;
	size_t bytes;
	int stop_after;
};

static int log_output(void *arg, int stream, const void *data, size_t len)
{
	struct stream_log *l = arg;
	(void)data;
	if (stream != 2)
		return 1;
	if (!l->calls++)
		l->first = now();
	l->bytes += len;
	return l->stop_after && l->calls >= l->stop_after;
}

static void streams(void)
{
	char tmpl[] = "/tmp/husk-libtest-XXXXXX";
	int fd = mkstemp(tmpl);
	unlink(tmpl);
	const char *a[] = { "-c", "import sys, time; print('out'); sys.stderr.write('one\\n'); sys.stderr.flush(); "
				  "time.sleep(0.5); sys.stderr.write('two\\n')", NULL };
	husk_config *c = prog("python", a);
	struct stream_log l = { 0 };
	husk_config_output_fd(c, 1, fd, &e);
	husk_config_output_callback(c, 2, log_output, &l, &e);
	husk_result *r = husk_run(c, &e);
	double end = now();
	char buf[64] = { 0 };
	pread(fd, buf, sizeof buf - 1, 0);
	size_t n1 = 1, n2 = 1;
	if (r)
		husk_result_output(r, 1, &n1), husk_result_output(r, 2, &n2);
	ok(r && !strcmp(buf, "out\n") && n1 == 0, "stdout to an fd: written there, none in the result");
	ok(l.calls >= 2 && l.bytes == 8 && n2 == 0, "stderr to a callback: %d calls, %zu bytes", l.calls, l.bytes);
	ok(l.calls && end - l.first > 0.3, "streamed: the first chunk came %.2f s before the end", end - l.first);
	husk_result_free(r);
	husk_config_free(c);
	close(fd);

	const char *b[] = { "-c", "import sys, time\nwhile True: sys.stderr.write('x\\n'); sys.stderr.flush(); time.sleep(0.01)",
			    NULL };
	c = prog("python", b);
	struct stream_log s = { .stop_after = 3 };
	husk_config_output_callback(c, 2, log_output, &s, &e);
	husk_config_set(c, "timeout", "30", &e);
	double t0 = now();
	r = husk_run(c, &e);
	ok(!r && e.code == HUSK_E_CALLBACK && now() - t0 < 10, "a callback that stops the run: HUSK_E_CALLBACK, in %.2f s",
	   now() - t0);
	ok(no_children(), "... and husk is gone (no child left)");
	husk_config_free(c);

	int p[2];
	pipe(p);
	write(p[1], "piped in", 8);
	close(p[1]);
	const char *d[] = { "-c", "import sys; print(sys.stdin.read()[::-1])", NULL };
	c = prog("python", d);
	husk_config_stdin_fd(c, p[0], &e);
	r = husk_run(c, &e);
	ok(!strcmp(out(r, 1), "ni depip\n"), "stdin from an fd (%s)", out(r, 1));
	husk_result_free(r);
	husk_config_free(c);
	close(p[0]);

	static char big[1 << 20];
	memset(big, 'a', sizeof big);
	const char *f[] = { "-c", "import sys; print(len(sys.stdin.read()))", NULL };
	c = prog("python", f);
	husk_config_stdin_bytes(c, big, sizeof big, &e);
	r = husk_run(c, &e);
	ok(!strcmp(out(r, 1), "1048576\n"), "1 MiB of stdin bytes (%s)", out(r, 1));
	husk_result_free(r);
	husk_config_free(c);
}

static void disks(const char *tmp)
{
	char ds[512], wd[512], path[600];
	snprintf(ds, sizeof ds, "%s/ds", tmp);
	snprintf(wd, sizeof wd, "%s/wd", tmp);
	mkdir(ds, 0755);
	mkdir(wd, 0755);
	snprintf(path, sizeof path, "%s/in.txt", ds);
	FILE *f = fopen(path, "w");
	fputs("dataset", f);
	fclose(f);
	const char *a[] = { "-c", "open('/workdir/out.txt', 'w').write(open('/data/inputs/in.txt').read().upper())", NULL };
	husk_config *c = prog("python", a);
	husk_config_ro(c, "inputs", ds, &e);
	husk_config_workdir(c, wd, &e);
	husk_result *r = husk_run(c, &e);
	snprintf(path, sizeof path, "%s/out.txt", wd);
	char buf[32] = { 0 };
	f = fopen(path, "r");
	if (f) {
		fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	ok(r && husk_result_status(r) == 0 && !strcmp(buf, "DATASET"), "a dataset read, the workdir written back (%s)",
	   r ? buf : e.message);
	husk_result_free(r);
	husk_config_free(c);
}

static void many_runs(int n)
{
	int fds = open_fds(), good = 0;
	const char *a[] = { "-e", "print(1 + 1)", NULL };
	for (int i = 0; i < n; i++) {
		husk_config *c = prog("lua", a);
		husk_config_stdin_bytes(c, "x", 1, &e);
		husk_result *r = husk_run(c, &e);
		good += r && !strcmp(out(r, 1), "2\n");
		husk_result_free(r);
		husk_config_free(c);
	}
	ok(good == n, "%d runs in one process: %d right", n, good);
	ok(open_fds() == fds, "... no fd left open (%d before, %d after)", fds, open_fds());
	ok(no_children(), "... no child left");
	/* memory: LeakSanitizer checks at exit */
}

#define THREADS 16
#define RUNS_PER_THREAD 3

static void *thread_runs(void *arg)
{
	long id = (long)arg, good = 0;
	for (int i = 0; i < RUNS_PER_THREAD; i++) {
		char code[64], want[32];
		snprintf(code, sizeof code, "print(%ld * 1000 + %d)", id, i);
		snprintf(want, sizeof want, "%ld\n", id * 1000 + i);
		const char *a[] = { "-c", code, NULL };
		husk_config *c = prog("python", a);
		struct husk_error err;
		husk_result *r = husk_run(c, &err);
		good += r && !strcmp(husk_result_output(r, 1, NULL), want) && husk_result_status(r) == 0;
		husk_result_free(r);
		husk_config_free(c);
	}
	return (void *)good;
}

static void threads(void)
{
	pthread_t t[THREADS];
	long good = 0;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_runs, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *g;
		pthread_join(t[i], &g);
		good += (long)g;
	}
	ok(good == THREADS * RUNS_PER_THREAD, "%d threads at once, %d runs each: %ld right", THREADS, RUNS_PER_THREAD, good);
	ok(no_children(), "... no child left");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* --review: the stage in the result, its manifest, a path applied, the
 * host's change refused, the rest discarded; a bad stage an error. */
static void staged(const char *tmp)
{
	char wd[512], a[600], b[600];
	snprintf(wd, sizeof wd, "%s/staged", tmp);
	snprintf(a, sizeof a, "%s/a", wd);
	snprintf(b, sizeof b, "%s/b", wd);
	mkdir(wd, 0755);
	write_file(a, "a\n");
	write_file(b, "b\n");
	const char *args[] = { "-e", "for _, n in ipairs({'a', 'b'}) do io.open(n, 'a'):write('more\\n') end", NULL };
	husk_config *c = prog("lua", args);
	husk_config_workdir(c, wd, &e);
	husk_config_set(c, "review", NULL, &e);
	husk_result *r = husk_run(c, &e);
	const char *stage = r ? husk_result_string(r, "workdir_stage") : NULL;
	ok(stage && husk_result_status(r) == 0, "a --review run: its stage in the result (%s)", stage ? stage : e.message);
	char *m = stage ? husk_stage_manifest(stage, &e) : NULL;
	ok(m && strstr(m, "\"path\": \"a\"") && strstr(m, "\"action\": \"modify\""), "husk_stage_manifest: the changes as JSON");
	husk_free(m);
	char *d = stage ? husk_stage_diff(stage, "a", &e) : NULL;
	ok(d && strstr(d, "+++ b/a\n") && strstr(d, "+more\n"), "husk_stage_diff: a change as a unified diff");
	husk_free(d);
	write_file(b, "the host's\n");
	const char *both[] = { "a", "b" };
	int rc = stage ? husk_stage_apply(stage, both, 2, &e) : -1;
	ok(rc == HUSK_EXIT_WORKDIR && strstr(e.message, "1 refused"), "husk_stage_apply: the host's change refused (%d: %s)",
	   rc, e.message);
	char buf[32] = { 0 };
	FILE *f = fopen(a, "r");
	if (f) {
		fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	ok(!strcmp(buf, "a\nmore\n"), "... the other applied");
	ok(stage && husk_stage_discard(stage, NULL, 0, &e) == 0 && access(stage, F_OK) != 0, "husk_stage_discard: the stage gone");
	ok(husk_stage_apply("/nonexistent-stage", NULL, 0, &e) == -1 && e.code == HUSK_E_HUSK && e.status == HUSK_EXIT_USAGE &&
		   strstr(e.message, "nonexistent-stage"), "a bad stage: an error naming it (%s)", e.message);
	husk_result_free(r);
	husk_config_free(c);
}

int main(int argc, char **argv)
{
	if (!getenv("HUSK_BIN")) {
		printf("Bail out! HUSK_BIN is not set\n");
		return 1;
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("Bail out! /dev/kvm is missing or not usable: these tests run VMs\n");
		return 1;
	}
	const char *tmp = argc > 1 ? argv[1] : "/tmp";
	int runs = argc > 2 ? atoi(argv[2]) : 1000;
	ok(!strcmp(husk_version(), HUSK_VERSION), "husk_version: %s", husk_version());
	bad_inputs();
	every_option();
	basic_runs();
	husk_errors();
	streams();
	disks(tmp);
	staged(tmp);
	threads();
	many_runs(runs);
	return tap_done();
}
