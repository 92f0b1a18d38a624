// SPDX-License-Identifier: GPL-2.0-only
/* Real-time signal queueing and POSIX timers, checked from inside the guest
 * (guest/proc/signal.c, itimer.c): one "ok N - ..." or "not ok N - ..." line
 * per check, then "done N".  Every wait is bounded: a lost signal fails its
 * check (after a second or two), never hangs the run.  Built with Debian's
 * musl and with husk's libc; run natively it must pass too (Linux is the
 * reference: where husk differs on purpose, the check accepts both and says
 * which it saw). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define MS 1000000ull

static long tid(void)
{
	return syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
	struct timespec t = ts_of((uint64_t)ms * MS);
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Sleeps (through handlers) until mono() reaches end. */
static void sleep_until(uint64_t end)
{
	for (uint64_t now; (now = mono()) < end;) {
		struct timespec t = ts_of(end - now);
		nanosleep(&t, 0);
	}
}

/* Polls *flag (1 ms sleeps) until it reaches at least want or ms pass. */
static int wait_count(volatile int *flag, int want, long ms)
{
	uint64_t end = mono() + (uint64_t)ms * MS;
	while (*flag < want && mono() < end)
		sleep_ms(1);
	return *flag;
}

static sigset_t one(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	return s;
}

static void block(int sig)
{
	sigset_t s = one(sig);
	sigprocmask(SIG_BLOCK, &s, 0);
}

static void unblock(int sig)
{
	sigset_t s = one(sig);
	sigprocmask(SIG_UNBLOCK, &s, 0);
}

/* sigtimedwait for set, at most ms: the signal, or -1 (errno). */
static int take(const sigset_t *set, siginfo_t *si, long ms)
{
	struct timespec t = ts_of((uint64_t)ms * MS);
	memset(si, 0, sizeof *si);
	return sigtimedwait(set, si, &t);
}

static int handle(int sig, void (*fn)(int, siginfo_t *, void *), const sigset_t *mask)
{
	struct sigaction sa = { .sa_sigaction = fn, .sa_flags = SA_SIGINFO };
	if (mask)
		sa.sa_mask = *mask;
	return sigaction(sig, &sa, 0);
}

static int arm(timer_t t, int flags, uint64_t first_ns, uint64_t every_ns)
{
	struct itimerspec it = { ts_of(every_ns), ts_of(first_ns) };
	return timer_settime(t, flags, &it, 0);
}

static int new_timer(clockid_t c, int notify, int sig, int value, timer_t *t)
{
	struct sigevent ev = { .sigev_notify = notify, .sigev_signo = sig, .sigev_value.sival_int = value };
	return timer_create(c, &ev, t);
}

/* --- what the handlers saw --------------------------------------------------- */

static volatile int order[8], orders;
static void on_order(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	if (orders < 8)
		order[orders++] = sig;
}

static volatile int ticks, tick_code, tick_value, tick_timerid, tick_elsewhere;
static volatile long tick_tid;
static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	ticks++;
	tick_code = si->si_code, tick_value = si->si_value.sival_int, tick_timerid = si->si_timerid;
	if (tick_tid && tid() != tick_tid)
		tick_elsewhere++;
}

static volatile int thread_calls, thread_value;
static volatile long thread_tid;
static void on_thread(union sigval v)
{
	thread_value = v.sival_int;
	thread_tid = tid();
	thread_calls++;
}

static volatile int worker_stop;
static void *worker(void *arg)
{
	(void)arg;
	tick_tid = tid();
	while (!worker_stop)
		sleep_ms(1);
	return 0;
}

