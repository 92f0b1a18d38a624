// SPDX-License-Identifier: GPL-2.0-only
/* Threads as Linux runs them, checked from inside the guest (guest/proc/
 * sched.c, thread.c, futex.c, signal.c): with no argument, one "ok N - ..."
 * or "not ok N - ..." line per check, then "done N".  Every wait is bounded:
 * a lost wake-up fails its check (after a few seconds at most), never hangs
 * the run.  Built with Debian's musl (the `syscall` instruction) and with
 * husk's libc (the fast entry).  Other modes, one per argument, each ending
 * the run its own way:
 *   exit-from-thread   a thread calls exit(3) while others spin and main
 *                      waits in pthread_join: the run ends with status 3
 *   main-pthread-exit  main calls pthread_exit; another thread prints after
 *                      it and returns: status 0
 *   raw-exits          main ends with SYS_exit(7), then the last thread with
 *                      SYS_exit(9): status 9 (the last thread's, as Linux
 *                      6.x reports it: synchronize_group_exit)
 *   churn              4000 threads one after another (2000 joined, 2000
 *                      detached): what an ended thread held is given back
 *   detached-big       50 detached threads one after another, each with a
 *                      4 MiB stack of its own that musl unmaps as it ends
 *                      (munmap of the stack it runs on, then SYS_exit)
 *   bomb               threads that wait for ever until pthread_create fails:
 *                      "bomb: N threads, then ERROR"
 *   stack-overflow     a thread with a 64 KiB stack recurses without end:
 *                      it prints its stack's bounds, then must die with
 *                      SIGSEGV at the guard page below them (status 139) */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

/* Linux's, spelled out: neither musl-gcc sees the kernel's headers. */
#define FUTEX_WAIT_PRIVATE        128
#define FUTEX_WAKE_PRIVATE        129
#define FUTEX_REQUEUE_PRIVATE     131
#define FUTEX_CMP_REQUEUE_PRIVATE 132
#define FUTEX_WAKE_OP_PRIVATE     133
#define FUTEX_WAIT_BITSET_PRIVATE 137
#define FUTEX_WAKE_BITSET_PRIVATE 138
#define FUTEX_CLOCK_REALTIME      256
#define FUTEX_OP(op, oparg, cmp, cmparg) \
	((uint32_t)(op) << 28 | (uint32_t)(cmp) << 24 | ((uint32_t)(oparg) & 0xfff) << 12 | ((uint32_t)(cmparg) & 0xfff))
#define FUTEX_OP_SET    0
#define FUTEX_OP_ADD    1
#define FUTEX_OP_CMP_EQ 0
#define ARCH_GET_FS     0x1003


static long tid(void)
{
	return syscall(SYS_gettid);
}

/* An absolute time ms from now on clock c (for the timed waits). */
static struct timespec after_ms(clockid_t c, long ms)
{
	return ts_of(now_ns(c) + (uint64_t)ms * 1000000u);
}

static void sleep_ms(long ms)
{
	struct timespec t = ts_of((uint64_t)ms * 1000000u);
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Polls *flag (1 ms sleeps) until it is nonzero or ms pass: its value. */
static int wait_flag(volatile int *flag, long ms)
{
	uint64_t end = mono() + (uint64_t)ms * 1000000u;
	while (!*flag && mono() < end)
		sleep_ms(1);
	return *flag;
}

static long futex(uint32_t *a, int op, uint32_t val, const void *ts_or_n2, uint32_t *a2, uint32_t val3)
{
	return syscall(SYS_futex, a, op, val, ts_or_n2, a2, val3);
}

/* pthread_create, counted (threads.t compares with husk --stats) */
static int threads_made;
static int create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(t, a, fn, arg);
	threads_made += !e;
	return e;
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int e = create(&t, NULL, fn, arg);
	if (e) {
		printf("Bail out! pthread_create: %s\n", strerror(e));
		exit(1);
	}
	return t;
}

/* --- signals: one handler records where it ran ------------------------- */
static volatile int got_sig, handler_hits;
static volatile long handler_tid;
static volatile uintptr_t handler_sp;

static void on_signal(int sig)
{
	char here;
	handler_sp = (uintptr_t)&here;
	handler_tid = tid();
	got_sig = sig;
	handler_hits++;
}

static void reset_handler_record(void)
{
	got_sig = 0, handler_hits = 0, handler_tid = 0, handler_sp = 0;
}

