/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "audit.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "disks/copyin.h"
#include "disks/extract.h"
#include "review/apply.h"
#include "review/review.h"

extern char **environ;

#define DIFF_LINES 200 /* of one file's diff; the rest is counted */
#define TEXT_PROBE 8192 /* a NUL in these first bytes: a binary file (as diff and git decide) */

static const char *shown(const char *s, char buf[600])
{
	return str_escape(s, strlen(s), buf, 600);
}

static void mode_text(const char *type, int64_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	out[0] = type[0] == 'd' ? 'd' : type[0] == 's' ? 'l' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (0400 >> i) ? rwx[i] : '-';
	out[10] = 0;
}

static const char *verb(json_t *c)
{
	static const char *const v[][2] = { { "create", "created" }, { "modify", "modified" }, { "replace", "replaced" },
					    { "rename", "renamed" }, { "delete", "deleted" }, { "mode", "mode" } };
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		if (!strcmp(change_str(c, "action"), v[i][0]))
			return v[i][1];
	return "?";
}

/* Whether the host's entry at the change's path (a rename: its old name)
 * is still what was copied in, or missing where nothing was; a regular
 * file's fd in *fd (to read; -1: none). */
static int host_now(int top, json_t *c, int *fd)
{
	char name[256];
	struct stat s;
	*fd = -1;
	int rename = !strcmp(change_str(c, "action"), "rename"); /* before: the old name's */
	int dir = top < 0 ? -1 : extract_host_parent(top, change_str(c, rename ? "from" : "path"), 0, name);
	if (dir < 0)
		return top >= 0 && !json_object_get(c, "before");
	int have = fstatat(dir, name, &s, AT_SYMLINK_NOFOLLOW) == 0;
	json_t *b = json_object_get(c, "before");
	int same = !have ? !b || !strcmp(change_str(c, "action"), "delete") : stage_unchanged(&s, b);
	if (have && S_ISREG(s.st_mode))
		*fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (dir != top)
		close(dir);
	return same;
}

/* Deletions under a deleted directory are shown with it. */
static int folded(json_t *c, const char *dir)
{
	size_t n = strlen(dir);
	return dir[0] && !strcmp(change_str(c, "action"), "delete") && !strncmp(change_str(c, "path"), dir, n) &&
	       change_str(c, "path")[n] == '/';
}

static void change_line(FILE *out, json_t *c, int top, size_t inside)
{
	char p[600], q[600], a[16], b[16], m1[11], m2[11];
	const char *type = change_str(c, "type"), *action = change_str(c, "action"), *state = change_str(c, "state");
	json_t *before = json_object_get(c, "before");
	const char *denied = change_str(c, "denied");
	fprintf(out, "  %-9s %s", denied ? "DENIED" : verb(c), shown(change_str(c, "path"), p));
	if (!strcmp(type, "dir") && strcmp(action, "mode"))
		fprintf(out, "/");
	mode_text(type, change_num(c, "mode"), m2);
	if (denied)
		fprintf(out, "  (%s %s: %s; never applied)", verb(c), type, denied);
	else if (!strcmp(action, "rename"))
		fprintf(out, "  (from %s)", shown(change_str(c, "from"), q));
	else if (!strcmp(type, "symlink") && strcmp(action, "delete"))
		fprintf(out, " -> %s", shown(change_str(c, "target"), q));
	else if (!strcmp(action, "create") && !strcmp(type, "file"))
		fprintf(out, "  (%s, %s)", size_text((double)change_num(c, "size"), a, sizeof a), m2);
	else if (!strcmp(action, "modify") && !strcmp(type, "file")) {
		fprintf(out, "  (%s -> %s", size_text((double)change_num(before, "size"), a, sizeof a),
			size_text((double)change_num(c, "size"), b, sizeof b));
		mode_text(type, change_num(before, "mode"), m1);
		if (strcmp(m1, m2))
			fprintf(out, ", %s -> %s", m1, m2);
		fprintf(out, ")");
	} else if (!strcmp(action, "replace"))
		fprintf(out, "  (a %s, now a %s)", change_str(before, "type"), type);
	else if (!strcmp(action, "mode")) {
		mode_text(type, change_num(before, "mode"), m1);
		fprintf(out, "  (%s -> %s)", m1, m2);
	} else if (!strcmp(action, "delete") && inside)
		fprintf(out, "  (with the %zu entr%s in it)", inside, inside == 1 ? "y" : "ies");
	else if (!strcmp(action, "delete") && !strcmp(type, "file"))
		fprintf(out, "  (%s)", size_text((double)change_num(before, "size"), a, sizeof a));
	if (strcmp(state, "staged"))
		fprintf(out, "  [%s]", state);
	else if (!denied && top >= 0) {
		int fd, same = host_now(top, c, &fd);
		if (fd >= 0)
			close(fd);
		if (!same)
			fprintf(out, "  [the host has changed it since the run: applying it will be refused]");
	}
	fprintf(out, "\n");
}

