// SPDX-License-Identifier: GPL-2.0-only
/* eventfd and timerfd as Linux has them (guest/ipc/eventfd.c, timerfd.c),
 * checked from inside the guest: one "ok N - ..." or "not ok N - ..." line
 * per check, then "done N".  Run natively it passes on Linux too (that is
 * how the checks themselves were checked).  Every wait is bounded: a lost
 * wake-up fails its check after a few seconds, never hangs the run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define EVENTFD_MAX 0xfffffffffffffffeull
#define MS 1000000ull


static void sleep_ms(long ms)
{
	struct timespec t = ts_of((uint64_t)ms * MS);
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Polls *flag (1 ms sleeps) until it is nonzero or ms pass: its value. */
static int wait_flag(volatile int *flag, long ms)
{
	uint64_t end = mono() + (uint64_t)ms * MS;
	while (!*flag && mono() < end)
		sleep_ms(1);
	return *flag;
}

/* read/write of one uint64_t: the byte count, or -errno */
static long get(int fd, uint64_t *v)
{
	long r = read(fd, v, sizeof *v);
	return r < 0 ? -errno : r;
}

static long put(int fd, uint64_t v)
{
	long r = write(fd, &v, sizeof v);
	return r < 0 ? -errno : r;
}

static short revents(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN | POLLOUT, 0 };
	return poll(&p, 1, timeout_ms) < 0 ? -1 : p.revents;
}

/* No SA_RESTART: a read the handler interrupts ends with EINTR. */
static volatile int alarms;
static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void alarm_in_ms(long ms)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 0 }, { 0, ms * 1000 } };
	setitimer(ITIMER_REAL, &it, NULL);
}

/* --- a thread that reads or writes one value, blocking ------------------- */
struct io {
	int fd, write;
	uint64_t v;
	long r;
	volatile int done;
};

static void *do_io(void *arg)
{
	struct io *io = arg;
	io->r = io->write ? put(io->fd, io->v) : get(io->fd, &io->v);
	io->done = 1;
	return NULL;
}

static int start(pthread_t *t, struct io *io)
{
	io->done = 0;
	int e = pthread_create(t, NULL, do_io, io);
	if (e) {
		printf("Bail out! pthread_create: %s\n", strerror(e));
		return 0;
	}
	return 1;
}

/* Joins the thread if it ended (else it stays blocked: the run ends anyway). */
static int finish(pthread_t t, struct io *io, long ms)
{
	if (!wait_flag(&io->done, ms))
		return 0;
	pthread_join(t, NULL);
	return 1;
}