/* No SA_RESTART: a wait the handler interrupts ends with EINTR. */
static void install(int sig, int flags)
{
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static void mask(int how, int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(how, &s, NULL);
}

/* --- many threads ------------------------------------------------------- */
#define AT_ONCE 64
static pthread_barrier_t at_once_barrier;
static volatile long at_once_tid[AT_ONCE], at_once_pid[AT_ONCE];

static void *at_once(void *arg)
{
	int i = (int)(intptr_t)arg;
	at_once_tid[i] = tid();
	at_once_pid[i] = getpid();
	pthread_barrier_wait(&at_once_barrier); /* all alive at the same time */
	return (void *)(intptr_t)(i * 3);
}

static void *twice(void *arg)
{
	return (void *)((intptr_t)arg * 2);
}

static void check_many(void)
{
	pthread_t t[AT_ONCE];
	int created = 0, joined = 0, distinct = 1, same_pid = 1;
	pthread_barrier_init(&at_once_barrier, NULL, AT_ONCE + 1);
	for (int i = 0; i < AT_ONCE; i++)
		created += create(&t[i], NULL, at_once, (void *)(intptr_t)i) == 0;
	if (created == AT_ONCE)
		pthread_barrier_wait(&at_once_barrier);
	for (int i = 0; i < created; i++) {
		void *r;
		joined += pthread_join(t[i], &r) == 0 && (intptr_t)r == i * 3;
	}
	pthread_barrier_destroy(&at_once_barrier);
	ok(created == AT_ONCE && joined == AT_ONCE, "%d threads alive at once (a barrier), all joined with their values",
	   AT_ONCE);
	long me = tid();
	for (int i = 0; i < AT_ONCE; i++) {
		same_pid &= at_once_pid[i] == getpid();
		distinct &= at_once_tid[i] > 0 && at_once_tid[i] != me && at_once_tid[i] != getpid();
		for (int j = 0; j < i; j++)
			distinct &= at_once_tid[i] != at_once_tid[j];
	}
	ok(distinct && same_pid && me == getpid(),
	   "gettid: distinct in each thread, the main thread's is the pid; getpid: the same in every thread");

	int fails = 0;
	long sum = 0;
	uint64_t t0 = mono();
	for (int i = 0; i < 2000; i++) {
		pthread_t one;
		void *r = 0;
		if (create(&one, NULL, twice, (void *)(intptr_t)i) || pthread_join(one, &r)) {
			fails++;
			break;
		}
		sum += (intptr_t)r;
	}
	ok(!fails && sum == 2 * (1999L * 2000 / 2), "2000 threads created and joined one after another (%.0f ms)",
	   (mono() - t0) / 1e6);
}

/* --- locks -------------------------------------------------------------- */
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static volatile int contended;
static long lock_rounds;
#define LOCK_THREADS 8

/* Most of the time inside the lock: a preemption there (one CPU) makes the
 * others find it taken and wait in the kernel (counted: trylock failed). */
static void *count_up(void *arg)
{
	long rounds = (long)(intptr_t)arg;
	for (long i = 0; i < rounds; i++) {
		if (pthread_mutex_trylock(&counter_lock)) {
			__atomic_fetch_add(&contended, 1, __ATOMIC_RELAXED);
			pthread_mutex_lock(&counter_lock);
		}
		long v = counter; /* a read-modify-write a preemption can split */
		for (volatile int k = 0; k < 200; k++)
			;
		counter = v + 1;
		pthread_mutex_unlock(&counter_lock);
	}
	return 0;
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_a, rw_b;
static volatile int writers_done, rw_torn, rw_reads;

static void *rw_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_rwlock_wrlock(&rw);
		rw_a++;
		for (volatile int k = 0; k < 10; k++)
			;
		rw_b++;
		pthread_rwlock_unlock(&rw);
	}
	return 0;
}