static int probe_binary(int fd)
{
	char buf[TEXT_PROBE];
	ssize_t k = fd < 0 ? 0 : pread(fd, buf, sizeof buf, 0);
	return k > 0 && memchr(buf, 0, (size_t)k) != NULL;
}

/* One line of a diff as the terminal gets it: the program wrote the data,
 * so every control character (C0 but tab, DEL, C1 as U+0080..U+009F) and
 * every byte that is not well-formed UTF-8 is shown escaped (\xNN): a
 * file cannot move the cursor, retitle the window or answer for the
 * reader. */
static void put_line(FILE *out, const char *line, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)line[i];
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		int good = n && i + n <= len;
		for (size_t k = 1; good && k < n; k++)
			good = ((unsigned char)line[i + k] & 0xc0) == 0x80;
		if (good && n == 2 && c == 0xc2 && (unsigned char)line[i + 1] < 0xa0)
			good = 0; /* a C1 control */
		if (good && n == 1 && ((c < 0x20 && c != '\t') || c == 0x7f))
			good = 0;
		if (good) {
			fwrite(line + i, 1, n, out);
			i += n;
		} else {
			fprintf(out, "\\x%02x", c);
			i++;
		}
	}
}

/* diff -u of the host's file (old, or /dev/null) and the staged one, cut
 * at DIFF_LINES, indented.  Spawned (no copy of husk's memory): once per
 * file of a large change. */
static void run_diff(FILE *out, const char *path, int old, int new, int raw)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	int o = old >= 0 ? dup(old) : -1, w = dup(new); /* inherited: no close-on-exec */
	char a[4200], b[4200], oldp[32], newp[32], shown_path[4096];
	str_escape(path, strlen(path), shown_path, sizeof shown_path); /* labels on one line, no controls */
	snprintf(a, sizeof a, "a/%s", shown_path);
	snprintf(b, sizeof b, "b/%s", shown_path);
	snprintf(oldp, sizeof oldp, o >= 0 ? "/dev/fd/%d" : "/dev/null", o);
	snprintf(newp, sizeof newp, "/dev/fd/%d", w);
	char *argv[] = { "diff", "-u", "--label", a, "--label", b, oldp, newp, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	pid_t pid;
	int bad = w < 0 || posix_spawnp(&pid, "diff", &fa, NULL, argv, environ) != 0;
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (o >= 0)
		close(o);
	if (w >= 0)
		close(w);
	FILE *f = bad ? NULL : fdopen(p[0], "r");
	char line[4096];
	long n = 0;
	while (f && fgets(line, sizeof line, f)) {
		if (raw) { /* for a program: the diff as diff wrote it */
			fputs(line, out);
			continue;
		}
		if (n++ >= DIFF_LINES)
			continue;
		size_t len = strlen(line);
		int nl = len && line[len - 1] == '\n';
		fputs("    ", out);
		put_line(out, line, len - (size_t)nl);
		fputc('\n', out);
	}
	if (n > DIFF_LINES)
		fprintf(out, "    ... %ld more lines of diff\n", n - DIFF_LINES);
	if (f)
		fclose(f);
	else
		close(p[0]);
	if (!bad)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	if (bad)
		fprintf(out, "    (no diff: diff(1) could not be run)\n");
}

/* What a file's change does to its contents: a diff for text, sizes and
 * digests for binary data; raw: for a program (no indent, no cut, no
 * escapes: the diff's bytes). */
