// SPDX-License-Identifier: GPL-2.0-only
/* Processes as Linux runs them, checked from inside the guest: fork, vfork,
 * posix_spawn, execve, wait4/waitpid/waitid, SIGCHLD, zombies and orphans,
 * descriptors across fork and exec, process groups and sessions, kill between
 * processes, fork beside threads.  With no argument, one "ok N - ..." or
 * "not ok N - ..." line per check, then "# N processes created" and
 * "done N", always the same number of lines.  Each group of checks runs
 * under alarm(10): a hang is "not ok ... timed out", the group's children
 * are killed and reaped, its remaining checks are "not ok ... not run", and
 * the next group runs; every child has an alarm(10) of its own.  A fork that
 * fails fails its check and the rest of its group (nothing then waits for
 * or signals pid -1).  So a broken kernel cannot keep the program for ever.
 * Checked natively on Linux: its expectations are Linux's.
 *
 * The program execs itself: its path is $PROCESSES_SELF if set (in husk,
 * the path inside the guest, e.g. /workdir/processes), else
 * /proc/self/exe's target if readable, else argv[0].
 *
 * Modes (the first argument), used by the checks through execve and
 * posix_spawn, and one to give explicitly:
 *   child-exit N         exit(N)
 *   echo-args ARGS...    prints "argv[0]=A0 argc=N [ARG]... HUSK_T=V envc=E"
 *   same-pid PID PPID    exit 0 if getpid() == PID and getppid() == PPID
 *   fd-check CLO PLAIN   writes to fd PLAIN whether fd CLO (O_CLOEXEC before
 *                        the exec) is closed and PLAIN open
 *   read-exit FD         reads one byte from FD (alarm(5)), exits with it
 *   fork-limit [MAX]     a child forks until fork fails (at most MAX, 10000
 *                        by default; the children wait on a pipe), then lets
 *                        them exit and reaps them: prints
 *                        "fork-limit: K children, then ERRNO-NAME; R reaped"
 *                        and "fork-limit: the parent goes on; its child
 *                        exit S"; status 0 if the failure was EAGAIN and
 *                        all were reaped.  Natively as root RLIMIT_NPROC
 *                        does not apply (run it as a user under ulimit -u).
 *   fork-oom MB          writes MB MiB, forks a child that writes them all
 *                        again (each page is copied then), waits: prints
 *                        "fork-oom: the child STATUS; the parent's MB MiB
 *                        intact: yes|no".  Natively the child exits 0; in a
 *                        guest with too little memory it is killed (SIGKILL),
 *                        as Linux's OOM killer would, and the parent goes on. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

extern char **environ;

static const char *self; /* this program's path, for execve and posix_spawn */
static pid_t kids[256];  /* the children made, to kill them at a time-out */
static int nkids;
static int made; /* processes made: fork, vfork, posix_spawn (grandchildren too) */
static pid_t my_pid, my_pgrp, my_sid;

/* --- helpers ------------------------------------------------------------ */
static void sleep_ms(long ms)
{
	struct timespec t = ts_of((uint64_t)ms * 1000000u);
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static ssize_t write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return done ? (ssize_t)done : w;
		done += (size_t)w;
	}
	return (ssize_t)done;
}

/* Reads until len bytes came or EOF/error: how many came. */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return done ? (ssize_t)done : r;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* Reads everything until EOF into buf (NUL-terminated): its length, or -1. */
static ssize_t read_to_eof(int fd, char *buf, size_t cap)
{
	size_t done = 0;
	for (;;) {
		ssize_t r = read(fd, buf + done, cap - 1 - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			buf[done] = 0;
			return -1;
		}
		if (r == 0 || (done += (size_t)r) == cap - 1)
			break;
	}
	buf[done] = 0;
	return (ssize_t)done;
}

static pid_t reap(pid_t pid, int *st)
{
	pid_t w;
	*st = -1;
	while ((w = waitpid(pid, st, 0)) < 0 && errno == EINTR)
		;
	return w;
}

