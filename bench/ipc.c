/* SPDX-License-Identifier: GPL-2.0-only */
/* ipc [SCALE]: threads and IPC costs, one "name value" line each:
 *   futex_rt_ns    two threads hand a token back and forth through one futex
 *                  word (FUTEX_WAIT/FUTEX_WAKE): ns per round trip
 *   pipe_gbps      one thread writes 64 KiB chunks into a pipe, another reads
 *                  them: GB/s (10^9 bytes)
 *   socket_gbps    the same through a socketpair(AF_UNIX, SOCK_STREAM)
 *   signal_ns      kill(getpid(), SIGUSR1) with a handler: ns per signal
 *   thread_us      pthread_create + pthread_join of a thread that returns at
 *                  once: us each
 * SCALE (1 by default) multiplies every count.  bench/threads builds it with
 * husk's libc (run in husk: the fast entry) and with Debian's stock musl (run
 * natively). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Linux's, spelled out: neither musl-gcc sees the kernel's headers. */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

#define CHUNK (64 * 1024)

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "ipc: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(t, NULL, fn, arg);
	if (e) {
		errno = e;
		die("pthread_create");
	}
}

/* --- futex ping-pong: the word is 1 when it is the partner's turn ------- */

static _Atomic int word;
static long rounds;

static void futex(int op, int val)
{
	if (syscall(SYS_futex, &word, op, val, NULL, NULL, 0) < 0 && errno != EAGAIN && errno != EINTR)
		die("futex");
}

static void *partner(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		while (atomic_load(&word) == 0)
			futex(FUTEX_WAIT_PRIVATE, 0);
		atomic_store(&word, 0);
		futex(FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static double futex_rt_ns(long n)
{
	pthread_t t;
	rounds = n;
	start(&t, partner, NULL);
	double a = now();
	for (long i = 0; i < n; i++) {
		atomic_store(&word, 1);
		futex(FUTEX_WAKE_PRIVATE, 1);
		while (atomic_load(&word) == 1)
			futex(FUTEX_WAIT_PRIVATE, 1);
	}
	double b = now();
	pthread_join(t, NULL);
	return (b - a) * 1e9 / n;
}

/* --- stream throughput: fd[1] written by a thread, fd[0] read here ------- */

struct stream {
	int fd;
	long bytes;
};

static void *writer(void *arg)
{
	struct stream *s = arg;
	static char buf[CHUNK];
	memset(buf, 'x', sizeof buf);
	for (long left = s->bytes; left > 0;) {
		ssize_t w = write(s->fd, buf, left < CHUNK ? left : CHUNK);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		left -= w;
	}
	close(s->fd);
	return NULL;
}

static double stream_gbps(int fd[2], long bytes)
{
	static char buf[CHUNK];
	struct stream s = { fd[1], bytes };
	pthread_t t;
	double a = now();
	start(&t, writer, &s);
	long got = 0;
	for (;;) {
		ssize_t r = read(fd[0], buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read");
		if (r == 0)
			break;
		got += r;
	}
	double b = now();
	pthread_join(t, NULL);
	close(fd[0]);
	if (got != bytes) {
		fprintf(stderr, "ipc: read %ld bytes of %ld\n", got, bytes);
		exit(1);
	}
	return bytes / (b - a) / 1e9;
}

/* --- signals and threads ------------------------------------------------ */

static volatile sig_atomic_t caught;

static void on_usr1(int sig)
{
	(void)sig;
	caught++;
}

static double signal_ns(long n)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	pid_t self = getpid();
	double a = now();
	for (long i = 0; i < n; i++)
		kill(self, SIGUSR1);
	double b = now();
	if (caught != n) {
		fprintf(stderr, "ipc: %ld signals sent, %ld handled\n", n, (long)caught);
		exit(1);
	}
	return (b - a) * 1e9 / n;
}

static void *nothing(void *arg)
{
	return arg;
}

static double thread_us(long n)
{
	double a = now();
	for (long i = 0; i < n; i++) {
		pthread_t t;
		start(&t, nothing, NULL);
		pthread_join(t, NULL);
	}
	return (now() - a) * 1e6 / n;
}

int main(int argc, char **argv)
{
	long k = argc > 1 ? atol(argv[1]) : 1;
	int fd[2];
	if (k < 1) {
		fprintf(stderr, "usage: ipc [SCALE]\n");
		return 2;
	}
	printf("futex_rt_ns %.0f\n", futex_rt_ns(20000 * k));
	if (pipe(fd))
		die("pipe");
	printf("pipe_gbps %.2f\n", stream_gbps(fd, (256L << 20) * k));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd))
		die("socketpair");
	printf("socket_gbps %.2f\n", stream_gbps(fd, (256L << 20) * k));
	printf("signal_ns %.0f\n", signal_ns(100000 * k));
	printf("thread_us %.1f\n", thread_us(2000 * k));
	return 0;
}