static void show_contents(FILE *out, struct stage *s, int top, json_t *c, int raw)
{
	const char *action = change_str(c, "action");
	if (strcmp(change_str(c, "type"), "file") || json_object_get(c, "denied") || !json_object_get(c, "data") ||
	    strcmp(change_str(c, "state"), "staged"))
		return;
	int new = stage_data_open(s, c), old = -1;
	if (new < 0)
		return;
	if (!strcmp(action, "rename")) /* against the old name's data */
		old = top < 0 ? -1 : extract_host_open(top, change_str(c, "from"));
	else if (strcmp(action, "create")) {
		host_now(top, c, &old);
	}
	if (probe_binary(new) || probe_binary(old)) {
		char a[16], b[16], d1[65] = "", d2[65] = "";
		struct stat st;
		if (old >= 0 && fstat(old, &st) == 0)
			stage_sha256(old, d1);
		stage_sha256(new, d2);
		if (!raw)
			d1[16] = d2[16] = 0; /* 64 bits shown: enough to tell */
		fputs(raw ? "" : "    ", out);
		if (old >= 0)
			fprintf(out, "binary: %s, sha256 %s... -> %s, sha256 %s...\n",
				size_text((double)st.st_size, a, sizeof a), d1, size_text((double)change_num(c, "size"), b, sizeof b), d2);
		else
			fprintf(out, "binary: %s, sha256 %s...\n", size_text((double)change_num(c, "size"), b, sizeof b), d2);
	} else {
		run_diff(out, change_str(c, "path"), old, new, raw);
	}
	if (old >= 0)
		close(old);
	close(new);
}

/* The header, the run's denials and limits, a line per change (with its
 * diff when contents). */
static void summary(FILE *out, struct stage *s, int top, int contents)
{
	size_t i, n = json_array_size(s->changes);
	json_t *c;
	char w[600], p[600];
	json_t *run = json_object_get(s->manifest, "run");
	fprintf(out, "husk review: %zu change%s to %s, staged in %s\n", n, n == 1 ? "" : "s",
		shown(change_str(s->manifest, "workdir"), w), shown(s->path, p));
	if (json_is_object(run)) {
		fprintf(out, "  the run: %s\n", change_str(run, "ended") ? change_str(run, "ended") : "?");
		json_t *f;
		size_t k;
		json_array_foreach(json_object_get(run, "findings"), k, f) {
			fprintf(out, "  ");
			audit_event_text(out, f);
		}
	}
	const char *dir = "";
	json_array_foreach(s->changes, i, c) {
		if (folded(c, dir))
			continue;
		size_t inside = 0;
		if (!strcmp(change_str(c, "action"), "delete") && !strcmp(change_str(c, "type"), "dir")) {
			dir = change_str(c, "path");
			for (size_t j = i + 1; j < n && folded(json_array_get(s->changes, j), dir); j++)
				inside++;
		}
		change_line(out, c, top, inside);
		if (contents)
			show_contents(out, s, top, c, 0);
	}
}

/* ---- asking -------------------------------------------------------------- */

/* A stop signal (Ctrl-C, a hang-up) during the questions: the answer is
 * "keep them staged". */
static volatile sig_atomic_t interrupted;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* One line from the terminal: its first key if one of keys, else asked
 * again; 0 at the end of input or when interrupted.  Read with poll and
 * read (no stdio buffer): a signal before the read cannot be missed. */
static int answer(FILE *in, FILE *out, const char *question, const char *keys)
{
	int fd = fileno(in);
	for (;;) {
		fprintf(out, "%s ", question);
		fflush(out);
		char line[256];
		size_t n = 0;
		while (!interrupted && n < sizeof line - 1) {
			struct pollfd p = { fd, POLLIN, 0 };
			if (poll(&p, 1, 100) <= 0)
				continue;
			ssize_t k = read(fd, line + n, sizeof line - 1 - n);
			if (k <= 0)
				return 0;
			n += (size_t)k;
			if (line[n - 1] == '\n')
				break;
		}
		if (interrupted) {
			fputc('\n', out);
			return 0;
		}
		line[n] = 0;
		char k = line[strspn(line, " \t")];
		if (k && k != '\n' && strchr(keys, k))
			return k;
		fprintf(out, "  (one of: %s)\n", keys);
	}
}