/* "exit N", "signal N (NAME)", or what went wrong: one of 8 static buffers. */
static const char *desc(pid_t w, int st)
{
	static char bufs[8][64];
	static int k;
	char *b = bufs[k++ % 8];
	if (w < 0)
		snprintf(b, 64, "wait failed: %s", strerror(errno));
	else if (WIFEXITED(st))
		snprintf(b, 64, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(b, 64, "signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(b, 64, "status %#x", st);
	return b;
}

static int exited(pid_t w, pid_t pid, int st, int code)
{
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == code;
}

static int killed_by(pid_t w, pid_t pid, int st, int sig)
{
	return w == pid && WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

static sigjmp_buf on_timeout;

static void timed_out(int sig)
{
	(void)sig;
	siglongjmp(on_timeout, 1);
}

/* After a time-out: kill the group's children that are still ours (a
 * zombie or a live one: waitid WNOWAIT says so without reaping; if waitid
 * itself is broken, kill anyway), reap them, waiting 2 s at most. */
static void kill_kids(void)
{
	for (int i = 0; i < nkids; i++) {
		siginfo_t si;
		if (kids[i] > 0 && (!waitid(P_PID, (id_t)kids[i], &si, WEXITED | WNOHANG | WNOWAIT) || errno != ECHILD))
			kill(kids[i], SIGKILL);
	}
	for (int i = 0, left = nkids; i < 2000 && left; i++) {
		left = 0;
		for (int k = 0; k < nkids; k++) {
			int st;
			if (kids[k] > 0 && waitpid(kids[k], &st, WNOHANG) == 0)
				left++;
			else
				kids[k] = 0;
		}
		if (left)
			sleep_ms(1);
	}
	nkids = 0;
}

static volatile int stop_spinning;

/* One group of checks: count "ok"/"not ok" lines, whatever happens. */
static void run(void (*fn)(void), const char *name, int count)
{
	volatile int first = n;
	nkids = 0;
	if (!sigsetjmp(on_timeout, 1)) {
		alarm(10);
		fn();
		alarm(0);
	} else {
		alarm(10); /* the clean-up is bounded too: a second time-out ends the program */
		signal(SIGALRM, SIG_DFL);
		ok(0, "%s: timed out after 10 s", name);
		stop_spinning = 1;
		kill_kids();
		alarm(0);
		signal(SIGALRM, timed_out);
	}
	while (n < first + count)
		ok(0, "%s: not run (a step before it failed)", name);
	if (n != first + count)
		printf("# %s: %d checks, %d expected\n", name, n - first, count);
}

/* A fork (vfork, posix_spawn) that failed: one "not ok"; the caller returns. */
static void fork_failed(const char *what, int err)
{
	ok(0, "%s: the fork failed: %s", what, strerror(err));
}
#define IF_FORK_FAILED_RETURN(pid, what) \
	do { \
		if ((pid) < 0) { \
			fork_failed(what, errno); \
			return; \
		} \
	} while (0)

/* In every child: no time-out handler of the parent's, an alarm of its own. */
static void child_start(void)
{
	nkids = 0;
	signal(SIGALRM, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &s, NULL); /* forked from a thread that blocks it */
	alarm(10);
}

/* Threads leave SIGALRM to main: its handler jumps back on main's stack. */
static void block_alarm(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static pid_t xfork(void)
{
	fflush(stdout);
	pid_t p = fork();
	if (p == 0)
		child_start();
	else if (p > 0) {
		made++;
		if (nkids < (int)(sizeof kids / sizeof kids[0]))
			kids[nkids++] = p;
	}
	return p;
}

/* execve of this program (argv[0] should be self), or _exit(127). */
static void exec_self(char *const *argv, char *const *envp)
{
	execve(self, argv, envp);
	_exit(127);
}

/* --- fork: memory ------------------------------------------------------- */
static int g_value = 1234;

static void fill(unsigned char *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 7 + seed + (i >> 12));
}

static int same(const unsigned char *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != (unsigned char)(i * 7 + seed + (i >> 12)))
			return 0;
	return 1;
}

struct report {
	pid_t pid, ppid;
	int copy;
};

static void check_fork_memory(void)
{
	const size_t big_len = 20u << 20;
	unsigned char *big = malloc(big_len);
	char *heap = malloc(64);
	volatile int stackv = 777;
	int c2p[2], p2c[2];
	if (!big || !heap || pipe(c2p) || pipe(p2c)) {
		ok(0, "fork: set-up failed: %s", strerror(errno));
		return;
	}
	strcpy(heap, "heap before fork");
	fill(big, big_len, 1);
	g_value = 1234;
	pid_t pid = xfork();
	if (pid == 0) {
		close(c2p[0]);
		close(p2c[1]);
		struct report r = { getpid(), getppid(),
				    g_value == 1234 && !strcmp(heap, "heap before fork") && stackv == 777 &&
					    same(big, big_len, 1) };
		write_all(c2p[1], &r, sizeof r);
		g_value = 1;
		strcpy(heap, "child's heap");
		stackv = 1;
		fill(big, big_len, 2);
		write_all(c2p[1], "m", 1);
		char c;
		if (read_full(p2c[0], &c, 1) != 1)
			_exit(2);
		int mine = g_value == 1 && !strcmp(heap, "child's heap") && stackv == 1 && same(big, big_len, 2);
		write_all(c2p[1], mine ? "y" : "n", 1);
		_exit(0);
	}
	close(c2p[1]);
	close(p2c[0]);
	if (pid < 0) {
		fork_failed("fork", errno);
		close(c2p[0]);
		close(p2c[1]);
		free(big);
		free(heap);
		return;
	}
	struct report r = { 0, 0, 0 };
	int got = read_full(c2p[0], &r, sizeof r) == (ssize_t)sizeof r;
	ok(got && r.pid == pid, "fork returns the child's pid to the parent (%d; the child's getpid() says %d)",
	   (int)pid, (int)r.pid);
	ok(got && r.pid != my_pid && r.ppid == my_pid,
	   "the child's getpid() (%d) differs from the parent's (%d), its getppid() (%d) is the parent's", (int)r.pid,
	   (int)my_pid, (int)r.ppid);
	ok(got && r.copy, "the child sees a copy of the parent's memory: a global, a malloc'd string, a stack "
			  "variable, a 20 MB malloc'd buffer's every byte");
	char m = 0;
	read_full(c2p[0], &m, 1);
	ok(m == 'm' && g_value == 1234 && !strcmp(heap, "heap before fork") && stackv == 777 && same(big, big_len, 1),
	   "the child's writes (global, heap, stack, all 20 MB) are not seen by the parent");
	g_value = 99;
	strcpy(heap, "parent's new heap");
	stackv = 99;
	fill(big, big_len, 3);
	write_all(p2c[1], "p", 1);
	char y = 0;
	read_full(c2p[0], &y, 1);
	int st;
	pid_t w = reap(pid, &st);
	ok(y == 'y' && exited(w, pid, st, 0), "the parent's writes after the fork are not seen by the child (%c, %s)",
	   y ? y : '?', desc(w, st));
	close(c2p[0]);
	close(p2c[1]);
	free(big);
	free(heap);
}

/* --- fork: copy-on-write ------------------------------------------------ */
/* Many children of a big parent at once: Linux shares the parent's pages
 * until one side writes, so 24 children of a 64 MB parent cost what they
 * write (a copy each would need 1.5 GB). */
static void check_cow_many(void)
{
	enum { KIDS = 24 };
	const size_t len = 64u << 20;
	unsigned char *big = malloc(len);
	int go[2], back[2];
	if (!big || pipe(go) || pipe(back)) {
		ok(0, "fork: copy-on-write: set-up failed: %s", strerror(errno));
		return;
	}
	fill(big, len, 5);
	pid_t pids[KIDS];
	int forked = 0, err = 0;
	for (; forked < KIDS; forked++) {
		pid_t pid = xfork();
		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			close(go[1]);
			int good = 1;
			for (size_t i = 0; i < len; i += 509) /* a sample of every page */
				good &= big[i] == (unsigned char)(i * 7 + 5 + (i >> 12));
			size_t mine = (size_t)forked * 7 * 4096 + 100;
			memset(big + mine, 0xa0 + forked, 4096);
			good &= big[mine + 4095] == 0xa0 + forked && big[mine - 1] == (unsigned char)((mine - 1) * 7 + 5 + ((mine - 1) >> 12));
			write_all(back[1], good ? "y" : "n", 1);
			char c;
			read(go[0], &c, 1); /* until the parent closes it */
			_exit(0);
		}
		pids[forked] = pid;
	}
	close(back[1]);
	char answers[KIDS + 1] = { 0 };
	ssize_t got = forked ? read_full(back[0], answers, (size_t)forked) : 0;
	close(go[1]);
	int reaped = 0;
	for (int i = 0; i < forked; i++) {
		int st;
		reaped += exited(reap(pids[i], &st), pids[i], st, 0);
	}
	close(go[0]);
	close(back[0]);
	ok(forked == KIDS && got == KIDS && !strchr(answers, 'n') && reaped == KIDS,
	   "24 children of a parent with 64 MB written, alive at once: each sees the parent's bytes and its own page "
	   "written (%d forked%s%s, answers \"%s\", %d exited 0)",
	   forked, err ? ", then " : "", err ? strerror(err) : "", answers, reaped);
	ok(same(big, len, 5), "the parent's 64 MB are untouched by its 24 children's writes");
	free(big);
}

/* What the kernel writes for a child into pages it shares with its parent
 * (a pipe's bytes by read, a file's from the disk) is the child's alone. */
static void check_cow_kernel_writes(void)
{
	const size_t len = 256u << 10;
	unsigned char *pbuf = malloc(len), *fbuf = malloc(len), *fresh = malloc(len);
	int p[2], back[2];
	int fd = open(self, O_RDONLY);
	if (!pbuf || !fbuf || !fresh || pipe(p) || pipe(back) || fd < 0) {
		ok(0, "fork: kernel writes: set-up failed: %s", strerror(errno));
		return;
	}
	fill(pbuf, len, 7);
	fill(fbuf, len, 8);
	pid_t pid = xfork();
	IF_FORK_FAILED_RETURN(pid, "fork: kernel writes");
	if (pid == 0) {
		close(p[1]);
		ssize_t r = read_full(p[0], pbuf, 5000); /* into the middle of a page and across one */
		ssize_t f = pread(fd, fbuf, len, 0);
		ssize_t g = pread(fd, fresh, len, 0);
		int good = r == 5000 && pbuf[0] == 'x' && pbuf[4999] == 'x' && pbuf[5000] == (unsigned char)(5000 * 7 + 7 + 1) &&
			   f > 0 && f == g && !memcmp(fbuf, fresh, (size_t)f) && !memcmp(fbuf + 1, "ELF", 3);
		write_all(back[1], good ? "y" : "n", 1);
		_exit(0);
	}
	close(p[0]);
	close(back[1]);
	memset(fresh, 'x', 5000);
	write_all(p[1], fresh, 5000);
	close(p[1]);
	char y = 0;
	read_full(back[0], &y, 1);
	int st;
	pid_t w = reap(pid, &st);
	close(back[0]);
	close(fd);
	ok(y == 'y' && exited(w, pid, st, 0), "a child's read() from a pipe and pread() of a file into buffers it shares "
					      "with its parent fill its own copies (%c, %s)", y ? y : '?', desc(w, st));
	ok(same(pbuf, len, 7) && same(fbuf, len, 8), "the parent's buffers are unchanged by what the kernel wrote for its child");
	free(pbuf);
	free(fbuf);
	free(fresh);
}

/* A futex word moves to another page when a write after fork copies its
 * page; its waiters must still be found. */
static pthread_mutex_t cow_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cow_cond = PTHREAD_COND_INITIALIZER;
static int cow_flag, cow_waiting;

static void *cow_waiter(void *arg)
{
	(void)arg;
	block_alarm();
	pthread_mutex_lock(&cow_lock);
	cow_waiting = 1;
	while (!cow_flag)
		pthread_cond_wait(&cow_cond, &cow_lock);
	pthread_mutex_unlock(&cow_lock);
	return NULL;
}

static volatile sig_atomic_t cow_handled;
static void cow_handler(int sig)
{
	volatile char on_stack[64];
	on_stack[0] = (char)sig;
	cow_handled = on_stack[0];
}

static void check_cow_futex_and_signal(void)
{
	cow_flag = cow_waiting = 0;
	pthread_t t;
	int tr = pthread_create(&t, NULL, cow_waiter, NULL);
	for (int i = 0; i < 1000 && !__atomic_load_n(&cow_waiting, __ATOMIC_SEQ_CST); i++)
		sleep_ms(1);
	sleep_ms(20); /* in pthread_cond_wait by now */
	int hold[2];
	pipe(hold);
	pid_t pid = xfork();
	IF_FORK_FAILED_RETURN(pid, "fork: a waiter's futex");
	if (pid == 0) {
		close(hold[1]);
		char c;
		read(hold[0], &c, 1); /* alive (sharing the pages) until the parent is done */
		_exit(0);
	}
	close(hold[0]);
	pthread_mutex_lock(&cow_lock); /* writes to the shared pages: copies them */
	cow_flag = 1;
	pthread_cond_signal(&cow_cond);
	pthread_mutex_unlock(&cow_lock);
	int jr = tr ? tr : pthread_join(t, NULL);
	close(hold[1]);
	int st;
	pid_t w = reap(pid, &st);
	ok(!tr && !jr && exited(w, pid, st, 0),
	   "a thread waiting on a condition variable while its process forks wakes when main signals it after the "
	   "fork (its futex's page copied by that write; %s)", desc(w, st));

	cow_handled = 0;
	pid = xfork();
	IF_FORK_FAILED_RETURN(pid, "fork: a signal handler");
	if (pid == 0) {
		signal(SIGUSR1, cow_handler);
		raise(SIGUSR1); /* its frame goes on the stack the child shares */
		_exit(cow_handled == SIGUSR1 ? 0 : 1);
	}
	w = reap(pid, &st);
	ok(exited(w, pid, st, 0) && !cow_handled, "a child's signal handler runs on the stack it shares with its parent "
						  "(%s); the parent's copy is untouched", desc(w, st));
}

static void check_fork_cow(void)
{
	check_cow_many();
	check_cow_kernel_writes();
	check_cow_futex_and_signal();
}

/* --- exit statuses and waits -------------------------------------------- */
static void check_wait(void)
{
	static const int codes[] = { 0, 1, 42, 255 };
	int good = 1;
	char got[128] = "";
	for (int i = 0; i < 4; i++) {
		pid_t pid = xfork();
		if (pid == 0)
			_exit(codes[i]);
		int st;
		pid_t w = pid > 0 ? reap(pid, &st) : -1;
		good &= pid > 0 && exited(w, pid, st, codes[i]);
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? ", " : "", desc(w, st));
	}
	ok(good, "_exit(N) in a child: waitpid gives WIFEXITED and WEXITSTATUS N for 0, 1, 42, 255 (%s)", got);

	pid_t pid = xfork();
	if (pid == 0) {
		volatile unsigned long x = 0;
		for (unsigned long i = 0; i < 20000000ul; i++)
			x += i;
		_exit(3);
	}
	if (pid < 0) {
		fork_failed("wait4", errno);
		return;
	}
	struct rusage ru;
	memset(&ru, 0xff, sizeof ru);
	int st = -1;
	pid_t w;
	while ((w = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
		;
	ok(exited(w, pid, st, 3) && ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec >= 0 &&
		   ru.ru_utime.tv_usec < 1000000 && ru.ru_stime.tv_sec >= 0 && ru.ru_stime.tv_usec >= 0 &&
		   ru.ru_stime.tv_usec < 1000000 && ru.ru_maxrss >= 0 && ru.ru_nvcsw >= 0,
	   "wait4 with an rusage reaps the child (%s) and fills the rusage (user %ld.%06ld s, system %ld.%06ld s, "
	   "maxrss %ld KiB)",
	   desc(w, st), (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
	   (long)ru.ru_stime.tv_usec, ru.ru_maxrss);

	pid = xfork();
	if (pid == 0)
		_exit(9);
	if (pid < 0) {
		fork_failed("waitpid(-1)", errno);
		return;
	}
	while ((w = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
		;
	ok(exited(w, pid, st, 9), "waitpid(-1) reaps the one child: its pid %d, exit 9 (%d, %s)", (int)pid, (int)w,
	   desc(w, st));

	int p[2];
	pipe(p);
	pid = xfork();
	if (pid == 0) {
		close(p[1]);
		char c;
		_exit(read_full(p[0], &c, 1) == 0 ? 0 : 1); /* blocks until the parent closes its end */
	}
	if (pid < 0) {
		fork_failed("waitpid(WNOHANG)", errno);
		return;
	}
	close(p[0]);
	sleep_ms(20);
	pid_t r0 = waitpid(pid, &st, WNOHANG);
	pid_t r1 = waitpid(-1, &st, WNOHANG);
	close(p[1]);
	w = reap(pid, &st);
	ok(r0 == 0 && r1 == 0 && exited(w, pid, st, 0),
	   "waitpid(pid, WNOHANG) and waitpid(-1, WNOHANG) return 0 while the child runs (%d, %d), then it is reaped "
	   "(%s)",
	   (int)r0, (int)r1, desc(w, st));

	/* A non-child: our own pid, and a grandchild that is alive. */
	int gp[2], hold[2];
	pipe(gp);
	pipe(hold);
	pid = xfork();
	if (pid == 0) {
		close(gp[0]);
		close(hold[1]);
		pid_t g = fork();
		if (g == 0) {
			alarm(10);
			char c;
			read_full(hold[0], &c, 1); /* EOF when the top closes hold */
			_exit(0);
		}
		close(hold[0]);
		write_all(gp[1], &g, sizeof g);
		int gst;
		pid_t gw = reap(g, &gst);
		_exit(g > 0 && exited(gw, g, gst, 0) ? 0 : 1);
	}
	if (pid < 0) {
		fork_failed("waitpid on a non-child", errno);
		return;
	}
	made++; /* the grandchild */
	close(gp[1]);
	close(hold[0]);
	pid_t g = 0;
	read_full(gp[0], &g, sizeof g);
	errno = 0;
	pid_t wg = waitpid(g, &st, WNOHANG);
	int eg = errno;
	errno = 0;
	pid_t ws = waitpid(my_pid, &st, WNOHANG);
	int es = errno;
	errno = 0;
	pid_t ws2 = waitpid(my_pid, &st, 0);
	int es2 = errno;
	close(hold[1]);
	close(gp[0]);
	w = reap(pid, &st);
	ok(g > 0 && wg == -1 && eg == ECHILD && ws == -1 && es == ECHILD && ws2 == -1 && es2 == ECHILD &&
		   exited(w, pid, st, 0),
	   "waitpid on a non-child: a live grandchild (%d: %s), our own pid (%s; blocking: %s): ECHILD", (int)g,
	   wg < 0 ? strerror(eg) : "no error", ws < 0 ? strerror(es) : "no error",
	   ws2 < 0 ? strerror(es2) : "no error");

	errno = 0;
	pid_t a = wait(NULL);
	int ea = errno;
	errno = 0;
	pid_t b = waitpid(-1, &st, WNOHANG);
	int eb = errno;
	siginfo_t si;
	errno = 0;
	int c = waitid(P_ALL, 0, &si, WEXITED);
	int ec = errno;
	ok(a == -1 && ea == ECHILD && b == -1 && eb == ECHILD && c == -1 && ec == ECHILD,
	   "with no children, wait(NULL), waitpid(-1, WNOHANG), waitid(P_ALL): ECHILD (%s, %s, %s)",
	   a < 0 ? strerror(ea) : "no error", b < 0 ? strerror(eb) : "no error", c < 0 ? strerror(ec) : "no error");
}

/* --- killed by signals -------------------------------------------------- */
static void check_signaled(void)
{
	int ready[2];
	pipe(ready);
	pid_t pid = xfork();
	if (pid == 0) {
		write_all(ready[1], "r", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid < 0) {
		fork_failed("kill(child, SIGKILL)", errno);
		return;
	}
	char c = 0;
	read_full(ready[0], &c, 1);
	close(ready[0]);
	int kr = kill(pid, SIGKILL);
	int st;
	pid_t w = reap(pid, &st);
	ok(c == 'r' && kr == 0 && killed_by(w, pid, st, SIGKILL),
	   "kill(child, SIGKILL) of a child in pause(): WIFSIGNALED, WTERMSIG SIGKILL (%s)", desc(w, st));

	pid = xfork();
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(SIGTERM);
		_exit(0);
	}
	if (pid < 0) {
		fork_failed("raise(SIGTERM)", errno);
		return;
	}
	w = reap(pid, &st);
	ok(killed_by(w, pid, st, SIGTERM), "a child that raises SIGTERM (default action): WTERMSIG SIGTERM (%s)",
	   desc(w, st));

	pid = xfork();
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGSEGV, SIG_DFL);
		volatile int *volatile null = NULL; /* a volatile store: not dropped as dead before _exit */
		*null = 1;
		_exit(0);
	}
	if (pid < 0) {
		fork_failed("NULL", errno);
		return;
	}
	w = reap(pid, &st);
	ok(killed_by(w, pid, st, SIGSEGV), "a child that writes through NULL: WTERMSIG SIGSEGV (%s)", desc(w, st));
}

/* --- SIGCHLD ------------------------------------------------------------ */
static volatile sig_atomic_t chld_count;
static volatile pid_t chld_pid;
static volatile int chld_signo, chld_code, chld_status;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	chld_signo = si->si_signo;
	chld_pid = si->si_pid;
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_count++;
}

static void check_sigchld(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, &old);
	chld_count = 0;
	pid_t pid = xfork();
	if (pid == 0)
		_exit(3);
	if (pid < 0) {
		sigaction(SIGCHLD, &old, NULL);
		fork_failed("SIGCHLD", errno);
		return;
	}
	for (int i = 0; i < 5000 && !chld_count; i++)
		sleep_ms(1);
	int st;
	pid_t w = reap(pid, &st);
	ok(chld_count == 1 && chld_signo == SIGCHLD && chld_pid == pid && chld_code == CLD_EXITED && chld_status == 3 &&
		   exited(w, pid, st, 3),
	   "SIGCHLD reaches the parent's SA_SIGINFO handler when a child exits: %d time(s), si_signo %d, si_pid %d "
	   "(child %d), si_code %d (CLD_EXITED %d), si_status %d",
	   (int)chld_count, chld_signo, (int)chld_pid, (int)pid, chld_code, CLD_EXITED, chld_status);

	signal(SIGCHLD, SIG_IGN);
	pid_t p[3];
	for (int i = 0; i < 3; i++) {
		p[i] = xfork();
		if (p[i] == 0) {
			sleep_ms(10 * i);
			_exit(0);
		}
		if (p[i] < 0) {
			int e = errno;
			sigaction(SIGCHLD, &old, NULL);
			fork_failed("SIGCHLD at SIG_IGN", e);
			return;
		}
	}
	errno = 0;
	while ((w = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
		;
	int e = errno;
	int gone = 0;
	for (int i = 0; i < 3; i++)
		gone += kill(p[i], 0) == -1 && errno == ESRCH;
	sigaction(SIGCHLD, &old, NULL);
	ok(w == -1 && e == ECHILD && gone == 3,
	   "with SIGCHLD at SIG_IGN, 3 children are reaped by themselves: waitpid(-1) waits for them, then ECHILD "
	   "(%s); kill(pid, 0) ESRCH for %d",
	   w < 0 ? strerror(e) : "returned a pid", gone);
}

/* --- waitid ------------------------------------------------------------- */
static void check_waitid(void)
{
	pid_t pid = xfork();
	if (pid == 0)
		_exit(4);
	if (pid < 0) {
		fork_failed("waitid WNOWAIT", errno);
		return;
	}
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r;
	while ((r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) < 0 && errno == EINTR)
		;
	int again = kill(pid, 0);
	int st;
	pid_t w = reap(pid, &st);
	ok(r == 0 && si.si_signo == SIGCHLD && si.si_pid == pid && si.si_code == CLD_EXITED && si.si_status == 4 &&
		   again == 0 && exited(w, pid, st, 4),
	   "waitid(P_PID, WEXITED|WNOWAIT) reports the exit (si_pid %d, si_code %d, si_status %d) and leaves the "
	   "zombie: kill(pid, 0) %d, waitpid then reaps it (%s)",
	   (int)si.si_pid, si.si_code, si.si_status, again, desc(w, st));

	pid = xfork();
	if (pid == 0)
		_exit(5);
	if (pid < 0) {
		fork_failed("waitid(P_ALL)", errno);
		return;
	}
	memset(&si, 0, sizeof si);
	while ((r = waitid(P_ALL, 0, &si, WEXITED)) < 0 && errno == EINTR)
		;
	errno = 0;
	pid_t after = waitpid(pid, &st, WNOHANG);
	int e = errno;
	ok(r == 0 && si.si_pid == pid && si.si_code == CLD_EXITED && si.si_status == 5 && after == -1 && e == ECHILD,
	   "waitid(P_ALL, WEXITED) reaps the child: si_pid %d (child %d), si_status %d; waitpid after it: ECHILD",
	   (int)si.si_pid, (int)pid, si.si_status);

	int hold[2];
	pipe(hold);
	pid = xfork();
	if (pid == 0) {
		close(hold[1]);
		char c;
		read_full(hold[0], &c, 1);
		_exit(0);
	}
	close(hold[0]);
	if (pid < 0) {
		fork_failed("waitid WNOHANG", errno);
		return;
	}
	memset(&si, 0xff, sizeof si);
	r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG);
	int zeroed = si.si_pid == 0 && si.si_signo == 0;
	close(hold[1]);
	w = reap(pid, &st);
	ok(r == 0 && zeroed && exited(w, pid, st, 0),
	   "waitid(P_ALL, WEXITED|WNOHANG) with the only child running: 0, si_pid and si_signo zeroed (%d, %d)",
	   (int)si.si_pid, si.si_signo);
}

/* --- descriptors across fork and exec ----------------------------------- */
static char tmp_file[64];

static void check_fds(void)
{
	int p[2], hold[2];
	pipe(p);
	pipe(hold);
	pid_t pid = xfork();
	if (pid == 0) {
		close(p[0]);
		close(hold[1]);
		write_all(p[1], "through the pipe", 16);
		close(p[1]);
		char c;
		read_full(hold[0], &c, 1);
		_exit(0);
	}
	IF_FORK_FAILED_RETURN(pid, "a pipe across fork");
	close(p[1]);
	close(hold[0]);
	char buf[256];
	ssize_t len = read_to_eof(p[0], buf, sizeof buf);
	int st;
	pid_t alive = waitpid(pid, &st, WNOHANG);
	close(hold[1]);
	pid_t w = reap(pid, &st);
	close(p[0]);
	ok(len == 16 && !strcmp(buf, "through the pipe"),
	   "a pipe made before fork carries bytes from the child to the parent (\"%s\")", buf);
	/* A second child writes and exits without closing. */
	pipe(p);
	pid_t pid2 = xfork();
	if (pid2 == 0) {
		close(p[0]);
		write_all(p[1], "bye", 3);
		_exit(0);
	}
	IF_FORK_FAILED_RETURN(pid2, "EOF at exit");
	close(p[1]);
	char buf2[64];
	ssize_t len2 = read_to_eof(p[0], buf2, sizeof buf2);
	close(p[0]);
	int st2;
	pid_t w2 = reap(pid2, &st2);
	ok(alive == 0 && exited(w, pid, st, 0) && len2 == 3 && !strcmp(buf2, "bye") && exited(w2, pid2, st2, 0),
	   "the parent reads EOF when the child closes its end (the child still running: %s), and when a child exits "
	   "without closing (\"%s\")",
	   alive == 0 ? "yes" : "no", buf2);

	int cp[2];
	pipe2(cp, O_CLOEXEC);
	pid = xfork();
	if (pid == 0) {
		close(cp[0]);
		int fl = fcntl(cp[1], F_GETFD);
		write_all(cp[1], fl >= 0 && (fl & FD_CLOEXEC) ? "kept" : "lost", 4);
		_exit(0);
	}
	IF_FORK_FAILED_RETURN(pid, "O_CLOEXEC across fork");
	close(cp[1]);
	len = read_to_eof(cp[0], buf, sizeof buf);
	close(cp[0]);
	w = reap(pid, &st);
	ok(len == 4 && !strcmp(buf, "kept") && exited(w, pid, st, 0),
	   "an O_CLOEXEC descriptor is kept across fork, still FD_CLOEXEC, and carries bytes (\"%s\")", buf);

	int cl[2], pl[2];
	pipe2(cl, O_CLOEXEC);
	pipe(pl);
	char clo[16], plain[16];
	snprintf(clo, sizeof clo, "%d", cl[1]);
	snprintf(plain, sizeof plain, "%d", pl[1]);
	char *argv[] = { (char *)self, "fd-check", clo, plain, NULL };
	pid = xfork();
	if (pid == 0) {
		close(cl[0]);
		close(pl[0]);
		exec_self(argv, environ);
	}
	IF_FORK_FAILED_RETURN(pid, "O_CLOEXEC across execve");
	close(cl[1]);
	close(pl[1]);
	len = read_to_eof(pl[0], buf, sizeof buf);
	w = reap(pid, &st);
	char c;
	ssize_t clr = read(cl[0], &c, 1); /* EOF: the exec closed the child's copy */
	close(cl[0]);
	close(pl[0]);
	ok(!strcmp(buf, "O_CLOEXEC fd closed, plain fd open") && clr == 0 && exited(w, pid, st, 0),
	   "execve closes the O_CLOEXEC descriptor and keeps the plain one: \"%s\" (%s)", buf, desc(w, st));

	int q[2];
	pipe(q);
	pid = xfork();
	if (pid == 0) {
		close(q[0]);
		close(q[1]);
		_exit(fcntl(q[1], F_GETFD) == -1 && errno == EBADF ? 0 : 1);
	}
	IF_FORK_FAILED_RETURN(pid, "close in the child");
	w = reap(pid, &st);
	ssize_t qw = write(q[1], "z", 1);
	char z = 0;
	ssize_t qr = read(q[0], &z, 1);
	close(q[0]);
	close(q[1]);
	ok(exited(w, pid, st, 0) && qw == 1 && qr == 1 && z == 'z',
	   "closing both ends of a pipe in the child does not close them in the parent (the parent's write and read go "
	   "through)");

	/* One open file description, one offset: writes from both sides follow each other. */
	strcpy(tmp_file, "/tmp/husk-processes-XXXXXX");
	int fd = mkstemp(tmp_file);
	int c2p[2], p2c[2];
	pipe(c2p);
	pipe(p2c);
	write_all(fd, "parent1\n", 8);
	pid = xfork();
	if (pid == 0) {
		close(c2p[0]);
		close(p2c[1]);
		off_t at = lseek(fd, 0, SEEK_CUR);
		write_all(fd, "child1\n", 7);
		write_all(c2p[1], "1", 1);
		if (read_full(p2c[0], &c, 1) != 1)
			_exit(2);
		write_all(fd, "child2\n", 7);
		_exit(at == 8 ? 0 : 1);
	}
	if (pid < 0) {
		fork_failed("a shared offset", errno);
		close(fd);
		unlink(tmp_file);
		return;
	}
	close(c2p[1]);
	close(p2c[0]);
	c = 0;
	read_full(c2p[0], &c, 1);
	off_t mid = lseek(fd, 0, SEEK_CUR);
	write_all(fd, "parent2\n", 8);
	write_all(p2c[1], "2", 1);
	w = reap(pid, &st);
	write_all(fd, "parent3\n", 8);
	off_t end = lseek(fd, 0, SEEK_CUR);
	memset(buf, 0, sizeof buf);
	ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	unlink(tmp_file);
	close(c2p[0]);
	close(p2c[1]);
	ok(exited(w, pid, st, 0) && mid == 15 && end == 38 && got == 38 &&
		   !strcmp(buf, "parent1\nchild1\nparent2\nchild2\nparent3\n"),
	   "parent and child writing to one fd opened before the fork share its offset: the child starts at 8, the "
	   "parent goes on at %ld, ends at %ld, the file holds the 5 writes in order (%ld bytes)",
	   (long)mid, (long)end, (long)got);
}

/* --- vfork -------------------------------------------------------------- */
static volatile int vf_flag;
static char *vf_argv[4];

static pid_t vfork_sleep_exit(void)
{
	vf_flag = 0;
	pid_t p = vfork();
	if (p == 0) {
		struct timespec t = { 0, 100000000 };
		nanosleep(&t, NULL);
		vf_flag = 1; /* the memory is the parent's (CLONE_VM) */
		_exit(5);
	}
	return p;
}

static pid_t vfork_exec(void)
{
	pid_t p = vfork();
	if (p == 0) {
		execve(self, vf_argv, environ);
		_exit(127);
	}
	return p;
}

static void check_vfork(void)
{
	uint64_t t0 = mono();
	pid_t pid = vfork_sleep_exit();
	uint64_t took = mono() - t0;
	int flag = vf_flag;
	IF_FORK_FAILED_RETURN(pid, "vfork");
	made++;
	int st;
	pid_t w = reap(pid, &st);
	ok(pid > 0 && flag == 1 && took >= 95000000u && exited(w, pid, st, 5),
	   "vfork: the parent is suspended until the child's _exit(5) (it slept 100 ms: vfork returned after %.1f ms, "
	   "the child's write to the shared memory seen: %s); status %s",
	   (double)took / 1e6, flag ? "yes" : "no", desc(w, st));

	int p[2];
	pipe(p);
	char fd[16];
	snprintf(fd, sizeof fd, "%d", p[0]);
	vf_argv[0] = (char *)self;
	vf_argv[1] = "read-exit";
	vf_argv[2] = fd;
	vf_argv[3] = NULL;
	pid = vfork_exec();
	IF_FORK_FAILED_RETURN(pid, "vfork then execve");
	made++;
	ssize_t wr = write_all(p[1], "\6", 1); /* only reached before the child ends if the exec resumed us */
	w = reap(pid, &st);
	close(p[0]);
	close(p[1]);
	ok(pid > 0 && wr == 1 && exited(w, pid, st, 6),
	   "vfork then execve: the parent resumes at the exec while the new program runs (it waits for a byte from the "
	   "parent, then exits with it: %s)",
	   desc(w, st));
}

/* --- posix_spawn -------------------------------------------------------- */
static void check_spawn(void)
{
	pid_t pid = -1;
	char *argv[] = { (char *)self, "child-exit", "7", NULL };
	int r = posix_spawn(&pid, self, NULL, NULL, argv, environ);
	if (!r)
		made++;
	int st;
	pid_t w = r ? -1 : reap(pid, &st);
	ok(!r && exited(w, pid, st, 7), "posix_spawn of the program itself with \"child-exit 7\": status 7 (%s, %s)",
	   r ? strerror(r) : "spawned", r ? "-" : desc(w, st));

	int o[2];
	pipe(o);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_addclose(&fa, o[0]);
	posix_spawn_file_actions_addclose(&fa, o[1]);
	char *argv2[] = { (char *)self, "echo-args", "spawned", NULL };
	char *envp2[] = { "HUSK_T=2", NULL };
	r = posix_spawn(&pid, self, &fa, NULL, argv2, envp2);
	posix_spawn_file_actions_destroy(&fa);
	if (!r)
		made++;
	close(o[1]);
	char buf[512], want[512];
	read_to_eof(o[0], buf, sizeof buf);
	close(o[0]);
	w = r ? -1 : reap(pid, &st);
	snprintf(want, sizeof want, "argv[0]=%s argc=3 [spawned] HUSK_T=2 envc=1\n", self);
	ok(!r && !strcmp(buf, want) && exited(w, pid, st, 0),
	   "posix_spawn with file actions (dup2 a pipe onto stdout): the child's output comes through the pipe "
	   "(\"%.*s\")",
	   (int)strcspn(buf, "\n"), buf);

	char *argv3[] = { "missing", NULL };
	pid = 0;
	r = posix_spawn(&pid, "/nonexistent/processes-missing", NULL, NULL, argv3, environ);
	if (!r) {
		made++;
		reap(pid, &st);
	}
	ok(r == ENOENT, "posix_spawn of a missing file returns ENOENT (%s)", r ? strerror(r) : "no error");
}

/* --- execve ------------------------------------------------------------- */
static int exec_errno(const char *path)
{
	char *argv[] = { (char *)path, NULL };
	char *envp[] = { NULL };
	pid_t pid = xfork();
	if (pid == 0) {
		execve(path, argv, envp);
		_exit(errno < 255 ? errno : 255);
	}
	if (pid < 0)
		return -2;
	int st;
	pid_t w = reap(pid, &st);
	return w == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_exec(void)
{
	int o[2];
	pipe(o);
	char *argv[] = { (char *)self, "echo-args", "a", "b c", NULL };
	char *envp[] = { "HUSK_T=1", NULL };
	pid_t pid = xfork();
	if (pid == 0) {
		close(o[0]);
		dup2(o[1], 1);
		close(o[1]);
		exec_self(argv, envp);
	}
	IF_FORK_FAILED_RETURN(pid, "execve");
	close(o[1]);
	char buf[512], want[512];
	read_to_eof(o[0], buf, sizeof buf);
	close(o[0]);
	int st;
	pid_t w = reap(pid, &st);
	snprintf(want, sizeof want, "argv[0]=%s argc=4 [a][b c] HUSK_T=1 envc=1\n", self);
	ok(!strcmp(buf, want) && exited(w, pid, st, 0),
	   "fork, then execve of the program itself: the new program gets argv {self, echo-args, a, \"b c\"} and "
	   "exactly the env given, HUSK_T=1 (\"%.*s\", %s)",
	   (int)strcspn(buf, "\n"), buf, desc(w, st));

	pid = xfork();
	if (pid == 0) {
		char me[16], parent[16];
		snprintf(me, sizeof me, "%d", (int)getpid());
		snprintf(parent, sizeof parent, "%d", (int)getppid());
		char *a[] = { (char *)self, "same-pid", me, parent, NULL };
		exec_self(a, environ);
	}
	IF_FORK_FAILED_RETURN(pid, "execve keeps the pid");
	w = reap(pid, &st);
	ok(exited(w, pid, st, 0),
	   "execve keeps the pid and the parent: getpid() and getppid() after the exec are those before (%s)",
	   desc(w, st));

	int e = exec_errno("/nonexistent/processes-missing");
	ok(e == ENOENT, "execve of a missing file: ENOENT (%s)", e > 0 ? strerror(e) : "no error code");
	e = exec_errno("/tmp");
	ok(e == EACCES, "execve of a directory: EACCES (%s)", e > 0 ? strerror(e) : "no error code");
	strcpy(tmp_file, "/tmp/husk-processes-text-XXXXXX");
	int fd = mkstemp(tmp_file);
	write_all(fd, "just text: no #! and no ELF header\n", 35);
	fchmod(fd, 0755);
	close(fd);
	e = exec_errno(tmp_file);
	unlink(tmp_file);
	ok(e == ENOEXEC, "execve of an executable text file with no #!: ENOEXEC (%s)",
	   e > 0 ? strerror(e) : "no error code");
}

/* --- an orphan ---------------------------------------------------------- */
static void check_orphan(void)
{
	int gp[2], ready[2];
	pipe(gp);
	pipe(ready);
	pid_t pid = xfork();
	if (pid == 0) {
		close(gp[0]);
		pid_t g = fork();
		if (g == 0) {
			pid_t was = getppid();
			close(ready[0]);
			close(ready[1]); /* the child exits at this EOF: after getppid() above */
			write_all(gp[1], &was, sizeof was);
			pid_t now = was;
			for (int i = 0; i < 5000 && now == was; i++) {
				sleep_ms(1);
				now = getppid();
			}
			write_all(gp[1], &now, sizeof now);
			_exit(0);
		}
		close(gp[1]);
		close(ready[1]);
		char c;
		read_full(ready[0], &c, 1); /* EOF: the grandchild has read getppid() and closed its end */
		_exit(g > 0 ? 0 : 1);
	}
	IF_FORK_FAILED_RETURN(pid, "an orphan");
	made++;
	close(gp[1]);
	close(ready[0]);
	close(ready[1]);
	int st;
	pid_t w = reap(pid, &st);
	pid_t was = 0, now = 0;
	read_full(gp[0], &was, sizeof was);
	read_full(gp[0], &now, sizeof now);
	close(gp[0]);
	if (now == my_pid) { /* we are its reaper (pid 1 in a guest, or a subreaper): reap it */
		siginfo_t si;
		waitid(P_ALL, 0, &si, WEXITED);
	}
	ok(exited(w, pid, st, 0) && was == pid && now != pid && now > 0,
	   "an orphan: the grandchild's getppid() changes from its dead parent's pid (%d) to its new reaper's (%d)",
	   (int)was, (int)now);
}

/* --- process groups and sessions ---------------------------------------- */
static void check_pgrp(void)
{
	int ready[2], hold[2];
	pipe(ready);
	pipe(hold);
	pid_t pid = xfork();
	if (pid == 0) {
		close(ready[0]);
		close(hold[1]);
		int r = setpgid(0, 0);
		int good = r == 0 && getpgrp() == getpid() && getpgid(0) == getpid() && getsid(0) == my_sid;
		write_all(ready[1], "r", 1);
		char c;
		read_full(hold[0], &c, 1);
		_exit(good ? 0 : 1);
	}
	IF_FORK_FAILED_RETURN(pid, "setpgid");
	close(ready[1]);
	close(hold[0]);
	char c = 0;
	read_full(ready[0], &c, 1);
	pid_t pg = getpgid(pid);
	close(hold[1]);
	close(ready[0]);
	int st;
	pid_t w = reap(pid, &st);
	ok(c == 'r' && pg == pid && exited(w, pid, st, 0),
	   "setpgid(0, 0) in a child: its getpgrp() and getpgid(0) are its pid, its session the parent's; the parent's "
	   "getpgid(child) says %d (%s)",
	   (int)pg, desc(w, st));

	/* A group of three, and one outside it. */
	pipe(ready);
	pid_t g[4];
	for (int i = 0; i < 4; i++) {
		g[i] = xfork();
		if (g[i] == 0) {
			close(ready[0]);
			if (i < 3)
				setpgid(0, i ? g[0] : 0);
			signal(SIGTERM, SIG_DFL);
			write_all(ready[1], "r", 1);
			for (;;)
				pause();
		}
		if (g[i] < 0) {
			int e = errno;
			for (int k = 0; k < i; k++) {
				kill(g[k], SIGKILL);
				reap(g[k], &st);
			}
			fork_failed("kill(-pgid)", e);
			return;
		}
		if (i < 3)
			setpgid(g[i], g[0]); /* both sides, as a shell does: no race */
	}
	close(ready[1]);
	char rs[4] = { 0 };
	read_full(ready[0], rs, 4);
	close(ready[0]);
	int in = 0;
	for (int i = 0; i < 3; i++)
		in += getpgid(g[i]) == g[0];
	int outside = getpgid(g[3]) == my_pgrp;
	int kr = kill(-g[0], SIGTERM);
	int termed = 0;
	char got[200] = "";
	for (int i = 0; i < 3; i++) {
		w = reap(g[i], &st);
		termed += killed_by(w, g[i], st, SIGTERM);
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? ", " : "", desc(w, st));
	}
	sleep_ms(20);
	pid_t alive = waitpid(g[3], &st, WNOHANG);
	kill(g[3], SIGKILL);
	w = reap(g[3], &st);
	ok(!memcmp(rs, "rrrr", 4) && in == 3 && outside && kr == 0 && termed == 3 && alive == 0 &&
		   killed_by(w, g[3], st, SIGKILL),
	   "kill(-pgid, SIGTERM) reaches each of the group's 3 processes (%s), not the child outside it (still "
	   "running: %s)",
	   got, alive == 0 ? "yes" : "no");

	pid = xfork();
	if (pid == 0) {
		pid_t s = setsid();
		_exit((s == getpid() ? 0 : 1) | (getsid(0) == getpid() ? 0 : 2) | (getpgrp() == getpid() ? 0 : 4) |
		      (getppid() == my_pid ? 0 : 8));
	}
	IF_FORK_FAILED_RETURN(pid, "setsid");
	w = reap(pid, &st);
	ok(exited(w, pid, st, 0),
	   "setsid() in a child returns its pid, and getsid(0) and getpgrp() are its pid (%s; bits: 1 setsid, 2 "
	   "getsid, 4 getpgrp, 8 getppid)",
	   desc(w, st));
	ok(getpgrp() == my_pgrp && getpgid(0) == my_pgrp && getsid(0) == my_sid && getpgid(my_pid) == my_pgrp,
	   "the parent's process group (%d) and session (%d) are unchanged", (int)getpgid(0), (int)getsid(0));
}

/* --- kill(pid, 0) ------------------------------------------------------- */
static void check_kill0(void)
{
	int hold[2];
	pipe(hold);
	pid_t pid = xfork();
	if (pid == 0) {
		close(hold[1]);
		char c;
		read_full(hold[0], &c, 1);
		_exit(0);
	}
	IF_FORK_FAILED_RETURN(pid, "kill(pid, 0)");
	close(hold[0]);
	int live = kill(pid, 0);
	close(hold[1]);
	siginfo_t si;
	int r;
	while ((r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) < 0 && errno == EINTR)
		;
	int zombie = kill(pid, 0);
	int st;
	pid_t w = reap(pid, &st);
	errno = 0;
	int gone = kill(pid, 0);
	int e = errno;
	ok(live == 0 && r == 0 && zombie == 0,
	   "kill(pid, 0) of a live child: 0 (%d); of the exited child not yet reaped (a zombie): 0 (%d)", live, zombie);
	ok(exited(w, pid, st, 0) && gone == -1 && e == ESRCH, "kill(pid, 0) of a reaped child: ESRCH (%s)",
	   gone ? strerror(e) : "no error");
}

/* --- threads and fork --------------------------------------------------- */
static volatile unsigned long spins;

static void *spinner(void *arg)
{
	(void)arg;
	block_alarm();
	while (!stop_spinning)
		spins++;
	return NULL;
}

/* In a child forked beside other threads: only one thread, and libc works. */
static int child_of_threads(int out)
{
	unsigned long before = spins;
	sleep_ms(50);
	int alone = spins == before;
	int tid_is_pid = syscall(SYS_gettid) == getpid();
	char *m = malloc(100000);
	dup2(out, 1);
	close(out);
	printf("child: %s, %s, malloc %s\n", alone ? "alone" : "NOT ALONE", tid_is_pid ? "tid == pid" : "tid != pid",
	       m ? "ok" : "failed");
	fflush(stdout);
	free(m);
	return alone && tid_is_pid && m ? 0 : 1;
}

static int tf_out;
static pid_t tf_pid;

static void *fork_in_thread(void *arg)
{
	(void)arg;
	block_alarm();
	tf_pid = fork();
	if (tf_pid == 0) {
		child_start();
		_exit(child_of_threads(tf_out));
	}
	return NULL;
}

static void check_thread_fork(void)
{
	stop_spinning = 0;
	pthread_t t;
	int tr = pthread_create(&t, NULL, spinner, NULL);
	for (int i = 0; i < 1000 && spins < 1000; i++)
		sleep_ms(1);
	int o[2];
	pipe(o);
	pid_t pid = xfork();
	if (pid == 0) {
		close(o[0]);
		_exit(child_of_threads(o[1]));
	}
	if (pid < 0) {
		int e = errno;
		stop_spinning = 1;
		if (!tr)
			pthread_join(t, NULL);
		fork_failed("fork beside a thread", e);
		return;
	}
	close(o[1]);
	char buf[256];
	read_to_eof(o[0], buf, sizeof buf);
	close(o[0]);
	int st;
	pid_t w = reap(pid, &st);
	stop_spinning = 1;
	if (!tr)
		pthread_join(t, NULL);
	ok(!tr && exited(w, pid, st, 0) && !strcmp(buf, "child: alone, tid == pid, malloc ok\n"),
	   "fork with a second thread spinning: the child has only the forking thread (the spinner's counter stands "
	   "still over 50 ms, gettid() == getpid()), malloc and printf work, exit 0 (\"%.*s\", %s)",
	   (int)strcspn(buf, "\n"), buf, desc(w, st));

	stop_spinning = 0;
	tr = pthread_create(&t, NULL, spinner, NULL);
	pipe(o);
	tf_out = o[1];
	tf_pid = -1;
	pthread_t f;
	fflush(stdout);
	int fr = pthread_create(&f, NULL, fork_in_thread, NULL);
	if (!fr)
		pthread_join(f, NULL);
	if (tf_pid > 0) {
		made++;
		kids[nkids++] = tf_pid;
	}
	close(o[1]);
	read_to_eof(o[0], buf, sizeof buf);
	close(o[0]);
	w = tf_pid > 0 ? reap(tf_pid, &st) : -1; /* the child of another thread is the process's */
	stop_spinning = 1;
	if (!tr)
		pthread_join(t, NULL);
	ok(!fr && tf_pid > 0 && exited(w, tf_pid, st, 0) && !strcmp(buf, "child: alone, tid == pid, malloc ok\n"),
	   "fork from a thread that is not the main one (beside a spinner): the child runs alone and exits 0; main "
	   "reaps it after the thread ended (\"%.*s\", %s)",
	   (int)strcspn(buf, "\n"), buf, desc(w, st));
}

/* --- cost --------------------------------------------------------------- */
static void check_timing(void)
{
	int good = 0;
	uint64_t t0 = mono();
	for (int i = 0; i < 100; i++) {
		pid_t pid = fork(); /* not xfork: no tracking, no child_start, as light as it gets */
		if (pid == 0)
			_exit(0);
		if (pid < 0)
			break;
		made++;
		int st;
		pid_t w = reap(pid, &st);
		good += exited(w, pid, st, 0);
	}
	uint64_t took = mono() - t0;
	ok(good == 100, "100 rounds of fork, _exit(0), waitpid: %d exit 0", good);
	if (good == 100)
		printf("# fork+wait: %.1f us per round\n", (double)took / 100 / 1000);
}

/* --- modes -------------------------------------------------------------- */
static int fork_limit(long max)
{
	pid_t c = fork();
	if (c == 0) {
		alarm(60);
		int hold[2];
		if (pipe(hold))
			_exit(3);
		long k = 0;
		int e = 0;
		while (k < max) {
			pid_t p = fork();
			if (p == 0) {
				close(hold[1]);
				alarm(60);
				char ch;
				read_full(hold[0], &ch, 1); /* EOF when the forking child closes hold */
				_exit(0);
			}
			if (p < 0) {
				e = errno;
				break;
			}
			k++;
		}
		close(hold[1]);
		long reaped = 0;
		int st;
		while (waitpid(-1, &st, 0) > 0 || errno == EINTR)
			reaped += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		printf("fork-limit: %ld children, then %s; %ld reaped\n", k,
		       e == EAGAIN ? "EAGAIN"
		       : e         ? strerror(e)
				   : "no failure",
		       reaped);
		fflush(stdout);
		_exit(e == EAGAIN && reaped == k ? 0 : 1);
	}
	if (c < 0) {
		printf("fork-limit: the first fork failed: %s\n", strerror(errno));
		return 1;
	}
	int st;
	pid_t w = reap(c, &st);
	printf("fork-limit: the parent goes on; its child %s\n", desc(w, st));
	return exited(w, c, st, 0) ? 0 : 1;
}

static int mode(int argc, char **argv)
{
	const char *how = argv[1];
	if (!strcmp(how, "child-exit") && argc == 3)
		exit(atoi(argv[2]));
	if (!strcmp(how, "echo-args")) {
		const char *t = getenv("HUSK_T");
		int envc = 0;
		while (environ && environ[envc])
			envc++;
		printf("argv[0]=%s argc=%d ", argv[0], argc);
		for (int i = 2; i < argc; i++)
			printf("[%s]", argv[i]);
		printf(" HUSK_T=%s envc=%d\n", t ? t : "(unset)", envc);
		return 0;
	}
	if (!strcmp(how, "same-pid") && argc == 4) {
		int good = getpid() == atoi(argv[2]) && getppid() == atoi(argv[3]);
		if (!good)
			fprintf(stderr, "same-pid: pid %d (was %s), ppid %d (was %s)\n", (int)getpid(), argv[2],
				(int)getppid(), argv[3]);
		return !good;
	}
	if (!strcmp(how, "fd-check") && argc == 4) {
		int clo = atoi(argv[2]), plain = atoi(argv[3]);
		errno = 0;
		int closed = fcntl(clo, F_GETFD) == -1 && errno == EBADF;
		int open = fcntl(plain, F_GETFD) >= 0;
		char msg[100];
		int len = snprintf(msg, sizeof msg, "O_CLOEXEC fd %s, plain fd %s", closed ? "closed" : "open",
				   open ? "open" : "closed");
		return write_all(plain, msg, (size_t)len) == len ? 0 : 1;
	}
	if (!strcmp(how, "fork-oom") && argc == 3) {
		size_t len = (size_t)atoi(argv[2]) << 20;
		unsigned char *b = malloc(len);
		if (!b)
			return 2;
		memset(b, 1, len);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			for (size_t i = 0; i < len; i += 4096)
				((volatile unsigned char *)b)[i] = 2; /* every page (a memset before _exit may be dropped) */
			_exit(0);
		}
		int st;
		pid_t w = pid > 0 ? reap(pid, &st) : -1;
		size_t i = 0;
		while (i < len && b[i] == 1)
			i++;
		printf("fork-oom: the child %s; the parent's %s MiB intact: %s\n", desc(w, st), argv[2], i == len ? "yes" : "no");
		return 0;
	}
	if (!strcmp(how, "read-exit") && argc == 3) {
		alarm(5);
		unsigned char c = 0;
		if (read_full(atoi(argv[2]), &c, 1) != 1)
			return 100;
		return c;
	}
	if (!strcmp(how, "fork-limit"))
		return fork_limit(argc > 2 ? atol(argv[2]) : 10000);
	printf("unknown mode %s\n", how);
	return 2;
}

int main(int argc, char **argv)
{
	static char exe[4096];
	self = getenv("PROCESSES_SELF");
	if (!self || !*self) {
		ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (l > 0 && l < (ssize_t)sizeof exe - 1) {
			exe[l] = 0;
			self = exe;
		} else
			self = argv[0];
	}
	if (argc > 1)
		return mode(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, timed_out);
	my_pid = getpid();
	my_pgrp = getpgrp();
	my_sid = getsid(0);
	printf("# self: %s, pid %d, parent %d, group %d, session %d\n", self, (int)my_pid, (int)getppid(), (int)my_pgrp,
	       (int)my_sid);
	run(check_fork_memory, "fork: memory", 5);
	run(check_fork_cow, "fork: copy-on-write", 6);
	run(check_wait, "exit statuses and waits", 6);
	run(check_signaled, "children killed by signals", 3);
	run(check_sigchld, "SIGCHLD", 2);
	run(check_waitid, "waitid", 3);
	run(check_fds, "descriptors", 6);
	run(check_vfork, "vfork", 2);
	run(check_spawn, "posix_spawn", 3);
	run(check_exec, "execve", 5);
	run(check_orphan, "an orphan", 1);
	run(check_pgrp, "process groups and sessions", 4);
	run(check_kill0, "kill(pid, 0)", 2);
	run(check_thread_fork, "threads and fork", 2);
	run(check_timing, "fork+wait timing", 1);
	printf("# %d processes created\n", made);
	printf("done %d\n", n);
	return 0;
}
