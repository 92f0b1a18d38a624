/* SPDX-License-Identifier: GPL-2.0-only */
/* Interval timers.  ITIMER_VIRTUAL and ITIMER_PROF count the same time as
 * ITIMER_REAL: the VM runs nothing but the program, so its CPU time is its
 * time since boot (the clocks say so too), sleeps included. */
#include <errno.h>
#include <stdint.h>
#include "kernel.h"
#include "linux_abi.h"
#include "proc/itimer.h"
#include "proc/sched.h"
#include "proc/signal.h"

#define MAX_SECONDS   (1ll << 32) /* beyond a century: as good as never */
/* A tick costs the program ~25-50 us on kvm_pvm (docs/kvm-pvm-process-model.md):
 * a shorter period would leave it no time at all between handlers. */
#define MIN_PERIOD_NS 100000

static struct { uint64_t deadline, interval; } timers[3]; /* deadline: monotonic ns, 0 = disarmed */
static const int timer_signal[3] = { SIGALRM, SIGVTALRM, SIGPROF };

uint64_t itimer_next_deadline(void)
{
	uint64_t next = 0;
	for (int i = 0; i < 3; i++)
		if (timers[i].deadline && (!next || timers[i].deadline < next))
			next = timers[i].deadline;
	return next;
}

void itimer_poll(void)
{
	uint64_t next = itimer_next_deadline(), now;
	if (!next || next > (now = clock_mono_ns()))
		return;
	for (int i = 0; i < 3; i++) {
		uint64_t d = timers[i].deadline, iv = timers[i].interval;
		if (!d || d > now)
			continue;
		signal_raise(timer_signal[i]);
		/* periodic: the next period after now (missed ones are one signal) */
		timers[i].deadline = iv ? now + iv - (now - d) % iv : 0;
	}
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
static void report(int which, long *out)
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
	report((int)which, value);
	return 0;
}

/* Timer which fires first ns from now (0: disarmed), then every interval. */
static void set_timer(int which, uint64_t first, uint64_t interval)
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
	report(0, old);
	set_timer(0, (uint64_t)(seconds > MAX_SECONDS ? MAX_SECONDS : (long long)seconds) * NSEC_PER_SEC, 0);
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
	if (old)
		report((int)which, old);
	set_timer((int)which, first, interval);
	return 0;
}
