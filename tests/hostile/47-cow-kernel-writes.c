/* expected: after fork the child has the kernel write into pages it shares with its parent, every way the
 * kernel writes program memory (read from a pipe and from /dev/zero, getrandom, clock_gettime, uname, fstat,
 * getcwd, readlink, the old action of sigaction, pipe's descriptors, recvmsg from a socketpair, wait4's status,
 * a signal frame from a fault on an alternate stack, the system call door's own pushes on a shared stack);
 * each write lands in the child's copy only: prints "0 unexpected", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES 16
#define PAGE 4096
static unsigned char *buf; /* PAGES pages, shared with the parent after fork */
static sigjmp_buf back;
static int bad;

static void unexpected(const char *what)
{
	printf("UNEXPECTED: %s\n", what);
	bad++;
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 13 + 7);
}

/* Page k of buf, at an offset that is not page-aligned. */
static void *at(int k)
{
	return buf + (size_t)k * PAGE + 100;
}

static int changed(int k, size_t len)
{
	const unsigned char *p = at(k);
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern((size_t)(p - buf) + i))
			return 1;
	return 0;
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(back, 1);
}

static void child(void)
{
	int p[2], s[2];
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		_exit(2);
	if (write(p[1], "pipe bytes", 10) != 10 || read(p[0], at(0), 10) != 10 || memcmp(at(0), "pipe bytes", 10))
		unexpected("read from a pipe into a shared page");
	int z = open("/dev/zero", O_RDONLY);
	if (z < 0 || read(z, at(1), 3000) != 3000 || !changed(1, 3000))
		unexpected("read of /dev/zero into a shared page");
	if (getrandom(at(2), 64, 0) != 64 || !changed(2, 64))
		unexpected("getrandom into a shared page");
	if (clock_gettime(CLOCK_REALTIME, at(3)) || ((struct timespec *)at(3))->tv_sec < 1000000000)
		unexpected("clock_gettime into a shared page");
	if (uname(at(4)) || strcmp(((struct utsname *)at(4))->sysname, "Linux"))
		unexpected("uname into a shared page");
	if (fstat(z, at(5)) || !S_ISCHR(((struct stat *)at(5))->st_mode))
		unexpected("fstat into a shared page");
	if (!getcwd(at(6), 256) || *(char *)at(6) != '/')
		unexpected("getcwd into a shared page");
	char link[64];
	snprintf(link, sizeof link, "/tmp/cow-link-%d", (int)getpid());
	if (symlink("/a/target", link) || readlink(link, at(7), 256) != 9 || memcmp(at(7), "/a/target", 9))
		unexpected("readlink into a shared page");
	unlink(link);
	struct sigaction sa = { .sa_handler = SIG_IGN };
	sigaction(SIGUSR2, &sa, NULL);
	if (sigaction(SIGUSR2, &sa, at(8)) || ((struct sigaction *)at(8))->sa_handler != SIG_IGN)
		unexpected("sigaction's old action into a shared page");
	if (pipe(at(9)) || ((int *)at(9))[0] < 3)
		unexpected("pipe's descriptors into a shared page");
	char m[] = "message";
	struct iovec v = { at(10), sizeof m };
	struct msghdr h = { .msg_iov = &v, .msg_iovlen = 1 };
	if (write(s[0], m, sizeof m) != sizeof m || recvmsg(s[1], &h, 0) != sizeof m || memcmp(at(10), m, sizeof m))
		unexpected("recvmsg into a shared page");
	pid_t g = fork();
	if (g == 0)
		_exit(42);
	if (g < 0 || wait4(g, at(11), 0, NULL) != g || !WIFEXITED(*(int *)at(11)) || WEXITSTATUS(*(int *)at(11)) != 42)
		unexpected("wait4's status into a shared page");
	/* a fault's signal frame on an alternate stack in shared pages (built on the exception stack) */
	stack_t ss = { .ss_sp = buf + 12 * PAGE, .ss_size = 4 * PAGE };
	struct sigaction segv = { .sa_handler = on_segv, .sa_flags = SA_ONSTACK | SA_NODEFER };
	if (sigaltstack(&ss, NULL) || sigaction(SIGSEGV, &segv, NULL))
		unexpected("sigaltstack");
	else if (!sigsetjmp(back, 1)) {
		volatile int *volatile nowhere = 0;
		*nowhere = 1;
	}
	if (!changed(13, 3 * PAGE - 100))
		unexpected("no signal frame on the alternate stack");
	_exit(bad ? 1 : 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	buf = aligned_alloc(PAGE, PAGES * PAGE);
	if (!buf)
		return 1;
	for (size_t i = 0; i < PAGES * PAGE; i++)
		buf[i] = pattern(i);
	char stack_mark[64];
	memset(stack_mark, 's', sizeof stack_mark);
	pid_t c = fork();
	if (c == 0)
		child();
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c)
		unexpected("fork or wait");
	else if (!WIFEXITED(st) || WEXITSTATUS(st))
		unexpected("the child found its own writes missing (above)");
	for (size_t i = 0; i < PAGES * PAGE; i++)
		if (buf[i] != pattern(i)) {
			printf("UNEXPECTED: the parent's page %zu changed at byte %zu\n", i / PAGE, i % PAGE);
			bad++;
			break;
		}
	for (size_t i = 0; i < sizeof stack_mark; i++)
		if (stack_mark[i] != 's') {
			unexpected("the parent's stack changed");
			break;
		}
	printf("%d unexpected\n", bad);
	return bad != 0;
}