static void *rw_reader(void *arg)
{
	(void)arg;
	for (long i = 0; !writers_done && i < 100000000; i++) {
		pthread_rwlock_rdlock(&rw);
		if (rw_a != rw_b)
			rw_torn++;
		rw_reads++;
		pthread_rwlock_unlock(&rw);
	}
	return 0;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static volatile int once_runs, once_seen_bad;

static void once_init(void)
{
	once_runs++;
	sleep_ms(20); /* the others wait for it meanwhile */
}

static void *once_user(void *arg)
{
	(void)arg;
	pthread_once(&once, once_init);
	if (once_runs != 1)
		once_seen_bad = 1;
	return 0;
}

static void *robust_owner(void *arg)
{
	pthread_mutex_lock(arg);
	return 0; /* ends holding it */
}

static void check_locks(void)
{
	pthread_t t[LOCK_THREADS];
	/* each thread busy for about 25 ms alone: longer than a 10 ms slice.
	 * The calibration can be off on a busy host (one run took 64 ms for
	 * all 8, no slice ended inside the lock): then twice the rounds, up to
	 * four runs, each exact. */
	uint64_t t0 = mono();
	count_up((void *)2000);
	lock_rounds = 2000 * 25000000L / (long)(mono() - t0 + 1);
	int exact = 1, runs = 0;
	do {
		counter = contended = 0;
		t0 = mono();
		for (int i = 0; i < LOCK_THREADS; i++)
			t[i] = start(count_up, (void *)(intptr_t)lock_rounds);
		for (int i = 0; i < LOCK_THREADS; i++)
			pthread_join(t[i], NULL);
		exact &= counter == LOCK_THREADS * lock_rounds;
		lock_rounds *= 2;
	} while (!contended && ++runs < 4);
	ok(exact && contended > 0,
	   "a mutex-protected counter from %d threads is exact: %ld (%d times contended, %.0f ms, run %d)", LOCK_THREADS,
	   counter, contended, (mono() - t0) / 1e6, runs + 1);

	pthread_t w[4], r[4];
	for (int i = 0; i < 4; i++)
		r[i] = start(rw_reader, 0);
	for (int i = 0; i < 4; i++)
		w[i] = start(rw_writer, 0);
	for (int i = 0; i < 4; i++)
		pthread_join(w[i], NULL);
	writers_done = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(r[i], NULL);
	ok(rw_a == 80000 && rw_b == 80000 && !rw_torn && rw_reads > 0,
	   "rwlock: 4 writers x 20000 exact, 4 readers never see a half-done write (%d reads)", rw_reads);

	for (int i = 0; i < 8; i++)
		t[i] = start(once_user, 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	ok(once_runs == 1 && !once_seen_bad, "pthread_once from 8 threads: one run, every caller returns after it");

	pthread_mutex_t m;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	pthread_join(start(robust_owner, &m), NULL);
	struct timespec dl = after_ms(CLOCK_REALTIME, 2000);
	int e = pthread_mutex_timedlock(&m, &dl), c = -1;
	if (e == EOWNERDEAD) {
		c = pthread_mutex_consistent(&m);
		pthread_mutex_unlock(&m);
	}
	ok(e == EOWNERDEAD && c == 0, "a robust mutex its owner ended holding: EOWNERDEAD (got %s)", strerror(e));
}

/* --- condition variables and semaphores -------------------------------- */
static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static int turn, pp_count[2], pp_timeout;
#define PINGS 10000

static void *ping_pong(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct timespec dl = after_ms(CLOCK_REALTIME, 20000);
	pthread_mutex_lock(&pp_lock);
	for (int i = 0; i < PINGS && !pp_timeout; i++) {
		while (turn != me && !pp_timeout)
			if (pthread_cond_timedwait(&pp_cond, &pp_lock, &dl) == ETIMEDOUT)
				pp_timeout = 1;
		if (pp_timeout)
			break;
		turn = !me;
		pp_count[me]++;
		pthread_cond_signal(&pp_cond);
	}
	pthread_cond_broadcast(&pp_cond);
	pthread_mutex_unlock(&pp_lock);
	return 0;
}

#define WAITERS 50
static pthread_mutex_t bc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bc_cond = PTHREAD_COND_INITIALIZER, bc_ready_cond = PTHREAD_COND_INITIALIZER;
static int bc_ready, bc_go, bc_woke, bc_timeouts;

static void *bc_waiter(void *arg)
{
	(void)arg;
	struct timespec dl = after_ms(CLOCK_REALTIME, 5000);
	pthread_mutex_lock(&bc_lock);
	bc_ready++;
	pthread_cond_signal(&bc_ready_cond);
	while (!bc_go)
		if (pthread_cond_timedwait(&bc_cond, &bc_lock, &dl) == ETIMEDOUT) {
			bc_timeouts++;
			break;
		}
	bc_woke += bc_go;
	pthread_mutex_unlock(&bc_lock);
	return 0;
}

static sem_t sem;
static void *post_later(void *arg)
{
	sleep_ms((long)(intptr_t)arg);
	sem_post(&sem);
	return 0;
}

static void check_cond(void)
{
	uint64_t t0 = mono();
	pthread_t a = start(ping_pong, (void *)0), b = start(ping_pong, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	ok(!pp_timeout && pp_count[0] == PINGS && pp_count[1] == PINGS,
	   "condvar ping-pong between two threads, %d times each way (%.0f ms)", PINGS, (mono() - t0) / 1e6);

	pthread_t w[WAITERS];
	for (int i = 0; i < WAITERS; i++)
		w[i] = start(bc_waiter, 0);
	struct timespec dl = after_ms(CLOCK_REALTIME, 5000);
	pthread_mutex_lock(&bc_lock);
	while (bc_ready < WAITERS)
		if (pthread_cond_timedwait(&bc_ready_cond, &bc_lock, &dl) == ETIMEDOUT)
			break;
	int all_waiting = bc_ready == WAITERS; /* each is in pthread_cond_wait: it let the lock go there */
	bc_go = 1;
	t0 = mono();
	pthread_cond_broadcast(&bc_cond);
	pthread_mutex_unlock(&bc_lock);
	for (int i = 0; i < WAITERS; i++)
		pthread_join(w[i], NULL);
	double ms = (mono() - t0) / 1e6;
	ok(all_waiting && bc_woke == WAITERS && !bc_timeouts && ms < 1000,
	   "pthread_cond_broadcast wakes all %d waiters (woke %d, %d timed out, %.1f ms)", WAITERS, bc_woke, bc_timeouts,
	   ms);

	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_lock(&m);
	t0 = mono();
	dl = after_ms(CLOCK_REALTIME, 100);
	int e = pthread_cond_timedwait(&c, &m, &dl);
	ms = (mono() - t0) / 1e6;
	ok(e == ETIMEDOUT && ms >= 99.9 && ms < 150,
	   "pthread_cond_timedwait (CLOCK_REALTIME) of 100 ms: ETIMEDOUT after 100-150 ms (%.1f ms)", ms);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_t cm;
	pthread_cond_init(&cm, &ca);
	t0 = mono();
	dl = after_ms(CLOCK_MONOTONIC, 50);
	e = pthread_cond_timedwait(&cm, &m, &dl);
	ms = (mono() - t0) / 1e6;
	ok(e == ETIMEDOUT && ms >= 49.9 && ms < 100,
	   "pthread_cond_timedwait (CLOCK_MONOTONIC) of 50 ms: ETIMEDOUT after 50-100 ms (%.1f ms)", ms);
	pthread_mutex_unlock(&m);

	sem_init(&sem, 0, 0);
	t0 = mono();
	dl = after_ms(CLOCK_REALTIME, 50);
	int r = sem_timedwait(&sem, &dl);
	e = errno;
	ms = (mono() - t0) / 1e6;
	ok(r == -1 && e == ETIMEDOUT && ms >= 49.9 && ms < 100,
	   "sem_timedwait of 50 ms with no post: ETIMEDOUT after 50-100 ms (%.1f ms)", ms);
	pthread_t p = start(post_later, (void *)20);
	t0 = mono();
	dl = after_ms(CLOCK_REALTIME, 2000);
	r = sem_timedwait(&sem, &dl);
	ms = (mono() - t0) / 1e6;
	pthread_join(p, NULL);
	ok(r == 0 && ms >= 15 && ms < 500, "sem_timedwait returns 0 when another thread posts after 20 ms (%.1f ms)", ms);
}

/* --- raw futex operations ------------------------------------------------ */
struct waiter {
	uint32_t *word;
	uint32_t bitset; /* 0: FUTEX_WAIT, else FUTEX_WAIT_BITSET with it */
	volatile int started, done;
	long ret;
	int err;
};

static void *futex_waiter(void *arg)
{
	struct waiter *w = arg;
	w->started = 1;
	if (w->bitset) {
		struct timespec dl = after_ms(CLOCK_MONOTONIC, 3000);
		w->ret = futex(w->word, FUTEX_WAIT_BITSET_PRIVATE, 0, &dl, 0, w->bitset);
	} else {
		struct timespec rel = { 3, 0 };
		w->ret = futex(w->word, FUTEX_WAIT_PRIVATE, 0, &rel, 0, 0);
	}
	w->err = w->ret ? errno : 0;
	w->done = 1;
	return 0;
}

/* Starts k waiters on word (value 0); returns once they are all blocked
 * (as good as: each started, then 50 ms for it to reach the wait). */
static void start_waiters(pthread_t *t, struct waiter *w, int k, uint32_t *word, uint32_t bitset)
{
	for (int i = 0; i < k; i++) {
		w[i] = (struct waiter){ .word = word, .bitset = bitset };
		t[i] = start(futex_waiter, &w[i]);
	}
	for (int i = 0; i < k; i++)
		wait_flag(&w[i].started, 2000);
	sleep_ms(50);
}

static int count_done(struct waiter *w, int k)
{
	int d = 0;
	for (int i = 0; i < k; i++)
		d += w[i].done;
	return d;
}

/* Joins; how many returned 0 (woken, not timed out). */
static int join_waiters(pthread_t *t, struct waiter *w, int k)
{
	int woken = 0;
	for (int i = 0; i < k; i++) {
		pthread_join(t[i], NULL);
		woken += w[i].ret == 0;
	}
	return woken;
}

static void check_futex(void)
{
	static uint32_t a, b;
	pthread_t t[5];
	struct waiter w[5];

	errno = 0;
	long r = futex(&a, FUTEX_WAIT_PRIVATE, 1, NULL, 0, 0);
	ok(r == -1 && errno == EAGAIN, "FUTEX_WAIT on a word that does not hold the value: EAGAIN at once");
	struct timespec rel = { 0, 30000000 };
	uint64_t t0 = mono();
	r = futex(&a, FUTEX_WAIT_PRIVATE, 0, &rel, 0, 0);
	double ms = (mono() - t0) / 1e6;
	ok(r == -1 && errno == ETIMEDOUT && ms >= 29.9 && ms < 80,
	   "FUTEX_WAIT with a 30 ms timeout: ETIMEDOUT after 30-80 ms (%.1f ms)", ms);
	struct timespec abs = after_ms(CLOCK_MONOTONIC, 30);
	t0 = mono();
	r = futex(&a, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, 0, ~0u);
	ms = (mono() - t0) / 1e6;
	ok(r == -1 && errno == ETIMEDOUT && ms >= 29.9 && ms < 80,
	   "FUTEX_WAIT_BITSET, absolute CLOCK_MONOTONIC deadline 30 ms ahead: ETIMEDOUT after 30-80 ms (%.1f ms)", ms);
	abs = after_ms(CLOCK_REALTIME, 30);
	t0 = mono();
	r = futex(&a, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &abs, 0, ~0u);
	ms = (mono() - t0) / 1e6;
	ok(r == -1 && errno == ETIMEDOUT && ms >= 29.9 && ms < 80,
	   "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 30 ms ahead: ETIMEDOUT after 30-80 ms (%.1f ms)", ms);

	/* CMP_REQUEUE: a wrong expected value, then 1 woken and 4 moved to b */
	a = b = 0;
	start_waiters(t, w, 5, &a, 0);
	errno = 0;
	long bad = futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)10, &b, 1);
	int bad_errno = errno;
	long moved = futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)10, &b, 0);
	sleep_ms(30);
	int done_after_requeue = count_done(w, 5);
	long on_a = futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, 0, 0);
	long on_b = futex(&b, FUTEX_WAKE_PRIVATE, 10, NULL, 0, 0);
	int woken = join_waiters(t, w, 5);
	ok(bad == -1 && bad_errno == EAGAIN && moved == 5 && done_after_requeue == 1 && on_a == 0 && on_b == 4 &&
		   woken == 5,
	   "FUTEX_CMP_REQUEUE: EAGAIN on a changed word; else wakes 1, moves 4 (answers 5: %ld), they wake on the "
	   "second word (%ld+%ld)",
	   moved, on_a, on_b);

	/* REQUEUE: none woken, all 3 moved */
	start_waiters(t, w, 3, &a, 0);
	moved = futex(&a, FUTEX_REQUEUE_PRIVATE, 0, (void *)10, &b, 0);
	sleep_ms(30);
	done_after_requeue = count_done(w, 3);
	on_a = futex(&a, FUTEX_WAKE_PRIVATE, 10, NULL, 0, 0);
	on_b = futex(&b, FUTEX_WAKE_PRIVATE, 10, NULL, 0, 0);
	woken = join_waiters(t, w, 3);
	ok(moved == 3 && done_after_requeue == 0 && on_a == 0 && on_b == 3 && woken == 3,
	   "FUTEX_REQUEUE: 3 moved, none woken, FUTEX_WAKE on the second word wakes them");

	/* WAKE_OP: one waiter on a, one on b; *b set to 1, old value 0 == 0: both */
	b = 0;
	start_waiters(t, w, 1, &a, 0);
	start_waiters(t + 1, w + 1, 1, &b, 0);
	long op = futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &b, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
	long b_after = b;
	long op2 = futex(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, &b, FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0));
	woken = join_waiters(t, w, 2);
	ok(op == 2 && b_after == 1 && op2 == 0 && b == 6 && woken == 2,
	   "FUTEX_WAKE_OP: the op applied to the second word, its waiters woken only when the comparison holds");

	/* BITSET: a waiter with bitset 1 ignores a wake for bitset 2 */
	start_waiters(t, w, 1, &a, 1);
	long other = futex(&a, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, 0, 2);
	long mine = futex(&a, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, 0, 1);
	woken = join_waiters(t, w, 1);
	ok(other == 0 && mine == 1 && woken == 1, "FUTEX_WAKE_BITSET wakes only the waiters whose bitset it meets");
}

