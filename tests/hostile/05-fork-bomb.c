/* expected: fork until it fails: the guest's process limit stops it (EAGAIN), every child is reaped, and the
 * program goes on; system() finds no shell; prints "fork: 255 children, then EAGAIN; all reaped|system: failed", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	static pid_t kids[10000];
	int n = 0, fds[2], err = 0;
	if (pipe(fds))
		return 1;
	while (n < 10000) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			char c;
			close(fds[1]);
			_exit(read(fds[0], &c, 1) == 0 ? 0 : 1); /* until the parent closes its end */
		}
		kids[n++] = p;
	}
	close(fds[1]);
	int reaped = 0, st;
	for (int i = 0; i < n; i++)
		reaped += waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("fork: %d children, then %s; %s reaped\n", n, err == EAGAIN ? "EAGAIN" : strerror(err),
	       reaped == n ? "all" : "not all");
	int s = system("echo from system");
	printf("system: %s\n", s == -1 || (WIFEXITED(s) && WEXITSTATUS(s) == 127) ? "failed" : "ran a shell");
	return 0;
}
