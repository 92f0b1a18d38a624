/* expected: fork(), posix_spawn, execl and system all fail (ENOSYS or EAGAIN); prints "fork failed 1000 times", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
extern char **environ;

int main(void)
{
	int fails = 0;
	for (int i = 0; i < 1000; i++) {
		errno = 0;
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p > 0) {
			printf("fork succeeded: %d\n", (int)p);
			return 1;
		}
		if (errno != ENOSYS && errno != EAGAIN) {
			printf("fork: unexpected %s\n", strerror(errno));
			return 1;
		}
		fails++;
	}
	printf("fork failed %d times\n", fails);
	pid_t pid;
	char *args[] = { "sh", "-c", "echo spawned", 0 };
	int r = posix_spawn(&pid, "/bin/sh", 0, 0, args, environ);
	printf("posix_spawn: %s\n", r ? "failed" : "succeeded");
	errno = 0;
	r = execl("/usr/bin/lua", "lua", "-v", (char *)0);
	printf("execl: %s\n", r == -1 ? "failed" : "succeeded");
	printf("system: %d\n", system("echo from system"));
	return 0;
}
