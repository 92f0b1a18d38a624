/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk: a run.  husk is started as its own process (posix_spawn: the
 * VMM confines itself with seccomp and namespaces, which it cannot do in
 * the caller's process, and a fork without exec of a threaded caller could
 * deadlock); the library feeds its stdin, takes its output and its audit
 * records (a pipe husk inherits as fd 3: --audit /proc/self/fd/3). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib_internal.h"

extern char **environ;

#ifndef HUSK_BIN_DEFAULT
#define HUSK_BIN_DEFAULT "/usr/local/bin/husk"
#endif

/* What husk's stderr ended with, for the message of an error. */
#define TAIL_MAX 2048

/* Where husk finds the audit pipe: the descriptor it inherits. */
#define AUDIT_FD 3
#define AUDIT_PATH "/proc/self/fd/3"

struct spawn {
	pid_t pid;
	int in;     /* our end of its stdin (a socket: written with MSG_NOSIGNAL), or -1 */
	int out[4]; /* our ends of its stdout [1], stderr [2] and audit pipe [AUDIT_FD], or -1 */
};

int husk_lib_buffer_add(struct buffer *b, const void *data, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len + 1)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p)
			return -1;
		b->data = p, b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = 0;
	return 0;
}

/* The husk executable: the config's, $HUSK_BIN, the one installed beside
 * this library (LIBDIR/../bin/husk, as make install puts them, wherever
 * that is), or PREFIX/bin/husk.  buf holds the second-to-last. */