/* --- eventfd ------------------------------------------------------------- */
static void check_eventfd(void)
{
	uint64_t v = 0;
	char small[4];
	int fd = eventfd(5, EFD_NONBLOCK);
	ok(fd >= 0 && fcntl(fd, F_GETFL) == (O_RDWR | O_NONBLOCK) && !(fcntl(fd, F_GETFD) & FD_CLOEXEC),
	   "eventfd(5, EFD_NONBLOCK): an O_RDWR|O_NONBLOCK file without FD_CLOEXEC");
	ok(revents(fd, 0) == (POLLIN | POLLOUT), "poll: POLLIN|POLLOUT with a count of 5");
	ok(read(fd, small, 4) < 0 && errno == EINVAL, "read of 4 bytes: EINVAL");
	ok(write(fd, small, 4) < 0 && errno == EINVAL, "write of 4 bytes: EINVAL");
	uint64_t big[2] = { 0, 0 };
	long r = read(fd, big, sizeof big);
	ok(r == 8 && big[0] == 5, "read of 16 bytes: 8 of them, the count 5");
	ok(get(fd, &v) == -EAGAIN, "then the count is 0: EAGAIN");
	ok(revents(fd, 0) == POLLOUT, "poll: POLLOUT only at 0");
	ok(put(fd, 3) == 8 && put(fd, 4) == 8 && get(fd, &v) == 8 && v == 7, "writes add up: 3 + 4 read as 7");
	ok(put(fd, ~0ull) == -EINVAL, "a write of 0xffffffffffffffff: EINVAL");
	ok(put(fd, 0) == 8 && get(fd, &v) == -EAGAIN, "a write of 0 succeeds and leaves 0");
	ok(put(fd, EVENTFD_MAX) == 8 && revents(fd, 0) == POLLIN, "at 0xfffffffffffffffe: POLLIN, no POLLOUT");
	ok(put(fd, 1) == -EAGAIN, "a write past 0xfffffffffffffffe: EAGAIN");
	ok(get(fd, &v) == 8 && v == EVENTFD_MAX, "read: 0xfffffffffffffffe");
	ok(put(fd, EVENTFD_MAX - 1) == 8 && put(fd, 2) == -EAGAIN && put(fd, 1) == 8 && get(fd, &v) == 8
	   && v == EVENTFD_MAX, "the maximum is reachable in steps, never passed");
	close(fd);

	fd = eventfd(3, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	int ones = 0;
	for (int i = 0; i < 3; i++)
		ones += get(fd, &v) == 8 && v == 1;
	ok(ones == 3 && get(fd, &v) == -EAGAIN, "EFD_SEMAPHORE: three reads of 1 from 3, then EAGAIN");
	ok(fcntl(fd, F_GETFD) & FD_CLOEXEC, "EFD_CLOEXEC: FD_CLOEXEC");
	close(fd);

	errno = 0;
	ok(syscall(SYS_eventfd2, 0, 8) == -1 && errno == EINVAL, "eventfd2 with an unknown flag (8): EINVAL");
#ifdef SYS_eventfd
	fd = (int)syscall(SYS_eventfd, 2);
	ok(fd >= 0 && get(fd, &v) == 8 && v == 2, "the old eventfd call (no flags): a count of 2");
	close(fd);
#endif

	/* A thread blocks in read until main writes. */
	pthread_t t;
	struct io io = { .fd = eventfd(0, 0) };
	if (!start(&t, &io))
		return;
	sleep_ms(50);
	ok(!io.done, "a blocking read of 0 waits (50 ms)");
	put(io.fd, 42);
	ok(finish(t, &io, 3000) && io.r == 8 && io.v == 42, "a write from main wakes it with 42");
	ok(revents(io.fd, 0) == POLLOUT, "and the count is 0 again");

	/* A thread blocks in write (the count at its maximum) until main reads. */
	put(io.fd, EVENTFD_MAX);
	io.write = 1, io.v = 5;
	if (!start(&t, &io))
		return;
	sleep_ms(50);
	ok(!io.done, "a blocking write past the maximum waits (50 ms)");
	ok(get(io.fd, &v) == 8 && v == EVENTFD_MAX, "main reads the maximum");
	ok(finish(t, &io, 3000) && io.r == 8 && get(io.fd, &v) == 8 && v == 5, "the write goes through: 5");

	/* A signal interrupts a blocking read. */
	alarms = 0;
	alarm_in_ms(30);
	long e = get(io.fd, &v);
	ok(e == -EINTR && alarms == 1, "a blocking read is interrupted by a signal (EINTR)");
	close(io.fd);
}

/* --- timerfd ------------------------------------------------------------- */
static int settime(int fd, int flags, uint64_t value_ns, uint64_t interval_ns, struct itimerspec *old)
{
	struct itimerspec its = { ts_of(interval_ns), ts_of(value_ns) };
	return timerfd_settime(fd, flags, &its, old) ? -errno : 0;
}

static uint64_t ns(struct timespec t)
{
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void check_timerfd(void)
{
	uint64_t v = 0;
	struct itimerspec cur;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	ok(fd >= 0 && fcntl(fd, F_GETFL) == (O_RDWR | O_NONBLOCK) && !(fcntl(fd, F_GETFD) & FD_CLOEXEC),
	   "timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK): O_RDWR|O_NONBLOCK, no FD_CLOEXEC");
	ok(get(fd, &v) == -EAGAIN && revents(fd, 0) == 0, "disarmed: EAGAIN, poll says nothing");
	ok(put(fd, 1) == -EINVAL, "write: EINVAL");
	ok(timerfd_gettime(fd, &cur) == 0 && ns(cur.it_value) == 0 && ns(cur.it_interval) == 0,
	   "gettime of a new timer: all zero");
	errno = 0;
	ok(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0) == -1 && errno == EINVAL, "a CPU-time clock: EINVAL");
	errno = 0;
	ok(timerfd_create(CLOCK_MONOTONIC, 1) == -1 && errno == EINVAL, "an unknown create flag: EINVAL");
	int rt = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC), bt = timerfd_create(CLOCK_BOOTTIME, 0);
	ok(rt >= 0 && bt >= 0 && (fcntl(rt, F_GETFD) & FD_CLOEXEC) && fcntl(bt, F_GETFL) == O_RDWR,
	   "CLOCK_REALTIME (TFD_CLOEXEC: FD_CLOEXEC) and CLOCK_BOOTTIME");

	struct itimerspec bad = { { 0, 0 }, { 0, 1000000000 } };
	ok(timerfd_settime(fd, 0, &bad, NULL) == -1 && errno == EINVAL, "settime: tv_nsec of a billion: EINVAL");
	bad = (struct itimerspec){ { 0, 0 }, { -1, 0 } };
	ok(timerfd_settime(fd, 0, &bad, NULL) == -1 && errno == EINVAL, "settime: a negative tv_sec: EINVAL");
	bad = (struct itimerspec){ { -1, 0 }, { 1, 0 } };
	ok(timerfd_settime(fd, 0, &bad, NULL) == -1 && errno == EINVAL, "settime: a negative interval: EINVAL");
	ok(settime(fd, 4, MS, 0, NULL) == -EINVAL, "settime: an unknown flag: EINVAL");
	ok(settime(999, 0, MS, 0, NULL) == -EBADF && timerfd_gettime(999, &cur) == -1 && errno == EBADF,
	   "settime, gettime of a closed fd: EBADF");
	int efd = eventfd(0, 0);
	ok(settime(efd, 0, MS, 0, NULL) == -EINVAL && timerfd_gettime(efd, &cur) == -1 && errno == EINVAL,
	   "settime, gettime of an eventfd: EINVAL");
	close(efd);

	/* One shot. */
	ok(settime(fd, 0, 50 * MS, 0, NULL) == 0 && timerfd_gettime(fd, &cur) == 0 && ns(cur.it_interval) == 0
	   && ns(cur.it_value) > 40 * MS && ns(cur.it_value) <= 50 * MS,
	   "a 50 ms one-shot timer: gettime shows 40-50 ms left, no interval");
	ok(get(fd, &v) == -EAGAIN && revents(fd, 0) == 0, "not expired yet: EAGAIN, poll says nothing");
	uint64_t t0 = mono();
	short ev = revents(fd, 2000);
	uint64_t waited = mono() - t0;
	ok(ev == POLLIN && waited > 30 * MS && waited < 500 * MS, "poll wakes when it expires (%.1f ms)", waited / 1e6);
	ok(get(fd, &v) == 8 && v == 1, "read: 1 expiration");
	ok(get(fd, &v) == -EAGAIN && timerfd_gettime(fd, &cur) == 0 && ns(cur.it_value) == 0,
	   "then EAGAIN, and gettime says disarmed");

	/* A blocking read waits for the expiry. */
	int bfd = timerfd_create(CLOCK_MONOTONIC, 0);
	settime(bfd, 0, 40 * MS, 0, NULL);
	t0 = mono();
	long r = get(bfd, &v);
	waited = mono() - t0;
	ok(r == 8 && v == 1 && waited > 30 * MS && waited < 1000 * MS, "a blocking read returns 1 after ~40 ms (%.1f ms)",
	   waited / 1e6);

	/* Periodic: missed periods are counted. */
	settime(fd, 0, 20 * MS, 20 * MS, NULL);
	sleep_ms(110);
	r = get(fd, &v);
	ok(r == 8 && v >= 4 && v <= 7, "a 20 ms period, read after 110 ms: 4-7 expirations (%llu)", (unsigned long long)v);
	ok(timerfd_gettime(fd, &cur) == 0 && ns(cur.it_interval) == 20 * MS && ns(cur.it_value) > 0
	   && ns(cur.it_value) <= 20 * MS, "gettime: the interval, and at most one period left");
	settime(bfd, 0, 10 * MS, 10 * MS, NULL);
	uint64_t total = 0;
	t0 = mono();
	for (int i = 0; i < 5; i++)
		if (get(bfd, &v) == 8)
			total += v;
	waited = mono() - t0;
	ok(total >= 5 && total <= 8 && waited >= 40 * MS && waited < 1000 * MS,
	   "five blocking reads of a 10 ms timer: 5-8 expirations in ~50 ms (%llu in %.1f ms)",
	   (unsigned long long)total, waited / 1e6);
	settime(fd, 0, 1, 1, NULL);
	sleep_ms(10);
	r = get(fd, &v);
	ok(r == 8 && v >= 5000000, "a 1 ns period, read after 10 ms: millions of expirations (%llu)",
	   (unsigned long long)v);

	/* settime: the old setting, and a new start. */
	struct itimerspec old;
	settime(fd, 0, 1, 0, NULL);
	sleep_ms(5);
	ok(settime(fd, 0, 10000 * MS, 0, &old) == 0 && ns(old.it_value) == 0 && ns(old.it_interval) == 0,
	   "settime's old value of an expired one-shot timer: zero");
	ok(get(fd, &v) == -EAGAIN, "re-arming forgets the unread expiration");
	ok(settime(fd, 0, 0, 1000 * MS, &old) == 0 && ns(old.it_value) > 9000 * MS && ns(old.it_value) <= 10000 * MS,
	   "settime's old value: the time left (~10 s)");
	ok(timerfd_gettime(fd, &cur) == 0 && ns(cur.it_value) == 0 && ns(cur.it_interval) == 1000 * MS,
	   "disarmed with an interval: gettime shows the interval, no time left");
	ok(get(fd, &v) == -EAGAIN, "and it does not expire");

	/* Absolute times. */
	settime(bfd, TFD_TIMER_ABSTIME, mono() + 30 * MS, 0, NULL);
	t0 = mono();
	r = get(bfd, &v);
	waited = mono() - t0;
	ok(r == 8 && v == 1 && waited > 20 * MS && waited < 1000 * MS, "TFD_TIMER_ABSTIME on CLOCK_MONOTONIC: ~30 ms (%.1f ms)",
	   waited / 1e6);
	settime(bfd, TFD_TIMER_ABSTIME, 1, 0, NULL);
	ok(get(bfd, &v) == 8 && v == 1, "an absolute time long past: expired at once");
	settime(rt, TFD_TIMER_ABSTIME, now_ns(CLOCK_REALTIME) - 1000 * MS, 100 * MS, NULL);
	r = get(rt, &v);
	ok(r == 8 && v >= 11 && v <= 13, "CLOCK_REALTIME, 1 s ago, every 100 ms: 11 expirations (%llu)",
	   (unsigned long long)v);
	settime(rt, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, now_ns(CLOCK_REALTIME) + 30 * MS, 0, NULL);
	t0 = mono();
	r = get(rt, &v);
	waited = mono() - t0;
	ok(r == 8 && v == 1 && waited > 20 * MS && waited < 1000 * MS,
	   "CLOCK_REALTIME absolute, TFD_TIMER_CANCEL_ON_SET: ~30 ms (%.1f ms)", waited / 1e6);

	/* A thread blocked on a disarmed timer wakes when main arms it. */
	pthread_t t;
	struct io io = { .fd = bfd };
	settime(bfd, 0, 0, 0, NULL);
	if (!start(&t, &io))
		return;
	sleep_ms(50);
	ok(!io.done, "a blocking read of a disarmed timer waits (50 ms)");
	settime(bfd, 0, 20 * MS, 0, NULL);
	ok(finish(t, &io, 3000) && io.r == 8 && io.v == 1, "arming it from main: the read returns 1");

	/* A signal interrupts a blocking read. */
	alarms = 0;
	alarm_in_ms(30);
	r = get(bfd, &v);
	ok(r == -EINTR && alarms == 1, "a blocking read is interrupted by a signal (EINTR)");
	close(fd), close(bfd), close(rt), close(bt);
}

int main(void)
{
	check_eventfd();
	check_timerfd();
	printf("done %d\n", n);
	return 0;
}