/* --- per-thread state: TLS, FS base, FPU and SSE ------------------------ */
static __thread volatile int tls_val = 42;
static __thread char tls_buf[256];
struct tls_result {
	int idx, initial, bad;
	uintptr_t addr, fs, self;
};

static void *tls_user(void *arg)
{
	struct tls_result *r = arg;
	int want = r->idx + 1000;
	r->initial = tls_val;
	r->addr = (uintptr_t)&tls_val;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &r->fs);
	r->self = (uintptr_t)pthread_self();
	tls_val = want;
	memset(tls_buf, want & 0xff, sizeof tls_buf);
	uint64_t end = mono() + 60000000u; /* 60 ms: preempted several times on one CPU */
	while (mono() < end)
		for (int i = 0; i < 10000; i++)
			if (tls_val != want || tls_buf[i & 255] != (char)(want & 0xff))
				r->bad++;
	return 0;
}

static void check_tls(void)
{
	static struct tls_result res[8];
	pthread_t t[8];
	tls_val = 7;
	for (int i = 0; i < 8; i++) {
		res[i].idx = i;
		t[i] = start(tls_user, &res[i]);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	int fresh = 1, kept = 1, apart = 1, fs = 1;
	for (int i = 0; i < 8; i++) {
		fresh &= res[i].initial == 42;
		kept &= res[i].bad == 0;
		fs &= res[i].fs == res[i].self && res[i].fs != 0;
		apart &= res[i].addr != (uintptr_t)&tls_val;
		for (int j = 0; j < i; j++)
			apart &= res[i].addr != res[j].addr && res[i].fs != res[j].fs;
	}
	ok(fresh && kept && apart && tls_val == 7,
	   "__thread variables: each thread starts from the initial value, keeps its own across preemption, main's "
	   "untouched");
	uintptr_t my_fs = 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &my_fs);
	ok(fs && my_fs == (uintptr_t)pthread_self(), "each thread's FS base (arch_prctl ARCH_GET_FS) is its pthread_self()");
}