const char *husk_lib_husk_path(const char *configured, char *buf, size_t size)
{
	const char *env = getenv("HUSK_BIN");
	if (configured)
		return configured;
	if (env && env[0])
		return env;
	Dl_info info;
	if (dladdr((void *)husk_run, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		if (slash && snprintf(buf, size, "%.*s/../bin/husk", (int)(slash - info.dli_fname), info.dli_fname) <
				     (int)size && access(buf, X_OK) == 0)
			return buf;
	}
	return HUSK_BIN_DEFAULT;
}

/* husk run OPTIONS --audit AUDIT_PATH -- PROGRAM ARGS. */
static char **command_line(const husk_config *c, const char *path)
{
	size_t n = 0;
	char **argv = calloc(c->options.n + c->args.n + 8, sizeof *argv);
	if (!argv)
		return NULL;
	argv[n++] = (char *)path;
	argv[n++] = "run";
	for (size_t i = 0; i < c->options.n; i++)
		argv[n++] = c->options.v[i];
	argv[n++] = "--audit";
	argv[n++] = AUDIT_PATH;
	argv[n++] = "--";
	argv[n++] = c->program;
	for (size_t i = 0; i < c->args.n; i++)
		argv[n++] = c->args.v[i];
	return argv;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void spawn_close(struct spawn *sp)
{
	close_fd(&sp->in);
	for (int s = 1; s <= AUDIT_FD; s++)
		close_fd(&sp->out[s]);
}

/* A pipe whose write end (theirs) is not one of husk's standard streams:
 * it must survive the file actions that set those up (a caller may have
 * closed its own). */
static int pipe_for_husk(int *ours, int *theirs)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	if (p[1] <= 2) {
		int fd = fcntl(p[1], F_DUPFD_CLOEXEC, 3);
		int e = errno;
		close(p[1]);
		if (fd < 0) {
			close(p[0]);
			return e;
		}
		p[1] = fd;
	}
	*ours = p[0], *theirs = p[1];
	return 0;
}

static int start(const husk_config *c, struct spawn *sp, struct husk_error *err)
{
	*sp = (struct spawn){ .pid = -1, .in = -1, .out = { -1, -1, -1, -1 } };
	int theirs[4] = { -1, -1, -1, -1 };
	int e = pipe_for_husk(&sp->out[AUDIT_FD], &theirs[AUDIT_FD]);
	if (!e && c->stdin_mode == STDIN_BYTES && c->stdin_len) { /* a socket: written with MSG_NOSIGNAL */
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			e = errno;
		else {
			sp->in = sv[0], theirs[0] = sv[1];
			shutdown(sv[0], SHUT_RD);
			shutdown(sv[1], SHUT_WR);
			fcntl(sp->in, F_SETFL, O_NONBLOCK);
		}
	} else if (!e && c->stdin_mode != STDIN_FD) { /* none: a pipe already at its end (no /dev/null needed) */
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			e = errno;
		else
			theirs[0] = p[0], close(p[1]);
	}
	for (int s = 1; s <= 2 && !e; s++)
		if (c->out[s].fn || c->out[s].fd < 0)
			e = pipe_for_husk(&sp->out[s], &theirs[s]);
	char path[4096];
	char **argv = e ? NULL : command_line(c, husk_lib_husk_path(c->husk_path, path, sizeof path));
	if (!e && !argv)
		e = ENOMEM;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	if (!e) {
		posix_spawn_file_actions_init(&fa);
		posix_spawnattr_init(&attr);
		/* husk starts as from a shell: no signal blocked or ignored (the
		 * caller's, e.g. Python's ignored SIGPIPE, are not husk's). */
		sigset_t none, all;
		sigemptyset(&none);
		sigfillset(&all);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setsigdefault(&attr, &all);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
		/* (glibc's dup2 action clears close-on-exec where an fd is its own
		 * target, as POSIX asks: a caller's fd 1 for stream 1 works too) */
		e = posix_spawn_file_actions_adddup2(&fa, c->stdin_mode == STDIN_FD ? c->stdin_fd : theirs[0], 0);
		for (int s = 1; s <= 2 && !e; s++)
			e = posix_spawn_file_actions_adddup2(&fa, theirs[s] >= 0 ? theirs[s] : c->out[s].fd, s);
		if (!e) /* after the streams: theirs[AUDIT_FD] is none of 0-2, a caller's fd given as one may be 3 */
			e = posix_spawn_file_actions_adddup2(&fa, theirs[AUDIT_FD], AUDIT_FD);
		if (!e) {
			e = posix_spawn(&sp->pid, argv[0], &fa, &attr, argv, environ);
			if (e) {
				sp->pid = -1;
				husk_lib_fail(err, HUSK_E_START, e, "cannot start %s: %s", argv[0], strerror(e));
			}
		}
		posix_spawn_file_actions_destroy(&fa);
		posix_spawnattr_destroy(&attr);
	}
	free(argv);
	for (int i = 0; i <= AUDIT_FD; i++)
		close_fd(&theirs[i]);
	if (e) {
		if (!err || err->code != HUSK_E_START)
			husk_lib_fail(err, HUSK_E_SYSTEM, e, "cannot set up a run: %s", strerror(e));
		spawn_close(sp);
		return -1;
	}
	return 0;
}

/* Keep the last TAIL_MAX bytes of stderr. */
static void keep_tail(char *tail, size_t *n, const char *data, size_t len)
{
	if (len >= TAIL_MAX) {
		memcpy(tail, data + len - TAIL_MAX, TAIL_MAX);
		*n = TAIL_MAX;
		return;
	}
	if (*n + len > TAIL_MAX) {
		size_t drop = *n + len - TAIL_MAX;
		memmove(tail, tail + drop, *n - drop);
		*n -= drop;
	}
	memcpy(tail + *n, data, len);
	*n += len;
}

/* stdin written; stdout, stderr and the audit pipe read, until all end.
 * 0, or -1 with *err (the run was then stopped). */
static int pump(const husk_config *c, struct spawn *sp, struct buffer out[4], char *tail, size_t *tail_len,
		struct husk_error *err)
{
	size_t written = 0;
	int stopped = 0, failed = 0;
	char buf[65536];
	for (;;) {
		struct pollfd p[4] = { { sp->in, POLLOUT, 0 }, { sp->out[1], POLLIN, 0 }, { sp->out[2], POLLIN, 0 },
				       { sp->out[AUDIT_FD], POLLIN, 0 } };
		if (p[1].fd < 0 && p[2].fd < 0 && p[3].fd < 0)
			break;
		if (poll(p, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			failed = husk_lib_fail(err, HUSK_E_SYSTEM, errno, "poll: %s", strerror(errno));
			break;
		}
		if (sp->in >= 0 && p[0].revents) {
			ssize_t k = send(sp->in, (char *)c->stdin_data + written, c->stdin_len - written, MSG_NOSIGNAL);
			if (k > 0)
				written += (size_t)k;
			if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == c->stdin_len)
				close_fd(&sp->in); /* all given, or husk no longer reads it */
		}
		for (int s = 1; s <= AUDIT_FD; s++) {
			if (sp->out[s] < 0 || !p[s].revents)
				continue;
			ssize_t k = read(sp->out[s], buf, sizeof buf);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				close_fd(&sp->out[s]);
				continue;
			}
			if (s == 2)
				keep_tail(tail, tail_len, buf, (size_t)k);
			if (s != AUDIT_FD && (stopped || failed))
				continue; /* drained until husk is gone */
			if (s != AUDIT_FD && c->out[s].fn) {
				if (c->out[s].fn(c->out[s].arg, s, buf, (size_t)k)) {
					stopped = 1;
					kill(sp->pid, SIGTERM); /* husk ends the run and tidies up */
				}
			} else if (husk_lib_buffer_add(&out[s], buf, (size_t)k)) {
				if (!failed)
					failed = husk_lib_fail(err, HUSK_E_SYSTEM, ENOMEM, "out of memory for the run's output");
				kill(sp->pid, SIGTERM);
			}
		}
	}
	close_fd(&sp->in);
	if (stopped)
		return husk_lib_fail(err, HUSK_E_CALLBACK, 0, "an output callback stopped the run");
	return failed ? -1 : 0;
}

int husk_lib_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

husk_result *husk_run(const husk_config *c, struct husk_error *err)
{
	if (err)
		*err = (struct husk_error){ 0 };
	if (!c) {
		husk_lib_fail(err, HUSK_E_INVALID, 0, "husk_run: no config");
		return NULL;
	}
	struct spawn sp;
	if (start(c, &sp, err))
		return NULL;
	struct buffer out[4] = { 0 };
	char tail[TAIL_MAX + 1];
	size_t tail_len = 0;
	int pumped = pump(c, &sp, out, tail, &tail_len, err);
	int status = husk_lib_wait(sp.pid);
	tail[tail_len] = 0;
	spawn_close(&sp);
	char *audit = out[AUDIT_FD].data ? out[AUDIT_FD].data : strdup("");
	husk_result *r = NULL;
	if (status < 0)
		husk_lib_fail(err, HUSK_E_SYSTEM, errno, "waitpid: %s", strerror(errno));
	else if (!audit)
		husk_lib_fail(err, HUSK_E_SYSTEM, ENOMEM, "out of memory for the run's audit records");
	else if (pumped == 0)
		r = husk_lib_result_make(status, audit, out, tail, err), audit = NULL;
	free(audit);
	if (!r)
		for (int s = 1; s <= 2; s++)
			free(out[s].data);
	return r;
}
