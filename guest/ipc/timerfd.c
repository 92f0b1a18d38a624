/* SPDX-License-Identifier: GPL-2.0-only */
/* timerfd (timerfd.h), as Linux: a read returns how many times the timer
 * expired since the last read or settime (a periodic one counts the
 * periods missed meanwhile), waiting for the first one if none has.
 * Nothing runs when a timer expires: expirations are counted when the
 * file is looked at (read, poll, gettime), from the deadline, and a waiter
 * sleeps until it (stream_wait's deadline, poll's *deadline).  So even a
 * 1 ns period costs nothing until someone looks. */
#include <errno.h>
#include <string.h>
#include "ipc/stream.h"
#include "ipc/timerfd.h"
#include "kernel.h"
#include "linux_abi.h"

/* <sys/timerfd.h>: TFD_CLOEXEC and TFD_NONBLOCK are O_CLOEXEC and O_NONBLOCK */
#define TFD_TIMER_ABSTIME       1
#define TFD_TIMER_CANCEL_ON_SET 2 /* the wall clock is never set here: never cancelled */
#define KTIME_MAX INT64_MAX       /* Linux's times saturate there (292 years) */

struct timespec_k { int64_t sec, nsec; };
struct itimerspec_k { struct timespec_k interval, value; };

struct timerfd {
	int realtime;      /* CLOCK_REALTIME(_ALARM): absolute times are wall times */
	int armed;
	int64_t deadline;  /* while armed: the next expiry, monotonic ns (a
			    * wall time long past may come out negative) */
	uint64_t interval; /* ns; 0: once.  Kept while disarmed, as Linux does */
	uint64_t ticks;    /* expirations counted but not yet read */
};

/* Counts the expirations due by now and moves the deadline past now (a
 * one-shot timer is disarmed by its expiry). */
static void advance(struct timerfd *t, int64_t now)
{
	if (!t->armed || t->deadline > now)
		return;
	if (!t->interval) {
		t->ticks++, t->armed = 0;
		return;
	}
	uint64_t late = (uint64_t)now - (uint64_t)t->deadline;
	t->ticks += late / t->interval + 1;
	uint64_t next = (uint64_t)now + (t->interval - late % t->interval);
	t->deadline = next > (uint64_t)KTIME_MAX ? KTIME_MAX : (int64_t)next;
}

static long timerfd_read(struct file *f, void *buf, size_t len)
{
	struct timerfd *t = f->priv;
	if (len < sizeof t->ticks)
		return -EINVAL;
	for (;;) { /* any stream's change wakes it: look again */
		advance(t, (int64_t)clock_mono_ns());
		if (t->ticks)
			break;
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		if (stream_wait(t->armed ? (uint64_t)t->deadline : 0) == -EINTR)
			return -ERESTARTSYS;
	}
	uint64_t n = t->ticks;
	t->ticks = 0; /* readiness only goes: no waiter to tell */
	memcpy(buf, &n, sizeof n);
	return sizeof n;
}

/* Linux opens it O_RDWR but has no write. */
static long timerfd_write(struct file *f, const void *buf, size_t len)
{
	(void)f, (void)buf, (void)len;
	return -EINVAL;
}

static unsigned timerfd_poll(struct file *f, uint64_t *deadline)
{
	struct timerfd *t = f->priv;
	advance(t, (int64_t)clock_mono_ns());
	if (t->ticks)
		return POLLIN;
	if (t->armed && (!*deadline || (uint64_t)t->deadline < *deadline))
		*deadline = (uint64_t)t->deadline; /* in the future: advance saw to it */
	return 0;
}

static void timerfd_release(struct file *f)
{
	kfree(f->priv, sizeof(struct timerfd));
}

static const struct stream_ops timerfd_ops = {
	.name = "anon_inode:[timerfd]", .read = timerfd_read, .write = timerfd_write,
	.poll = timerfd_poll, .release = timerfd_release,
};

/* CLOCK_BOOTTIME is CLOCK_MONOTONIC here (the VM is never suspended), and
 * the _ALARM clocks are their plain twins: a program is root, which may
 * use them on Linux, and there is no suspend for them to wake from. */
