/* SPDX-License-Identifier: GPL-2.0-only */
/* Interval timers: setitimer's three and timer_create's.  ITIMER_VIRTUAL,
 * ITIMER_PROF and a CLOCK_PROCESS_CPUTIME_ID timer count the same time as
 * ITIMER_REAL: the VM runs nothing but the program, so its CPU time is its
 * time since boot (the clocks say so too), sleeps included.  A POSIX
 * timer's signal carries SI_TIMER, its id and value; while it is still
 * pending a new expiry only counts as an overrun, as on Linux. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"
#include "proc/itimer.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"

#define MAX_SECONDS   (1ll << 32) /* beyond a century: as good as never */
/* A tick costs the program ~25-50 us on kvm_pvm (docs/kvm-pvm-process-model.md):
 * a shorter period would leave it no time at all between handlers. */
#define MIN_PERIOD_NS 100000

#define NITIMERS     3    /* ITIMER_REAL, _VIRTUAL, _PROF: timers[0..2] */
#define POSIX_TIMERS 32   /* timer_create's ids 0..31: timers[3..] */
#define SIGEV_SIGNAL    0
#define SIGEV_NONE      1
#define SIGEV_THREAD_ID 4

/* A process's timers (process->timers: made on its first timer call, not
 * inherited by fork, kept by execve but for the POSIX ones). */
struct timer {
	uint64_t deadline, interval; /* deadline: monotonic ns, 0 = disarmed */
	int used;                    /* POSIX: created */
	int sig, notify, tid, clock; /* POSIX: how it tells, to whom; its clock */
	uint64_t value;              /* POSIX: sigev_value */
	int overrun, last_overrun;   /* POSIX: expiries while its signal pends; at its last delivery */
};
#define NTIMERS (NITIMERS + POSIX_TIMERS)

/* The current process's (NULL: no memory for them). */
static struct timer *mine(void)
{
	struct process *p = current->proc;
	if (!p->timers && (p->timers = kalloc(NTIMERS * sizeof(struct timer)))) {
		p->timers[0].sig = SIGALRM, p->timers[1].sig = SIGVTALRM, p->timers[2].sig = SIGPROF;
	}
	return p->timers;
}

void itimer_process_gone(struct process *p)
{
	kfree(p->timers, NTIMERS * sizeof(struct timer));
	p->timers = 0;
}

void itimer_exec(void)
{
	struct timer *timers = current->proc->timers;
	for (int i = NITIMERS; timers && i < NTIMERS; i++) {
		timers[i] = (struct timer){ 0 };
		signal_timer_forget(i - NITIMERS);
	}
}

uint64_t itimer_next_deadline(void)
{
	uint64_t next = 0;
	for (struct process *p = processes; p; p = p->next)
		for (int i = 0; p->timers && i < NTIMERS; i++)
			if (p->timers[i].deadline && (!next || p->timers[i].deadline < next))
				next = p->timers[i].deadline;
	return next;
}

static void fire(struct process *p, int i)
{
	struct timer *t = &p->timers[i];
	if (i < NITIMERS) {
		signal_send_process(p, t->sig, SI_KERNEL, 0, 0);
		return;
	}
	if (t->notify == SIGEV_NONE)
		return;
	int32_t id = i - NITIMERS;
	if (signal_timer_pending(p, id)) {
		t->overrun++;
		return;
	}
	struct siginfo_k info = { .signo = t->sig, .code = SI_TIMER };
	memcpy(info.bytes, &id, 4);
	memcpy(info.bytes + 8, &t->value, 8);
	struct task *to = t->notify == SIGEV_THREAD_ID ? task_by_tid(t->tid) : 0;
	if (t->notify == SIGEV_THREAD_ID && (!to || to->state == TASK_DEAD || to->proc != p))
		return; /* its thread is gone */
	long r = signal_send_timer(p, to, &info, id);
	if (r == SIGNAL_MERGED || r < 0)
		t->overrun++; /* the expiry is not lost: it counts */
}

void itimer_poll(void)
{
	uint64_t next = itimer_next_deadline(), now;
	if (!next || next > (now = clock_mono_ns()))
		return;
	for (struct process *p = processes; p; p = p->next) {
		struct timer *timers = p->timers;
		for (int i = 0; timers && i < NTIMERS; i++) {
			uint64_t d = timers[i].deadline, iv = timers[i].interval;
			if (!d || d > now)
				continue;
			fire(p, i);
			/* periodic: the next period after now (missed ones are one signal, and overruns) */
			timers[i].deadline = iv ? now + iv - (now - d) % iv : 0;
			if (iv && i >= NITIMERS)
				timers[i].overrun += (int)((now - d) / iv); /* periods missed altogether */
		}
	}
}