int main(void)
{
	const int RT = SIGRTMIN;
	siginfo_t si;
	long main_tid = tid();

	/* sigqueue: real-time signals queue, each with its value, oldest first. */
	sigset_t rt = one(RT);
	block(RT);
	int sent = 0;
	for (int i = 0; i < 5; i++)
		sent += sigqueue(getpid(), RT, (union sigval){ .sival_int = 100 + i }) == 0;
	int good = 0;
	for (int i = 0; i < 5; i++)
		good += take(&rt, &si, 1000) == RT && si.si_code == SI_QUEUE && si.si_value.sival_int == 100 + i &&
			si.si_pid == getpid();
	ok(sent == 5 && good == 5, "5 sigqueue'd SIGRTMIN while blocked: sigtimedwait takes all 5 in order, "
				   "their values, SI_QUEUE (%d sent, %d right)", sent, good);
	ok(take(&rt, &si, 0) == -1 && errno == EAGAIN, "then none is left (a poll: EAGAIN)");

	/* A standard signal is pending once: the first one's info. */
	sigset_t usr1 = one(SIGUSR1);
	block(SIGUSR1);
	sent = 0;
	for (int i = 0; i < 3; i++)
		sent += sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 7 + i }) == 0;
	int first = take(&usr1, &si, 1000) == SIGUSR1 && si.si_value.sival_int == 7;
	int second = take(&usr1, &si, 0);
	ok(sent == 3 && first && second == -1 && errno == EAGAIN,
	   "3 SIGUSR1 while blocked: one is pending (the first's value), then none");

	/* Lowest number first: SIGUSR1, SIGRTMIN+1, SIGRTMIN+2, whatever the
	 * order they were sent in. */
	sigset_t three = one(SIGUSR1);
	sigaddset(&three, RT + 1);
	sigaddset(&three, RT + 2);
	sigprocmask(SIG_BLOCK, &three, 0);
	sigqueue(getpid(), RT + 2, (union sigval){ .sival_int = 2 });
	sigqueue(getpid(), RT + 1, (union sigval){ .sival_int = 1 });
	kill(getpid(), SIGUSR1);
	int a = take(&three, &si, 1000), b = take(&three, &si, 1000), c = take(&three, &si, 1000);
	ok(a == SIGUSR1 && b == RT + 1 && c == RT + 2,
	   "sigtimedwait takes SIGUSR1, then SIGRTMIN+1, then SIGRTMIN+2 (%d %d %d)", a, b, c);
	/* To handlers: each handler blocks the others, so they run one after
	 * another in delivery order (unmasked, Linux nests the frames). */
	handle(SIGUSR1, on_order, &three);
	handle(RT + 1, on_order, &three);
	handle(RT + 2, on_order, &three);
	sigqueue(getpid(), RT + 2, (union sigval){ .sival_int = 2 });
	sigqueue(getpid(), RT + 1, (union sigval){ .sival_int = 1 });
	kill(getpid(), SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &three, 0);
	wait_count(&orders, 3, 1000);
	ok(orders == 3 && order[0] == SIGUSR1 && order[1] == RT + 1 && order[2] == RT + 2,
	   "unblocked, the handlers run for SIGUSR1, SIGRTMIN+1, SIGRTMIN+2 in that order (%d: %d %d %d)", orders,
	   order[0], order[1], order[2]);

	/* A periodic SIGEV_SIGNAL timer, to a handler. */
	const int TICK = RT + 5;
	handle(TICK, on_tick, 0);
	timer_t t;
	ok(new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, TICK, 0x5eed, &t) == 0, "timer_create(CLOCK_MONOTONIC, SIGEV_SIGNAL)");
	uint64_t t0 = mono();
	arm(t, 0, 10 * MS, 10 * MS);
	sleep_until(t0 + 55 * MS);
	struct itimerspec cur = { 0 };
	timer_gettime(t, &cur);
	sleep_until(t0 + 105 * MS);
	arm(t, 0, 0, 0);
	int counted = ticks;
	ok(counted >= 8 && counted <= 12, "a 10 ms timer ticks 8-12 times in 105 ms (%d)", counted);
	ok(tick_code == SI_TIMER && tick_value == 0x5eed && tick_timerid == (int)(intptr_t)t,
	   "its siginfo: SI_TIMER (%d), the sigev_value (%#x), the timer's id (%d)", tick_code, tick_value,
	   tick_timerid);
	uint64_t left = (uint64_t)cur.it_value.tv_sec * 1000000000u + (uint64_t)cur.it_value.tv_nsec;
	ok(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_nsec == 10 * MS && left > 0 && left <= 10 * MS,
	   "timer_gettime: the interval, and what is left (%llu ns) within it", (unsigned long long)left);
	sleep_ms(30);
	ok(ticks == counted, "disarmed (a zero it_value): no more ticks");
	ok(timer_gettime(t, &cur) == 0 && !cur.it_value.tv_sec && !cur.it_value.tv_nsec, "timer_gettime: disarmed");

	/* Overruns: blocked for 55 ms, a 10 ms timer's signal is pending once. */
	block(TICK);
	sigset_t tick = one(TICK);
	arm(t, 0, 10 * MS, 10 * MS);
	sleep_ms(55);
	int got = take(&tick, &si, 1000), overrun = si.si_overrun;
	int later = timer_getoverrun(t);
	arm(t, 0, 0, 0);
	ok(got == TICK && si.si_code == SI_TIMER && overrun >= 3 && overrun <= 6,
	   "blocked 55 ms: one pending signal, si_overrun 3-6 (%d)", overrun);
	ok(later == overrun, "timer_getoverrun agrees with the si_overrun delivered (%d, %d)", later, overrun);
	ok(take(&tick, &si, 0) == -1, "and no second signal was queued");
	unblock(TICK);

	/* A deleted timer ticks no more. */
	ticks = 0;
	arm(t, 0, 10 * MS, 10 * MS);
	wait_count(&ticks, 2, 1000);
	int del = timer_delete(t);
	sleep_ms(5);
	counted = ticks;
	sleep_ms(40);
	ok(del == 0 && counted >= 2 && ticks == counted, "timer_delete stops a periodic timer (%d ticks)", counted);
	/* musl's timer_delete returns the system call's -errno: the call itself. */
	ok(syscall(SYS_timer_delete, (long)(intptr_t)t) == -1 && errno == EINVAL, "timer_delete of a deleted timer: EINVAL");

	/* SIGEV_THREAD: the C library's helper thread calls the function. */
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_thread,
			       .sigev_value.sival_int = 42 };
	timer_t th;
	int made = timer_create(CLOCK_MONOTONIC, &ev, &th);
	if (!made)
		arm(th, 0, 20 * MS, 0);
	wait_count(&thread_calls, 1, 2000);
	ok(made == 0 && thread_calls == 1 && thread_value == 42 && thread_tid && thread_tid != main_tid,
	   "SIGEV_THREAD: the function runs once, with the value, on another thread (%d calls)", thread_calls);
	if (!made)
		timer_delete(th);

	/* SIGEV_THREAD_ID (Linux's, through the system call): the signal goes
	 * to that thread, though main does not block it either. */
	pthread_t w;
	pthread_create(&w, 0, worker, 0);
	uint64_t end = mono() + 1000 * MS;
	while (!tick_tid && mono() < end)
		sleep_ms(1);
	const int AIMED = RT + 3;
	handle(AIMED, on_tick, 0);
	ticks = 0, tick_elsewhere = 0;
	struct sigevent aim = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = AIMED, .sigev_value.sival_int = 9 };
	aim.sigev_notify_thread_id = (pid_t)tick_tid;
	int kid = -1;
	made = (int)syscall(SYS_timer_create, CLOCK_MONOTONIC, &aim, &kid);
	struct itimerspec every = { ts_of(10 * MS), ts_of(10 * MS) };
	if (!made)
		syscall(SYS_timer_settime, kid, 0, &every, 0);
	wait_count(&ticks, 3, 1000);
	ok(made == 0 && ticks >= 3 && tick_elsewhere == 0 && tick_code == SI_TIMER && tick_value == 9,
	   "SIGEV_THREAD_ID: the handler runs on that thread (%d ticks, %d elsewhere)", ticks, tick_elsewhere);
	del = made ? -1 : (int)syscall(SYS_timer_delete, kid);
	sleep_ms(5);
	counted = ticks;
	sleep_ms(40);
	ok(del == 0 && ticks == counted, "timer_delete: it ticks no more (%d)", ticks);
	worker_stop = 1;
	pthread_join(w, 0);
	tick_tid = 0;

	/* TIMER_ABSTIME on CLOCK_REALTIME. */
	const int ABS = RT + 6;
	sigset_t absset = one(ABS);
	block(ABS);
	timer_t rtt;
	made = new_timer(CLOCK_REALTIME, SIGEV_SIGNAL, ABS, 1, &rtt);
	t0 = mono();
	arm(rtt, TIMER_ABSTIME, now_ns(CLOCK_REALTIME) + 50 * MS, 0);
	got = take(&absset, &si, 2000);
	uint64_t waited = (mono() - t0) / 1000;
	ok(made == 0 && got == ABS && waited >= 45000 && waited < 1000000,
	   "TIMER_ABSTIME on CLOCK_REALTIME, 50 ms ahead: fires after %llu us", (unsigned long long)waited);
	t0 = mono();
	arm(rtt, TIMER_ABSTIME, now_ns(CLOCK_REALTIME) - 1000 * MS, 0);
	got = take(&absset, &si, 2000);
	waited = (mono() - t0) / 1000;
	ok(got == ABS && waited < 20000, "an absolute time in the past: fires at once (%llu us)",
	   (unsigned long long)waited);
	timer_delete(rtt);

	/* SIGEV_NONE: nothing is sent; timer_gettime counts down to 0. */
	const int NONE = RT + 8;
	block(NONE);
	sigset_t none = one(NONE);
	timer_t nt;
	made = new_timer(CLOCK_BOOTTIME, SIGEV_NONE, NONE, 0, &nt);
	arm(nt, 0, 20 * MS, 0);
	timer_gettime(nt, &cur);
	int armed = !cur.it_value.tv_sec && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= (long)(20 * MS);
	sleep_ms(40);
	timer_gettime(nt, &cur);
	ok(made == 0 && armed && !cur.it_value.tv_sec && !cur.it_value.tv_nsec && take(&none, &si, 0) == -1,
	   "SIGEV_NONE on CLOCK_BOOTTIME: counts down to 0 and sends nothing");
	timer_delete(nt);

	/* A thread's CPU clock: Linux has timers on it, husk says EINVAL. */
	timer_t ct;
	errno = 0;
	made = new_timer(CLOCK_THREAD_CPUTIME_ID, SIGEV_NONE, 0, 0, &ct);
	ok(made == 0 || errno == EINVAL, "timer_create(CLOCK_THREAD_CPUTIME_ID): %s",
	   made == 0 ? "accepted (Linux)" : errno == EINVAL ? "EINVAL (husk)" : strerror(errno));
	if (!made)
		timer_delete(ct);

	/* A periodic timer whose signal is ignored goes on: once there is a
	 * handler, it ticks. */
	const int IGN = RT + 7;
	signal(IGN, SIG_IGN);
	timer_t it;
	new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, IGN, 0, &it);
	arm(it, 0, 10 * MS, 10 * MS);
	sleep_ms(35);
	ticks = 0;
	handle(IGN, on_tick, 0);
	wait_count(&ticks, 2, 1000);
	timer_delete(it);
	ok(ticks >= 2, "a periodic timer's ignored signal: with a handler installed, it ticks again (%d)", ticks);

	/* The queue's limit: sigqueue fails with EAGAIN (Linux: RLIMIT_SIGPENDING,
	 * husk: 1024 in all); a timer made before still gets its signal. */
	const int LATE = RT + 4;
	block(LATE);
	sigset_t late = one(LATE);
	timer_t lt;
	made = new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, LATE, 3, &lt);
	int queued = 0, r, err = 0;
	while ((r = sigqueue(getpid(), RT, (union sigval){ .sival_int = queued })) == 0 && queued < 1000000)
		queued++;
	err = r ? errno : 0;
	ok(r == -1 && err == EAGAIN && queued >= 100, "sigqueue until it fails: EAGAIN (%s) after %d", strerror(err),
	   queued);
	arm(lt, 0, 10 * MS, 0);
	got = take(&late, &si, 1000);
	ok(made == 0 && got == LATE && si.si_code == SI_TIMER && si.si_value.sival_int == 3,
	   "with the queue full, a timer's signal still comes (%d)", got);
	timer_delete(lt);
	int drained = 0;
	for (int v; take(&rt, &si, 0) == RT && (v = si.si_value.sival_int) == drained;)
		drained++;
	ok(drained == queued, "then sigtimedwait takes them all back, in order (%d of %d)", drained, queued);
	ok(sigqueue(getpid(), RT, (union sigval){ .sival_int = 1 }) == 0 && take(&rt, &si, 0) == RT,
	   "and sigqueue works again");

	printf("done %d\n", n);
	return 0;
}
