/* SPDX-License-Identifier: GPL-2.0-only */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "errmsg.h"
#include "sandbox/helper.h"

pid_t helper_fork(const char *what, int *fd, char *err, size_t n)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
		return errmsg_errno(err, n, "%s: socketpair", what);
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		close(sp[0]);
		close(sp[1]);
		return errmsg_errno(err, n, "%s: fork", what);
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* husk is gone already */
			_exit(1);
		close(sp[0]);
		*fd = sp[1];
		return 0;
	}
	close(sp[1]);
	*fd = sp[0];
	return pid;
}