void itimer_delivered(int id, void *siginfo)
{
	struct siginfo_k *info = siginfo;
	struct timer *timers = current->proc->timers;
	if (id < 0 || id >= POSIX_TIMERS || !timers)
		return;
	struct timer *t = &timers[NITIMERS + id];
	memcpy(info->bytes + 4, &t->overrun, 4); /* si_overrun */
	t->last_overrun = t->overrun, t->overrun = 0;
}

static int timeval_ns(const long *tv, uint64_t *ns)
{
	if (tv[0] < 0 || tv[1] < 0 || tv[1] >= 1000000)
		return -EINVAL;
	long long sec = tv[0] > MAX_SECONDS ? MAX_SECONDS : tv[0];
	*ns = (uint64_t)sec * NSEC_PER_SEC + (uint64_t)tv[1] * 1000;
	return 0;
}

/* struct itimerval: the interval, then the time left (rounded up to a
 * microsecond while armed, as Linux does). */
static void report(const struct timer *timers, int which, long *out)
{
	uint64_t now = clock_mono_ns(), d = timers[which].deadline, iv = timers[which].interval;
	uint64_t left = !d ? 0 : d > now ? (d - now + 999) / 1000 : 1; /* microseconds */
	out[0] = (long)(iv / NSEC_PER_SEC), out[1] = (long)(iv % NSEC_PER_SEC / 1000);
	out[2] = (long)(left / 1000000), out[3] = (long)(left % 1000000);
}

long sys_getitimer(long which, long *value)
{
	if (which < 0 || which > 2)
		return -EINVAL;
	if (!user_ok(value, 4 * sizeof(long)))
		return -EFAULT;
	struct timer *timers = mine();
	if (!timers)
		return -ENOMEM;
	report(timers, (int)which, value);
	return 0;
}

/* Timer which fires first ns from now (0: disarmed), then every interval. */
static void set_timer(struct timer *timers, int which, uint64_t first, uint64_t interval)
{
	if (interval && interval < MIN_PERIOD_NS)
		interval = MIN_PERIOD_NS;
	timers[which].deadline = first ? clock_mono_ns() + first : 0;
	timers[which].interval = first ? interval : 0;
	sched_timer_update();
}

/* alarm(2) for binaries that make the call (musl's alarm uses setitimer):
 * the seconds left of the previous one, rounded as Linux does. */
long sys_alarm(unsigned long seconds)
{
	long old[4];
	struct timer *timers = mine();
	if (!timers)
		return -ENOMEM;
	report(timers, 0, old);
	set_timer(timers, 0, (uint64_t)(seconds > MAX_SECONDS ? MAX_SECONDS : (long long)seconds) * NSEC_PER_SEC, 0);
	return old[2] + (old[3] >= 500000 || (!old[2] && old[3]));
}

long sys_setitimer(long which, const long *value, long *old)
{
	if (which < 0 || which > 2)
		return -EINVAL;
	if (!user_ok(value, 4 * sizeof(long)) || (old && !user_ok(old, 4 * sizeof(long))))
		return -EFAULT;
	uint64_t interval, first;
	int r = timeval_ns(value, &interval);
	if (r || (r = timeval_ns(value + 2, &first)))
		return r;
	struct timer *timers = mine();
	if (!timers)
		return -ENOMEM;
	if (old)
		report(timers, (int)which, old);
	set_timer(timers, (int)which, first, interval);
	return 0;
}

/* --- timer_create and friends ------------------------------------------------ */

struct sigevent_k { uint64_t value; int32_t signo, notify; int32_t tid; int32_t pad[11]; };
struct itimerspec_k { int64_t interval[2], value[2]; };

static struct timer *posix_timer(long id)
{
	struct timer *timers = current->proc->timers;
	return timers && id >= 0 && id < POSIX_TIMERS && timers[NITIMERS + id].used ? &timers[NITIMERS + id] : 0;
}