struct picks {
	unsigned char *v; /* per change: 1 apply, 2 drop */
	unsigned char which;
};

static int picked(json_t *c, size_t i, void *ctx)
{
	struct picks *p = ctx;
	(void)c;
	return p->v[i] == p->which;
}

/* A created directory with changes in it is made for them: not asked. */
static int has_inside(struct stage *s, size_t i, json_t *c)
{
	json_t *next = json_array_get(s->changes, i + 1);
	const char *p = change_str(c, "path");
	size_t n = strlen(p);
	return !strcmp(change_str(c, "type"), "dir") && !strcmp(change_str(c, "action"), "create") && next &&
	       !strncmp(change_str(next, "path"), p, n) && change_str(next, "path")[n] == '/';
}

/* Each change by itself: 1 apply, 2 drop, 0 undecided (quit). */
static void one_by_one(struct stage *s, int top, FILE *in, FILE *out, unsigned char *v)
{
	size_t i, n = json_array_size(s->changes);
	json_t *c;
	const char *dir = "";
	size_t di = 0;
	int quit = 0;
	json_array_foreach(s->changes, i, c) {
		if (folded(c, dir)) {
			v[i] = v[di]; /* with the deleted directory's answer */
			continue;
		}
		dir = !strcmp(change_str(c, "action"), "delete") ? change_str(c, "path") : "";
		di = i;
		if (quit || !change_pending(c) || has_inside(s, i, c))
			continue;
		change_line(out, c, top, 0);
		show_contents(out, s, top, c, 0);
		int k = answer(in, out, "  apply this change: [y]es, [n]o, or [q]uit and keep the rest staged?", "ynq");
		if (k == 'y')
			v[i] = 1;
		else if (k == 'n')
			v[i] = 2;
		else
			quit = 1;
	}
	/* a created directory goes with what goes in it */
	for (size_t j = n; j-- > 0;) {
		c = json_array_get(s->changes, j);
		if (!has_inside(s, j, c) || !change_pending(c))
			continue;
		const char *p = change_str(c, "path");
		size_t len = strlen(p);
		unsigned char any = 0, all_dropped = 1;
		for (size_t k = j + 1; k < n; k++) {
			const char *q = change_str(json_array_get(s->changes, k), "path");
			if (strncmp(q, p, len) || q[len] != '/')
				break;
			any |= v[k] == 1;
			all_dropped &= v[k] == 2 || !change_pending(json_array_get(s->changes, k));
		}
		v[j] = any ? 1 : all_dropped ? 2 : 0;
	}
}

int review_session(struct stage *s, FILE *in, FILE *out, struct apply_stats *ast)
{
	char err[512], p[600];
	const char *workdir = change_str(s->manifest, "workdir");
	int top = copyin_open_dir(workdir, err, sizeof err);
	summary(out, s, top, 1);
	size_t n = stage_pending(s);
	int status = 0;
	if (!in) {
		fprintf(out, "husk: %zu change%s staged in %s: husk review|apply|discard %s\n", n, n == 1 ? "" : "s",
			shown(s->path, p), p);
		goto out;
	}
	if (!n) {
		fprintf(out, "nothing to apply\n");
		if (stage_settle(s, err, sizeof err))
			fprintf(out, "husk: %s\n", err);
		goto out;
	}
	unsigned char *v = calloc(json_array_size(s->changes) + 1, 1);
	if (!v) {
		status = EXIT_INTERNAL;
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_interrupt }, old[4];
	interrupted = 0;
	for (int i = 0; i < 4; i++)
		sigaction(stop_signals[i], &sa, &old[i]);
	char q[200];
	snprintf(q, sizeof q, "apply [a]ll %zu, [n]one (discard them), [f]ile by file, or [k]eep them staged?", n);
	int k = answer(in, out, q, "anfk");
	if (k == 'a' || k == 'n')
		memset(v, k == 'a' ? 1 : 2, json_array_size(s->changes));
	else if (k == 'f')
		one_by_one(s, top, in, out, v);
	struct picks apply = { v, 1 }, drop = { v, 2 };
	struct apply_stats st = { 0 };
	*ast = st;
	stage_drop(s, picked, &drop);
	if (memchr(v, 1, json_array_size(s->changes)))
		status = stage_apply(s, picked, &apply, &st, err, sizeof err);
	else if (stage_settle(s, err, sizeof err))
		status = EXIT_WORKDIR;
	if (status == EXIT_USAGE || (status && !st.refused))
		fprintf(out, "husk: %s\n", err);
	size_t left = stage_pending(s);
	fprintf(out, "husk: %llu applied to %s, %llu refused", (unsigned long long)st.applied, shown(workdir, p),
		(unsigned long long)st.refused);
	if (left)
		fprintf(out, "; %zu still staged in %s (husk review|apply|discard it)\n", left, shown(s->path, p));
	else
		fprintf(out, "; nothing left staged\n");
	free(v);
	*ast = st;
	for (int i = 0; i < 4; i++)
		sigaction(stop_signals[i], &old[i], NULL);
out:
	if (top >= 0)
		close(top);
	return status;
}

