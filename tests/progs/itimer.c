// SPDX-License-Identifier: GPL-2.0-only
/* Interval timers, checked from inside the guest: "ok N - ..." lines, then
 * "done N".  The ticks come from the guest's local APIC timer: a CPU-bound
 * loop that makes no system call is interrupted all the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int n;
static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
}

static volatile int ticks;
static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	signal(SIGALRM, on_tick);
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } }, cur;
	setitimer(ITIMER_REAL, &it, NULL);
	double t0 = now();
	volatile unsigned long x = 0;
	while (now() - t0 < 0.3) /* clock_gettime is no trap here: the fast entry or the vDSO-less clock */
		for (int i = 0; i < 100000; i++)
			x += i;
	int in_loop = ticks;
	ok(in_loop >= 20 && in_loop <= 32, "a 10 ms timer ticks 20-32 times in a 0.3 s CPU-bound loop");
	getitimer(ITIMER_REAL, &cur);
	ok(cur.it_interval.tv_usec == 10000 && cur.it_value.tv_sec == 0 && cur.it_value.tv_usec <= 10000,
	   "getitimer: the interval and what is left");
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	ticks = 0;
	t0 = now();
	while (now() - t0 < 0.05)
		;
	ok(ticks == 0, "disarmed: no more ticks");

	struct itimerval bad = { { 0, 1000000 }, { 0, 0 } };
	ok(setitimer(ITIMER_REAL, &bad, NULL) == -1 && errno == EINVAL, "tv_usec of a million: EINVAL");
	ok(setitimer(7, &it, NULL) == -1 && errno == EINVAL, "an unknown timer: EINVAL");

	/* A sleep cut short by the timer's signal, with what was left. */
	struct itimerval once = { { 0, 0 }, { 0, 50000 } };
	setitimer(ITIMER_REAL, &once, NULL);
	struct timespec req = { 2, 0 }, rem = { 0, 0 };
	t0 = now();
	int r = nanosleep(&req, &rem);
	double slept = now() - t0;
	ok(r == -1 && errno == EINTR && ticks == 1, "nanosleep is interrupted by SIGALRM (EINTR)");
	ok(slept > 0.04 && slept < 0.5 && rem.tv_sec == 1, "after ~50 ms, with ~1.95 s left");

	/* pause and sigsuspend wake for it. */
	setitimer(ITIMER_REAL, &once, NULL);
	r = pause();
	ok(r == -1 && errno == EINTR && ticks == 2, "pause() returns after the handler");
	alarm(5);
	ok(alarm(0) == 5, "alarm returns what was left of the previous one");

	/* sigtimedwait takes a blocked timer signal. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	setitimer(ITIMER_REAL, &once, NULL);
	struct timespec wait = { 1, 0 };
	ok(sigtimedwait(&set, NULL, &wait) == SIGALRM && ticks == 2, "sigtimedwait receives a blocked SIGALRM");

	/* ITIMER_PROF (the VM's time is the program's CPU time). */
	signal(SIGPROF, on_tick);
	struct itimerval prof = { { 0, 0 }, { 0, 20000 } };
	setitimer(ITIMER_PROF, &prof, NULL);
	t0 = now();
	while (now() - t0 < 0.1 && ticks == 2)
		;
	ok(ticks == 3, "ITIMER_PROF fires SIGPROF");
	printf("done %d\n", n);
	return 0;
}
