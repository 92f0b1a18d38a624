/* SPDX-License-Identifier: GPL-2.0-only */
/* The host tools an image is built with: apt-get, dpkg-deb, tar, ldconfig,
 * python3.  Run by absolute path, with an environment of their own: the C
 * locale (their output is parsed), and for apt the host's proxy settings. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "debian/debian.h"

static int wait_for(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* PATH, the C locale, and the proxy variables apt honours. */
static char **tool_env(void)
{
	static char *env[8];
	static const char *const pass[] = { "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY" };
	int n = 0;
	env[n++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	env[n++] = "LC_ALL=C";
	for (size_t i = 0; i < sizeof pass / sizeof pass[0] && n < 7; i++) {
		const char *v = getenv(pass[i]);
		char *kv;
		if (v && asprintf(&kv, "%s=%s", pass[i], v) >= 0)
			env[n++] = kv;
	}
	env[n] = NULL;
	return env;
}

static pid_t spawn(char *const argv[], int in, int out, const char *cwd)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (in >= 0)
		posix_spawn_file_actions_adddup2(&fa, in, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out >= 0 ? out : 2, 1);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	pid_t pid;
	int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, tool_env());
	posix_spawn_file_actions_destroy(&fa);
	return e ? -1 : pid;
}

int tool_run(char *const argv[], int out, const char *cwd)
{
	pid_t pid = spawn(argv, -1, out, cwd);
	return pid < 0 ? -1 : wait_for(pid);
}

int tool_output(char *const argv[], char **text)
{
	int p[2];
	*text = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = spawn(argv, -1, p[1], NULL);
	close(p[1]);
	size_t size = 0;
	FILE *f = open_memstream(text, &size);
	char buf[65536];
	ssize_t k;
	while ((k = read(p[0], buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
		if (k > 0 && f)
			fwrite(buf, 1, k, f);
	close(p[0]);
	if (f)
		fclose(f);
	int st = pid < 0 ? -1 : wait_for(pid);
	return *text ? st : -1;
}

int tool_unpack(const char *deb, const char *root)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	char *dpkg[] = { "/usr/bin/dpkg-deb", "--fsys-tarfile", (char *)deb, NULL };
	char *tar[] = { "/usr/bin/tar", "-x", "--no-same-owner", "-C", (char *)root, "-f", "-", NULL };
	pid_t a = spawn(dpkg, -1, p[1], NULL);
	close(p[1]);
	pid_t b = spawn(tar, p[0], -1, NULL);
	close(p[0]);
	int sa = a < 0 ? -1 : wait_for(a), sb = b < 0 ? -1 : wait_for(b);
	return sa ? sa : sb;
}