long sys_timer_create(long clock, const void *sev, int32_t *id)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME &&
	    clock != CLOCK_PROCESS_CPUTIME_ID)
		return -EINVAL; /* a thread's CPU clock is not one the timers count */
	if (!user_ok(id, sizeof *id) || (sev && !user_ok(sev, sizeof(struct sigevent_k))))
		return -EFAULT;
	struct sigevent_k e = { 0, SIGALRM, SIGEV_SIGNAL, 0, { 0 } };
	if (sev)
		memcpy(&e, sev, sizeof e);
	if (e.notify != SIGEV_SIGNAL && e.notify != SIGEV_NONE && e.notify != SIGEV_THREAD_ID)
		return -EINVAL; /* SIGEV_THREAD is the C library's (a thread and SIGEV_THREAD_ID) */
	if (e.notify != SIGEV_NONE && (e.signo < 1 || e.signo >= _NSIG))
		return -EINVAL;
	struct task *target = e.notify == SIGEV_THREAD_ID ? task_by_tid(e.tid) : 0;
	if (e.notify == SIGEV_THREAD_ID && (!target || target->proc != current->proc))
		return -EINVAL;
	struct timer *timers = mine();
	if (!timers)
		return -ENOMEM;
	int i = 0;
	while (i < POSIX_TIMERS && timers[NITIMERS + i].used)
		i++;
	if (i == POSIX_TIMERS)
		return -EAGAIN;
	struct timer *t = &timers[NITIMERS + i];
	*t = (struct timer){ 0, 0, 1, e.signo, e.notify, e.tid, (int)clock, sev ? e.value : (uint64_t)i, 0, 0 };
	signal_timer_forget(i); /* a deleted timer's signals went with it: none carry this id */
	*id = i;
	return 0;
}

static void timespec_put(int64_t *out, uint64_t ns)
{
	out[0] = (int64_t)(ns / NSEC_PER_SEC), out[1] = (int64_t)(ns % NSEC_PER_SEC);
}

static void posix_report(const struct timer *t, struct itimerspec_k *out)
{
	uint64_t now = clock_mono_ns();
	timespec_put(out->interval, t->interval);
	timespec_put(out->value, !t->deadline ? 0 : t->deadline > now ? t->deadline - now : 1);
}

static int timespec_ns(const int64_t *ts, uint64_t *ns)
{
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= NSEC_PER_SEC)
		return -EINVAL;
	*ns = (uint64_t)(ts[0] > MAX_SECONDS ? MAX_SECONDS : ts[0]) * NSEC_PER_SEC + (uint64_t)ts[1];
	return 0;
}

long sys_timer_settime(long id, long flags, const void *new, void *old)
{
	struct timer *t = posix_timer(id);
	if (!t)
		return -EINVAL;
	if (!user_ok(new, sizeof(struct itimerspec_k)) || (old && !user_ok(old, sizeof(struct itimerspec_k))))
		return -EFAULT;
	const struct itimerspec_k *n = new;
	uint64_t interval, value;
	int r = timespec_ns(n->interval, &interval);
	if (r || (r = timespec_ns(n->value, &value)))
		return r;
	if (old)
		posix_report(t, old);
	uint64_t now = clock_mono_ns();
	if (value && (flags & TIMER_ABSTIME)) { /* an absolute time on its clock: as a monotonic one */
		uint64_t clk_now = t->clock == CLOCK_REALTIME ? clock_wall_ns()
				   : t->clock == CLOCK_PROCESS_CPUTIME_ID ? clock_since_boot_ns() : now;
		value = value > clk_now ? value - clk_now : 0;
	}
	if (interval && interval < MIN_PERIOD_NS)
		interval = MIN_PERIOD_NS;
	t->deadline = !value && !(flags & TIMER_ABSTIME && n->value[0] | n->value[1]) ? 0 : now + (value ? value : 1);
	t->interval = t->deadline ? interval : 0;
	t->overrun = 0;
	sched_timer_update();
	return 0;
}

long sys_timer_gettime(long id, void *cur)
{
	struct timer *t = posix_timer(id);
	if (!t)
		return -EINVAL;
	if (!user_ok(cur, sizeof(struct itimerspec_k)))
		return -EFAULT;
	posix_report(t, cur);
	return 0;
}

long sys_timer_getoverrun(long id)
{
	struct timer *t = posix_timer(id);
	return t ? t->last_overrun : -EINVAL;
}

long sys_timer_delete(long id)
{
	struct timer *t = posix_timer(id);
	if (!t)
		return -EINVAL;
	*t = (struct timer){ 0 };
	signal_timer_forget((int)id);
	sched_timer_update();
	return 0;
}