/* Deterministic floating-point work, different per kind: SSE square roots
 * and divisions, x87 long double, and divisions under a rounding mode set in
 * MXCSR (and the x87 control word) by the thread itself. */
static volatile double fp_seed = 1.0;
#define FP_KINDS 5
static const int fp_round[FP_KINDS] = { FE_TONEAREST, FE_TONEAREST, FE_TONEAREST, FE_UPWARD, FE_DOWNWARD };

static long double fp_work(int kind, long iters)
{
	fesetround(fp_round[kind]);
	double s = fp_seed + kind, x = 0;
	long double l = 0;
	for (long i = 1; i <= iters; i++) {
		switch (kind) {
		case 0: x += sqrt((double)i * s); break;
		case 1: x = x * 0.9999999 + 1.0 / ((double)i + s); break;
		case 2: l += 1.0L / ((long double)i * s); break;
		default: x += 1.0 / ((double)i + s); break;
		}
	}
	int mode_kept = fegetround() == fp_round[kind];
	fesetround(FE_TONEAREST);
	return (kind == 2 ? l : (long double)x) * (mode_kept ? 1 : -1);
}

struct fp_job {
	int kind;
	long iters;
	long double got;
	uint64_t start, end;
};

static void *fp_thread(void *arg)
{
	struct fp_job *j = arg;
	j->start = mono();
	j->got = fp_work(j->kind, j->iters);
	j->end = mono();
	return 0;
}

static void check_fpu(void)
{
	/* about 50 ms of work each (calibrated with kind 1): several slices */
	long iters = 100000;
	for (;;) {
		uint64_t t0 = mono();
		fp_work(1, iters);
		if (mono() - t0 > 10000000u || iters > 1000000000L)
			break;
		iters *= 2;
	}
	iters *= 5;
	struct fp_job job[FP_KINDS * 2];
	long double want[FP_KINDS];
	for (int k = 0; k < FP_KINDS; k++)
		want[k] = fp_work(k, iters);
	pthread_t t[FP_KINDS * 2];
	for (int i = 0; i < FP_KINDS * 2; i++) {
		job[i] = (struct fp_job){ .kind = i % FP_KINDS, .iters = iters };
		t[i] = start(fp_thread, &job[i]);
	}
	for (int i = 0; i < FP_KINDS * 2; i++)
		pthread_join(t[i], NULL);
	int exact = 1, overlap = 1;
	uint64_t last_start = 0, first_end = UINT64_MAX;
	for (int i = 0; i < FP_KINDS * 2; i++) {
		exact &= job[i].got == want[job[i].kind];
		last_start = job[i].start > last_start ? job[i].start : last_start;
		first_end = job[i].end < first_end ? job[i].end : first_end;
	}
	overlap = last_start < first_end;
	ok(exact && overlap && want[3] != want[4] && fegetround() == FE_TONEAREST,
	   "FPU/SSE state is per thread: %d threads (SSE sqrt and division, x87, rounding modes up and down) "
	   "running at the same time get the single-threaded results exactly",
	   FP_KINDS * 2);
}

/* --- scheduling ---------------------------------------------------------- */
static volatile int stop_spinning;
static volatile uint64_t spins[2 * 8]; /* [0] and [8]: a cache line apart */

