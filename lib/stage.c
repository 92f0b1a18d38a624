/* SPDX-License-Identifier: GPL-2.0-only */
/* husk_stage_*: husk review|apply|discard, started as husk_run starts a
 * run (posix_spawn; its stdout collected, the last line of its stderr the
 * error's message). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib_internal.h"

extern char **environ;

/* husk CMD STAGE [ARGS...]: its exit status, its stdout (to free) in *out
 * if out is not NULL, the last line of its stderr in err's message; -1
 * with *err when it could not be started. */
static int husk_command(const char *cmd, const char *stage, const char *const *args, size_t n, char **out,
			struct husk_error *err)
{
	if (!stage || (n && !args))
		return husk_lib_fail(err, HUSK_E_INVALID, 0, "no stage given");
	char path[4200];
	const char **argv = calloc(n + 5, sizeof *argv);
	int o[2] = { -1, -1 }, e[2] = { -1, -1 };
	if (!argv || pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
		int en = errno;
		free(argv);
		for (int i = 0; i < 2; i++) {
			if (o[i] >= 0)
				close(o[i]);
			if (e[i] >= 0)
				close(e[i]);
		}
		return husk_lib_fail(err, HUSK_E_SYSTEM, en, "%s", strerror(en));
	}
	size_t k = 0;
	argv[k++] = husk_lib_husk_path(NULL, path, sizeof path);
	argv[k++] = cmd;
	argv[k++] = stage;
	for (size_t i = 0; i < n; i++)
		argv[k++] = args[i];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(o[1]), close(e[1]);
	if (rc) {
		close(o[0]), close(e[0]);
		husk_lib_fail(err, HUSK_E_START, rc, "cannot start %s: %s", argv[0], strerror(rc));
		free(argv);
		return -1;
	}
	free(argv);
	struct buffer b[2] = { { 0 }, { 0 } };
	struct pollfd p[2] = { { o[0], POLLIN, 0 }, { e[0], POLLIN, 0 } };
	int failed = 0;
	for (int open_fds = 2; open_fds;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			char buf[16384];
			ssize_t got = p[i].fd >= 0 && p[i].revents ? read(p[i].fd, buf, sizeof buf) : -2;
			if (got == -2 || (got < 0 && errno == EINTR))
				continue;
			if (got > 0 && husk_lib_buffer_add(&b[i], buf, (size_t)got) == 0)
				continue;
			failed |= got < 0 || got > 0;
			close(p[i].fd);
			p[i].fd = -1;
			open_fds--;
		}
	}
	for (int i = 0; i < 2; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	int status = husk_lib_wait(pid);
	failed |= status < 0;
	char *line = b[1].data ? b[1].data : "";
	size_t len = b[1].len;
	while (len && line[len - 1] == '\n')
		line[--len] = 0;
	char *last = strrchr(line, '\n');
	if (status || failed)
		husk_lib_fail(err, HUSK_E_HUSK, 0, "%s", last ? last + 1 : line[0] ? line : "husk failed");
	if (err)
		err->status = status;
	free(b[1].data);
	if (out && !status && !failed)
		*out = b[0].data ? b[0].data : strdup("");
	else
		free(b[0].data);
	return failed ? -1 : status;
}

char *husk_stage_manifest(const char *stage, struct husk_error *err)
{
	static const char *const json[] = { "--json" };
	char *out = NULL;
	return husk_command("review", stage, json, 1, &out, err) == 0 ? out : NULL;
}

char *husk_stage_diff(const char *stage, const char *path, struct husk_error *err)
{
	if (!path) {
		husk_lib_fail(err, HUSK_E_INVALID, 0, "no path given");
		return NULL;
	}
	const char *args[] = { "--diff", path };
	char *out = NULL;
	return husk_command("review", stage, args, 2, &out, err) == 0 ? out : NULL;
}

int husk_stage_apply(const char *stage, const char *const *paths, size_t n, struct husk_error *err)
{
	int status = husk_command("apply", stage, paths, n, NULL, err);
	return status == 0 || status == HUSK_EXIT_WORKDIR ? status : -1;
}

int husk_stage_discard(const char *stage, const char *const *paths, size_t n, struct husk_error *err)
{
	return husk_command("discard", stage, paths, n, NULL, err) == 0 ? 0 : -1;
}

void husk_free(void *p)
{
	free(p);
}
