/* SPDX-License-Identifier: GPL-2.0-only */
/* The network broker's process (broker.h): forked by husk before the VMM
 * is confined, like the write-back helper.  What it may do once the
 * resolver has read /etc/resolv.conf: move bytes on the sockets it has,
 * make IPv4 and IPv6 stream sockets (connections) and datagram sockets
 * (DNS) and connect them, poll, allocate memory, and end.  No file can be
 * opened, no process made, no other address family used. */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "errmsg.h"
#include "net/broker.h"
#include "sandbox/helper.h"

#define BROKER_FD 3
#define RECORD_FD 4

static const int broker_calls[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(recvfrom), SCMP_SYS(sendto),
	SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(close), SCMP_SYS(shutdown), SCMP_SYS(connect),
	SCMP_SYS(getsockopt), SCMP_SYS(setsockopt), SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(poll),
	SCMP_SYS(ppoll), SCMP_SYS(fcntl), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(brk),
	SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(getrandom), SCMP_SYS(rt_sigreturn),
	SCMP_SYS(futex), SCMP_SYS(getpid), SCMP_SYS(exit), SCMP_SYS(exit_group),
	SCMP_SYS(sigaltstack), /* the sanitizers' runtime, as a test build ends */
};

static int confine(void)
{
	struct rlimit files = { 1024 + 64, 1024 + 64 }; /* its connections, the resolver's, its own */
	if (setrlimit(RLIMIT_NOFILE, &files) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	int r = 0;
	for (size_t i = 0; !r && i < sizeof broker_calls / sizeof broker_calls[0]; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, broker_calls[i], 0);
	/* socket: AF_INET and AF_INET6, stream or datagram (with its flags) */
	int families[] = { AF_INET, AF_INET6 }, types[] = { SOCK_STREAM, SOCK_DGRAM };
	for (int f = 0; !r && f < 2; f++)
		for (int t = 0; !r && t < 2; t++)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[f]),
					     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)types[t]));
	if (!r) /* memory, never executable */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!r) /* the resolver's non-blocking sockets */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, FIONBIO));
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r ? -1 : 0;
}

int broker_start(struct broker_config *c, int *vmm_fd, char *err, size_t n)
{
	int fd;
	pid_t pid = helper_fork("network broker", &fd, err, n);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* above 16 first, so that neither is where the other goes */
		int s = fcntl(fd, F_DUPFD_CLOEXEC, 16), rec = c->record_fd >= 0 ? fcntl(c->record_fd, F_DUPFD_CLOEXEC, 16) : -1;
		if (s < 0 || dup3(s, BROKER_FD, O_CLOEXEC) < 0 || (rec >= 0 && dup3(rec, RECORD_FD, O_CLOEXEC) < 0))
			_exit(1);
		close_range(rec >= 0 ? RECORD_FD + 1 : BROKER_FD + 1, ~0u, 0); /* nothing else of husk's */
		c->record_fd = rec >= 0 ? RECORD_FD : -1;
		c->confine = confine;
		_exit(broker_run(BROKER_FD, c) ? 1 : 0);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	*vmm_fd = fd;
	return pid;
}