static void *spinner(void *arg)
{
	volatile uint64_t *c = &spins[(intptr_t)arg * 8];
	while (!stop_spinning)
		++*c;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static volatile int yield_turn, yield_fail;
static volatile long yield_rets;
#define HANDOFFS 1000

static void *yielder(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t end = mono() + 2000000000u;
	for (int i = 0; i < HANDOFFS; i++) {
		while (yield_turn != me) {
			yield_rets += sched_yield();
			if (yield_fail || mono() > end) {
				yield_fail = 1;
				return 0;
			}
		}
		yield_turn = !me;
	}
	return 0;
}

static void check_sched(void)
{
	/* a sleeper beside a CPU-bound thread */
	stop_spinning = 0;
	pthread_t s = start(spinner, (void *)0);
	sleep_ms(20); /* the spinner is running */
	uint64_t late[100];
	int early = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t t0 = mono();
		struct timespec ten = { 0, 10000000 };
		nanosleep(&ten, NULL);
		uint64_t d = mono() - t0;
		early += d < 10000000u;
		late[i] = d > 10000000u ? d - 10000000u : 0;
	}
	stop_spinning = 1;
	pthread_join(s, NULL);
	qsort(late, 100, sizeof late[0], cmp_u64);
	ok(!early && late[50] < 2000000u && late[99] < 15000000u && spins[0] > 0,
	   "nanosleep(10 ms) x100 beside a spinning thread: p50 %.2f ms late (< 2 ms), max %.2f ms late (< 15 ms), none "
	   "early (%d)",
	   late[50] / 1e6, late[99] / 1e6, early);

	/* two CPU-bound threads share the CPU */
	stop_spinning = 0;
	spins[0] = spins[8] = 0;
	pthread_t a = start(spinner, (void *)0), b = start(spinner, (void *)1);
	sleep_ms(300);
	stop_spinning = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	double total = (double)spins[0] + (double)spins[8];
	double pa = total ? spins[0] / total : 0, pb = total ? spins[8] / total : 0;
	ok(pa >= 0.25 && pb >= 0.25, "two CPU-bound threads for 300 ms: each makes at least 25 %% of the progress (%.0f %% / %.0f %%)",
	   pa * 100, pb * 100);

	/* hand-offs by sched_yield: without it, each would wait out a slice */
	uint64_t t0 = mono();
	a = start(yielder, (void *)0), b = start(yielder, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	double ms = (mono() - t0) / 1e6;
	ok(!yield_fail && yield_rets == 0 && ms < 1000,
	   "sched_yield: %d hand-offs between two threads that spin on it, in < 1 s (%.0f ms), each call answers 0",
	   HANDOFFS * 2, ms);
}

/* --- signals and threads ------------------------------------------------ */
struct target {
	int spin; /* 0: sleeps 1 ms at a time; 1: spins with no system call */
	volatile long tid;
	volatile int ready, give_up;
	sigset_t pending_seen;
	int mask_had_usr1, ran_there;
	stack_t alt_at_start;
	char *alt;
};

static void *target(void *arg)
{
	struct target *t = arg;
	t->tid = tid();
	if (t->alt) {
		sigaltstack(NULL, &t->alt_at_start);
		stack_t ss = { .ss_sp = t->alt, .ss_size = 65536 };
		sigaltstack(&ss, NULL);
	}
	t->ready = 1;
	if (t->spin)
		while (!got_sig && !t->give_up)
			;
	else
		while (!got_sig && !t->give_up)
			sleep_ms(1);
	return 0;
}

/* Starts a target and waits for it to be ready. */
static pthread_t start_target(struct target *t)
{
	pthread_t p = start(target, t);
	wait_flag(&t->ready, 2000);
	sleep_ms(10); /* in its loop */
	return p;
}

static void end_target(pthread_t p, struct target *t)
{
	wait_flag(&got_sig, 2000);
	t->give_up = 1;
	pthread_join(p, NULL);
}

static void *blocked_target(void *arg)
{
	struct target *t = arg;
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	t->mask_had_usr1 = sigismember(&cur, SIGUSR1);
	t->tid = tid();
	t->ready = 1;
	wait_flag(&t->give_up, 2000); /* main sends meanwhile */
	sigpending(&t->pending_seen);
	mask(SIG_UNBLOCK, SIGUSR1); /* the handler runs before this returns */
	t->ran_there = got_sig == SIGUSR1 && handler_tid == t->tid;
	return 0;
}

static volatile int sigwait_got;
static void *sig_waiter(void *arg)
{
	struct target *t = arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	struct timespec two = { 2, 0 };
	t->tid = tid();
	t->ready = 1;
	sigwait_got = sigtimedwait(&s, NULL, &two);
	return 0;
}

static uint32_t intr_word;
static pthread_mutex_t intr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t intr_cond = PTHREAD_COND_INITIALIZER;
static int intr_pred, intr_timeout;

static void *futex_intr(void *arg)
{
	struct waiter *w = arg;
	struct timespec five = { 5, 0 };
	w->started = 1;
	w->ret = futex(w->word, FUTEX_WAIT_PRIVATE, 0, &five, 0, 0);
	w->err = errno;
	w->done = 1;
	return 0;
}

static void *cond_intr(void *arg)
{
	struct target *t = arg;
	struct timespec dl = after_ms(CLOCK_REALTIME, 5000);
	pthread_mutex_lock(&intr_lock);
	t->tid = tid();
	t->ready = 1;
	while (!intr_pred)
		if (pthread_cond_timedwait(&intr_cond, &intr_lock, &dl) == ETIMEDOUT) {
			intr_timeout = 1;
			break;
		}
	pthread_mutex_unlock(&intr_lock);
	return 0;
}

static void *pause_forever(void *arg)
{
	(void)arg;
	struct timespec ten = { 10, 0 };
	nanosleep(&ten, NULL); /* a cancellation point */
	return (void *)1;
}

static void check_signals(void)
{
	install(SIGUSR1, 0);
	install(SIGUSR2, 0);
	long me = tid();

	/* thread-directed: pthread_kill to a sleeping and to a spinning thread */
	for (int spin = 0; spin < 2; spin++) {
		struct target t = { .spin = spin };
		reset_handler_record();
		pthread_t p = start_target(&t);
		pthread_kill(p, SIGUSR2);
		end_target(p, &t);
		ok(got_sig == SIGUSR2 && handler_hits == 1 && handler_tid == t.tid && t.tid != me,
		   "pthread_kill to a %s thread: its handler runs in that thread (gettid %ld, wanted %ld)",
		   spin ? "CPU-bound (no system call)" : "sleeping", (long)handler_tid, (long)t.tid);
	}

	/* process-directed while main blocks it: another thread takes it */
	for (int spin = 0; spin < 2; spin++) {
		struct target t = { .spin = spin };
		reset_handler_record();
		pthread_t p = start_target(&t);
		mask(SIG_BLOCK, SIGUSR1);
		kill(getpid(), SIGUSR1);
		end_target(p, &t);
		sigset_t pend;
		sigpending(&pend);
		int left = sigismember(&pend, SIGUSR1);
		mask(SIG_UNBLOCK, SIGUSR1);
		ok(got_sig == SIGUSR1 && handler_hits == 1 && handler_tid == t.tid && !left,
		   "kill(getpid(), SIGUSR1) while main blocks it: handled by the %s thread that does not block it",
		   spin ? "CPU-bound" : "sleeping");
	}

	/* thread-directed to a thread that blocks it: pending there only */
	{
		struct target t = { 0 };
		reset_handler_record();
		mask(SIG_BLOCK, SIGUSR1); /* the new thread inherits the mask */
		pthread_t p = start(blocked_target, &t);
		wait_flag(&t.ready, 2000);
		mask(SIG_UNBLOCK, SIGUSR1);
		pthread_kill(p, SIGUSR1);
		sigset_t mine;
		sigpending(&mine);
		int main_has = sigismember(&mine, SIGUSR1), ran_early = got_sig;
		t.give_up = 1;
		pthread_join(p, NULL);
		ok(t.mask_had_usr1 && sigismember(&t.pending_seen, SIGUSR1) && !main_has && !ran_early && t.ran_there,
		   "a new thread inherits the mask; a signal sent to it while it blocks it is pending on it alone, and its "
		   "handler runs there once it unblocks");
	}

	/* sigtimedwait in a thread takes a process-directed signal all block */
	{
		struct target t = { 0 };
		reset_handler_record();
		mask(SIG_BLOCK, SIGUSR2);
		pthread_t p = start(sig_waiter, &t);
		wait_flag(&t.ready, 2000);
		sleep_ms(10);
		kill(getpid(), SIGUSR2);
		pthread_join(p, NULL);
		sigset_t pend;
		sigpending(&pend);
		int left = sigismember(&pend, SIGUSR2);
		mask(SIG_UNBLOCK, SIGUSR2);
		ok(sigwait_got == SIGUSR2 && !left && !handler_hits,
		   "kill(getpid()) with the signal blocked everywhere: the thread in sigtimedwait takes it");
	}

	/* per-thread alternate stacks */
	{
		static char main_alt[65536], thread_alt[65536];
		stack_t ss = { .ss_sp = main_alt, .ss_size = sizeof main_alt }, off = { .ss_flags = SS_DISABLE };
		sigaltstack(&ss, NULL);
		install(SIGUSR2, SA_ONSTACK);
		struct target t = { .alt = thread_alt };
		reset_handler_record();
		pthread_t p = start_target(&t);
		pthread_kill(p, SIGUSR2);
		end_target(p, &t);
		uintptr_t in_thread = handler_sp;
		reset_handler_record();
		raise(SIGUSR2);
		uintptr_t in_main = handler_sp;
		sigaltstack(&off, NULL);
		install(SIGUSR2, 0);
		ok((t.alt_at_start.ss_flags & SS_DISABLE) && in_thread > (uintptr_t)thread_alt &&
			   in_thread < (uintptr_t)thread_alt + sizeof thread_alt && in_main > (uintptr_t)main_alt &&
			   in_main < (uintptr_t)main_alt + sizeof main_alt,
		   "sigaltstack is per thread: a new thread has none; each handler runs on its own thread's");
	}

	/* a raw futex wait interrupted by a handler: EINTR */
	{
		struct waiter w = { .word = &intr_word };
		reset_handler_record();
		pthread_t p = start(futex_intr, &w);
		wait_flag(&w.started, 2000);
		sleep_ms(50);
		long wtid = 0;
		uint64_t t0 = mono();
		pthread_kill(p, SIGUSR1);
		pthread_join(p, NULL);
		double ms = (mono() - t0) / 1e6;
		wtid = handler_tid;
		ok(w.ret == -1 && w.err == EINTR && got_sig == SIGUSR1 && wtid != me && ms < 1000,
		   "a thread in FUTEX_WAIT gets a signal (handler without SA_RESTART): the handler runs there, the wait "
		   "ends with EINTR (%.1f ms)",
		   ms);
	}

	/* pthread_cond_wait across a handler: it waits on, then wakes on the signal */
	{
		struct target t = { 0 };
		reset_handler_record();
		pthread_t p = start(cond_intr, &t);
		wait_flag(&t.ready, 2000);
		sleep_ms(50);
		pthread_kill(p, SIGUSR1);
		wait_flag(&got_sig, 2000);
		sleep_ms(20);
		pthread_mutex_lock(&intr_lock);
		int still_waiting = !intr_timeout; /* it took the lock back only to wait again */
		intr_pred = 1;
		pthread_cond_signal(&intr_cond);
		pthread_mutex_unlock(&intr_lock);
		pthread_join(p, NULL);
		ok(got_sig == SIGUSR1 && handler_tid == t.tid && still_waiting && !intr_timeout,
		   "a thread in pthread_cond_wait runs a handler there, waits on, and wakes on pthread_cond_signal");
	}

	/* pthread_cancel: musl's cancel signal to a thread in nanosleep */
	{
		pthread_t p = start(pause_forever, 0);
		sleep_ms(20);
		uint64_t t0 = mono();
		void *r = 0;
		int e = pthread_cancel(p);
		pthread_join(p, &r);
		double ms = (mono() - t0) / 1e6;
		ok(!e && r == PTHREAD_CANCELED && ms < 1000, "pthread_cancel ends a thread blocked in nanosleep (%.1f ms)", ms);
	}
}

/* --- detached threads --------------------------------------------------- */
static volatile int detached_ran;
static void *detached(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&detached_ran, 1, __ATOMIC_SEQ_CST);
	sem_post(&sem);
	return 0;
}