/* ---- the commands --------------------------------------------------------- */

/* husk review STAGE --diff PATH: the change at PATH (a rename: at either
 * name) as a diff, for a program (the library); escaped on a terminal. */
static int review_diff(struct stage *s, const char *path)
{
	char err[512];
	size_t i;
	json_t *c;
	json_array_foreach(s->changes, i, c) {
		const char *from = change_str(c, "from");
		if (strcmp(change_str(c, "path"), path) && !(from && !strcmp(from, path)))
			continue;
		int top = copyin_open_dir(change_str(s->manifest, "workdir"), err, sizeof err);
		show_contents(stdout, s, top, c, !isatty(1));
		if (top >= 0)
			close(top);
		return 0;
	}
	char p[600];
	fprintf(stderr, "husk: review: no change at %s in %s\n", shown(path, p), s->path);
	return EXIT_USAGE;
}

int review_command(int argc, char **argv)
{
	const char *cmd = argv[1];
	int json = argc > 3 && !strcmp(cmd, "review") && !strcmp(argv[3], "--json");
	const char *diff = argc == 5 && !strcmp(cmd, "review") && !strcmp(argv[3], "--diff") ? argv[4] : NULL;
	if (argc < 3 || argv[2][0] == '-' || (!strcmp(cmd, "review") && !diff && argc > 3 + json)) {
		fprintf(stderr, "usage: husk review STAGE [--json | --diff PATH]\n"
				"       husk apply STAGE [PATH...]\n"
				"       husk discard STAGE [PATH...]\n");
		return EXIT_USAGE;
	}
	char err[512];
	struct stage s;
	if (stage_open(argv[2], &s, err, sizeof err)) {
		fprintf(stderr, "husk: %s: %s\n", cmd, err);
		return EXIT_USAGE;
	}
	struct stage_paths paths = { argv + 3, argc - 3 };
	int status = 0;
	if (diff) {
		status = review_diff(&s, diff);
	} else if (!strcmp(cmd, "review") && json) {
		status = json_dumpf(s.manifest, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) ? EXIT_INTERNAL : 0;
		printf("\n");
	} else if (!strcmp(cmd, "review")) {
		int ask = isatty(0) && isatty(1);
		struct apply_stats st = { 0 };
		status = review_session(&s, ask ? stdin : NULL, stdout, &st);
	} else if (!strcmp(cmd, "apply")) {
		struct apply_stats st;
		status = stage_apply(&s, stage_want_paths, &paths, &st, err, sizeof err);
		if (status == EXIT_USAGE || (status && !st.refused))
			fprintf(stderr, "husk: apply: %s\n", err);
		else
			fprintf(stderr, "husk: apply: %llu applied, %llu refused%s\n", (unsigned long long)st.applied,
				(unsigned long long)st.refused, st.refused ? " (named above; still staged)" : "");
	} else {
		stage_drop(&s, stage_want_paths, &paths);
		if (stage_settle(&s, err, sizeof err)) {
			fprintf(stderr, "husk: discard: %s\n", err);
			status = EXIT_WORKDIR;
		}
	}
	stage_close(&s);
	return status;
}
