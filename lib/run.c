/* SPDX-License-Identifier: GPL-2.0-only */
/* libhusk: a run.  husk is started as its own process (posix_spawn: the
 * VMM confines itself with seccomp and namespaces, which it cannot do in
 * the caller's process, and a fork without exec of a threaded caller could
 * deadlock); the library feeds its stdin, takes its output and reads its
 * audit file. */
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

struct spawn {
	pid_t pid;
	int in;       /* our end of its stdin (a socket: written with MSG_NOSIGNAL), or -1 */
	int out[3];   /* our ends of its stdout [1] and stderr [2], or -1 */
	int audit;    /* the audit file, open */
	char audit_path[4096];
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

/* husk run OPTIONS --audit FILE -- PROGRAM ARGS. */
static char **command_line(const husk_config *c, const char *path, const char *audit)
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
	argv[n++] = (char *)audit;
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
	close_fd(&sp->out[1]);
	close_fd(&sp->out[2]);
	close_fd(&sp->audit);
	if (sp->audit_path[0])
		unlink(sp->audit_path);
	sp->audit_path[0] = 0;
}

/* Where the audit file goes: $TMPDIR, else /dev/shm (memory: creating and
 * removing a file on /tmp's disk file system cost ~0.1 ms a run here), else
 * /tmp. */
static const char *temp_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	if (tmp && tmp[0])
		return tmp;
	return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

static int start(const husk_config *c, struct spawn *sp, struct husk_error *err)
{
	*sp = (struct spawn){ .pid = -1, .in = -1, .out = { -1, -1, -1 }, .audit = -1 };
	int theirs[3] = { -1, -1, -1 };
	const char *tmp = temp_dir();
	snprintf(sp->audit_path, sizeof sp->audit_path, "%s/husk-audit-XXXXXX", tmp);
	sp->audit = mkostemp(sp->audit_path, O_CLOEXEC);
	if (sp->audit < 0) {
		int e = errno;
		sp->audit_path[0] = 0;
		return husk_lib_fail(err, HUSK_E_SYSTEM, e, "cannot make a temporary audit file in %s: %s", tmp,
				     strerror(e));
	}
	int e = 0;
	if (c->stdin_mode != STDIN_FD) { /* bytes, or none: a socket whose other end is closed (no /dev/null needed) */
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			e = errno;
		else {
			sp->in = sv[0], theirs[0] = sv[1];
			shutdown(sv[0], SHUT_RD);
			shutdown(sv[1], SHUT_WR);
			fcntl(sp->in, F_SETFL, O_NONBLOCK);
		}
	}
	for (int s = 1; s <= 2 && !e; s++) {
		if (!c->out[s].fn && c->out[s].fd >= 0)
			continue;
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			e = errno;
		else
			sp->out[s] = p[0], theirs[s] = p[1];
	}
	char path[4096];
	char **argv = e ? NULL : command_line(c, husk_lib_husk_path(c->husk_path, path, sizeof path), sp->audit_path);
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
	for (int i = 0; i < 3; i++)
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

/* stdin written, stdout and stderr read, until both end.  0, or -1 with
 * *err (the run was then stopped). */
static int pump(const husk_config *c, struct spawn *sp, struct buffer out[3], char *tail, size_t *tail_len,
		struct husk_error *err)
{
	size_t written = 0;
	int stopped = 0, failed = 0;
	char buf[65536];
	if (sp->in >= 0 && c->stdin_len == 0)
		close_fd(&sp->in);
	while (sp->out[1] >= 0 || sp->out[2] >= 0) {
		struct pollfd p[3] = { { sp->out[1], POLLIN, 0 }, { sp->out[2], POLLIN, 0 }, { sp->in, POLLOUT, 0 } };
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			failed = husk_lib_fail(err, HUSK_E_SYSTEM, errno, "poll: %s", strerror(errno));
			break;
		}
		if (sp->in >= 0 && p[2].revents) {
			ssize_t k = send(sp->in, (char *)c->stdin_data + written, c->stdin_len - written, MSG_NOSIGNAL);
			if (k > 0)
				written += (size_t)k;
			if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == c->stdin_len)
				close_fd(&sp->in); /* all given, or husk no longer reads it */
		}
		for (int s = 1; s <= 2; s++) {
			if (sp->out[s] < 0 || !p[s - 1].revents)
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
			if (stopped || failed)
				continue; /* drained until husk is gone */
			if (c->out[s].fn) {
				if (c->out[s].fn(c->out[s].arg, s, buf, (size_t)k)) {
					stopped = 1;
					kill(sp->pid, SIGTERM); /* husk ends the run and tidies up */
				}
			} else if (husk_lib_buffer_add(&out[s], buf, (size_t)k)) {
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

static char *read_all(int fd)
{
	struct buffer b = { 0 };
	char buf[16384];
	ssize_t k;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	while ((k = read(fd, buf, sizeof buf)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || husk_lib_buffer_add(&b, buf, (size_t)k)) {
			free(b.data);
			return NULL;
		}
	}
	return b.data ? b.data : strdup("");
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
	struct buffer out[3] = { 0 };
	char tail[TAIL_MAX + 1];
	size_t tail_len = 0;
	int pumped = pump(c, &sp, out, tail, &tail_len, err);
	int status = husk_lib_wait(sp.pid);
	tail[tail_len] = 0;
	char *audit = read_all(sp.audit);
	spawn_close(&sp);
	husk_result *r = NULL;
	if (status < 0)
		husk_lib_fail(err, HUSK_E_SYSTEM, errno, "waitpid: %s", strerror(errno));
	else if (!audit)
		husk_lib_fail(err, HUSK_E_SYSTEM, errno, "cannot read the run's audit file");
	else if (pumped == 0)
		r = husk_lib_result_make(status, audit, out, tail, err), audit = NULL;
	free(audit);
	if (!r)
		for (int s = 1; s <= 2; s++)
			free(out[s].data);
	return r;
}