static pthread_t start_detached(void)
{
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	if (create(&t, &a, detached, 0)) {
		printf("Bail out! pthread_create (detached) failed\n");
		exit(1);
	}
	pthread_attr_destroy(&a);
	return t;
}

static void check_detached(void)
{
	sem_init(&sem, 0, 0);
	int posts = 0;
	for (int i = 0; i < 100; i++) {
		start_detached();
		struct timespec dl = after_ms(CLOCK_REALTIME, 2000);
		posts += sem_timedwait(&sem, &dl) == 0;
	}
	ok(posts == 100 && detached_ran == 100, "100 detached threads run (one after another)");
}

/* --- modes that end the run ------------------------------------------- */
static void *exit_three(void *arg)
{
	(void)arg;
	sleep_ms(50);
	printf("exit(3) from a thread\n");
	exit(3);
}

static void at_exit_note(void)
{
	printf("atexit handler ran in %s\n", tid() == getpid() ? "main" : "the exiting thread");
}

static void *outlive_main(void *arg)
{
	sleep_ms(100);
	printf("thread still ran after main's %s\n", (char *)arg);
	fflush(stdout);
	return 0;
}

static void *raw_exit_later(void *arg)
{
	(void)arg;
	sleep_ms(100);
	printf("last thread: SYS_exit(9)\n");
	fflush(stdout);
	syscall(SYS_exit, 9);
	return 0;
}