static int clock_ok(int clock)
{
	return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME
	       || clock == CLOCK_REALTIME_ALARM || clock == CLOCK_BOOTTIME_ALARM;
}

long sys_timerfd_create(long clockid, long lflags)
{
	int clock = (int)clockid, flags = (int)lflags; /* ints in Linux */
	if ((flags & ~(O_CLOEXEC | O_NONBLOCK)) || !clock_ok(clock))
		return -EINVAL;
	struct timerfd *t = kalloc(sizeof *t);
	if (!t)
		return -ENOMEM;
	t->realtime = clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_ALARM;
	long fd = stream_open(&timerfd_ops, t, O_RDWR | flags);
	if (fd < 0)
		kfree(t, sizeof *t);
	return fd;
}

/* EBADF for no file, EINVAL for a file that is no timerfd. */
static long timerfd_of(long fd, struct timerfd **t)
{
	struct file *f = stream_get((int)fd, &timerfd_ops);
	if (!f)
		return fd_get((int)fd) ? -EINVAL : -EBADF;
	*t = f->priv;
	return 0;
}

static int timespec_ok(const struct timespec_k *ts)
{
	return ts->sec >= 0 && ts->nsec >= 0 && ts->nsec < NSEC_PER_SEC;
}

static int64_t ns_of(const struct timespec_k *ts)
{
	return ts->sec >= KTIME_MAX / NSEC_PER_SEC ? KTIME_MAX : ts->sec * NSEC_PER_SEC + ts->nsec;
}

static struct timespec_k timespec_of(uint64_t ns)
{
	return (struct timespec_k){ (int64_t)(ns / NSEC_PER_SEC), (int64_t)(ns % NSEC_PER_SEC) };
}

/* What gettime says: the interval, and the time to the next expiry (0:
 * disarmed, or a one-shot timer expired and not yet read). */
static struct itimerspec_k report(struct timerfd *t, int64_t now)
{
	advance(t, now);
	uint64_t left = t->armed ? (uint64_t)(t->deadline - now) : 0;
	return (struct itimerspec_k){ timespec_of(t->interval), timespec_of(left) };
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? KTIME_MAX : INT64_MIN) : r;
}

/* Linux's order: new is read first, old written last (after the change). */
long sys_timerfd_settime(long fd, long lflags, const int64_t *unew, int64_t *uold)
{
	struct itimerspec_k want, was;
	if (!user_ok(unew, sizeof want))
		return -EFAULT;
	memcpy(&want, unew, sizeof want);
	int flags = (int)lflags;
	if ((flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET))
	    || !timespec_ok(&want.value) || !timespec_ok(&want.interval))
		return -EINVAL;
	struct timerfd *t;
	long r = timerfd_of(fd, &t);
	if (r)
		return r;
	int64_t now = (int64_t)clock_mono_ns(), value = ns_of(&want.value);
	was = report(t, now);
	t->ticks = 0;
	t->interval = (uint64_t)ns_of(&want.interval);
	t->armed = value != 0;
	if (!(flags & TFD_TIMER_ABSTIME))
		t->deadline = add_sat(now, value);
	else if (!t->realtime)
		t->deadline = value;
	else /* by the wall clock's offset now (it is never set, so it stays) */
		t->deadline = add_sat(value, now - (int64_t)clock_wall_ns());
	stream_changed(); /* waiters' deadlines changed */
	if (uold) {
		if (!user_ok(uold, sizeof was))
			return -EFAULT;
		memcpy(uold, &was, sizeof was);
	}
	return 0;
}

long sys_timerfd_gettime(long fd, int64_t *ucur)
{
	struct timerfd *t;
	long r = timerfd_of(fd, &t);
	if (r)
		return r;
	struct itimerspec_k cur = report(t, (int64_t)clock_mono_ns());
	if (!user_ok(ucur, sizeof cur))
		return -EFAULT;
	memcpy(ucur, &cur, sizeof cur);
	return 0;
}