static void *wait_forever(void *arg)
{
	sem_wait(arg);
	return 0;
}

static volatile int depth_limit = 1 << 30; /* never reached; hides the recursion from gcc */
static int recurse(int n)
{
	volatile char frame[256]; /* small frames: the first write below the stack is on the guard page */
	frame[0] = (char)n;
	return n >= depth_limit ? 0 : recurse(n + 1) + frame[0];
}

static void *overflow(void *arg)
{
	(void)arg;
	pthread_attr_t a;
	void *lo;
	size_t size;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &lo, &size);
	printf("stack %#lx-%#lx\n", (unsigned long)(uintptr_t)lo, (unsigned long)((uintptr_t)lo + size));
	fflush(stdout);
	printf("not reached: %d\n", recurse(0));
	return 0;
}

static int mode(const char *how)
{
	if (!strcmp(how, "exit-from-thread")) {
		atexit(at_exit_note);
		pthread_t s[3];
		for (int i = 0; i < 3; i++)
			s[i] = start(spinner, (void *)0);
		start(exit_three, 0);
		pthread_join(s[0], NULL); /* never returns: the spinners spin until the exit */
		printf("not reached: main's join returned\n");
		return 1;
	}
	if (!strcmp(how, "main-pthread-exit")) {
		start(outlive_main, "pthread_exit");
		printf("main: pthread_exit\n");
		fflush(stdout);
		pthread_exit(NULL);
	}
	if (!strcmp(how, "raw-exits")) {
		start(raw_exit_later, 0);
		printf("main: SYS_exit(7)\n");
		fflush(stdout);
		syscall(SYS_exit, 7);
	}
	if (!strcmp(how, "churn")) {
		int fails = 0;
		for (int i = 0; i < 2000 && !fails; i++) {
			pthread_t t;
			fails += pthread_create(&t, NULL, twice, 0) || pthread_join(t, NULL);
		}
		sem_init(&sem, 0, 0);
		for (int i = 0; i < 2000 && !fails; i++) {
			start_detached();
			struct timespec dl = after_ms(CLOCK_REALTIME, 2000);
			fails += sem_timedwait(&sem, &dl) != 0;
		}
		printf("churn: %s\n", fails ? "FAILED" : "4000 threads");
		return fails != 0;
	}
	if (!strcmp(how, "detached-big")) {
		sem_init(&sem, 0, 0);
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 4 << 20);
		int fails = 0;
		for (int i = 0; i < 50 && !fails; i++) {
			pthread_t t;
			fails += pthread_create(&t, &a, detached, 0) != 0;
			struct timespec dl = after_ms(CLOCK_REALTIME, 2000);
			fails += !fails && sem_timedwait(&sem, &dl) != 0;
		}
		usleep(20000); /* the last one's own end */
		printf("detached-big: %s\n", fails ? "FAILED" : "50 threads");
		return fails != 0;
	}
	if (!strcmp(how, "bomb")) {
		static sem_t never;
		sem_init(&never, 0, 0);
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 65536);
		int k = 0, e = 0;
		while (k < 1000 && !e) {
			pthread_t t;
			if (!(e = pthread_create(&t, &a, wait_forever, &never)))
				k++;
		}
		printf("bomb: %d threads, then %s\n", k, e ? strerror(e) : "none failed");
		return 0; /* the waiting threads end with the process */
	}
	if (!strcmp(how, "stack-overflow")) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 65536);
		pthread_t t;
		if (pthread_create(&t, &a, overflow, 0))
			return 1;
		pthread_join(t, NULL);
		return 1;
	}
	printf("unknown mode %s\n", how);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return mode(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	check_many();
	check_locks();
	check_cond();
	check_futex();
	check_tls();
	check_fpu();
	check_sched();
	check_signals();
	check_detached();
	printf("# %d threads created\n", threads_made);
	printf("done %d\n", n);
	return 0;
}
