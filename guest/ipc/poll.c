/* SPDX-License-Identifier: GPL-2.0-only */
/* poll and select (poll.h): look at every file, return what is ready, else
 * wait for any stream to change (or the earliest timer among them, or the
 * timeout, or a signal) and look again. */
#include <errno.h>
#include <string.h>
#include "ipc/poll.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/signal.h"

struct pollfd_k { int32_t fd; int16_t events, revents; };

unsigned file_poll(struct file *f, uint64_t *deadline)
{
	if (f->kind == FILE_STREAM)
		return f->ops->poll(f, deadline);
	if (f->kind == FILE_CONSOLE && f->dev == 0)
		return console_readable() ? POLLIN | POLLRDNORM : 0;
	int acc = f->flags & O_ACCMODE;
	return (acc != O_WRONLY ? POLLIN | POLLRDNORM : 0) | (acc != O_RDONLY ? POLLOUT | POLLWRNORM : 0);
}

long sigmask_arg(const uint64_t *set, unsigned long size, uint64_t *out)
{
	if (!set)
		return 0;
	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (!user_ok(set, 8))
		return -EFAULT;
	*out = *set;
	return 1;
}

/* One look at every pollfd: how many have events (revents written). */
static long scan(struct pollfd_k *p, unsigned long n, uint64_t *wake)
{
	long ready = 0;
	for (unsigned long i = 0; i < n; i++) {
		p[i].revents = 0;
		if (p[i].fd < 0)
			continue;
		struct file *f = fd_get(p[i].fd);
		unsigned ev = f ? file_poll(f, wake) & ((uint16_t)p[i].events | POLLERR | POLLHUP) : POLLNVAL;
		p[i].revents = (int16_t)ev;
		ready += ev != 0;
	}
	return ready;
}

/* Until something is ready, the deadline passes (0) or a signal (-EINTR). */
static long poll_wait(struct pollfd_k *p, unsigned long n, uint64_t deadline)
{
	for (;;) {
		uint64_t wake = deadline;
		long ready = scan(p, n, &wake);
		if (ready || (deadline && deadline <= clock_mono_ns()))
			return ready;
		if (stream_wait(wake) == -EINTR)
			return -EINTR;
	}
}

static long poll_args(void *fds, unsigned long n)
{
	if (n > (unsigned long)fd_limit())
		return -EINVAL;
	return n && !user_ok(fds, n * sizeof(struct pollfd_k)) ? -EFAULT : 0;
}

long sys_poll(void *fds, unsigned long n, long timeout_ms)
{
	long r = poll_args(fds, n);
	return r ? r : poll_wait(fds, n, deadline_ms((int)timeout_ms));
}

long sys_ppoll(void *fds, unsigned long n, const int64_t *ts, const uint64_t *mask, unsigned long size)
{
	uint64_t deadline, m = 0;
	long r = poll_args(fds, n), has_mask;
	if (r || (r = deadline_ts(ts, &deadline)))
		return r;
	if ((has_mask = sigmask_arg(mask, size, &m)) < 0)
		return has_mask;
	uint64_t old = has_mask ? signal_mask_swap(m) : 0;
	r = poll_wait(fds, n, deadline);
	if (has_mask)
		signal_mask_restore(old, r);
	return r;
}

/* select's three bit sets, over a pollfd array on the kernel heap. */
static long select_wait(long n, uint64_t *rs, uint64_t *ws, uint64_t *es, uint64_t deadline)
{
	if (n < 0 || n > fd_limit())
		return -EINVAL;
	size_t words = ((size_t)n + 63) / 64;
	uint64_t *sets[3] = { rs, ws, es };
	for (int s = 0; s < 3; s++)
		if (sets[s] && !user_ok(sets[s], words * 8))
			return -EFAULT;
	static const int16_t want[3] = { POLLIN | POLLRDNORM | POLLHUP | POLLERR, POLLOUT | POLLWRNORM | POLLERR, POLLPRI };
	struct pollfd_k *p = kalloc((size_t)(n ? n : 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	unsigned long count = 0;
	long r = 0;
	for (long fd = 0; fd < n; fd++) {
		int16_t ev = 0;
		for (int s = 0; s < 3; s++)
			if (sets[s] && (sets[s][fd / 64] >> (fd % 64) & 1))
				ev |= want[s];
		if (!ev)
			continue;
		if (!fd_get(fd)) {
			r = -EBADF;
			break;
		}
		p[count++] = (struct pollfd_k){ (int32_t)fd, ev, 0 };
	}
	if (!r)
		r = poll_wait(p, count, deadline);
	if (r >= 0) {
		for (int s = 0; s < 3; s++)
			if (sets[s])
				memset(sets[s], 0, words * 8);
		r = 0;
		for (unsigned long i = 0; i < count; i++)
			for (int s = 0; s < 3; s++)
				if (sets[s] && (p[i].revents & want[s] & p[i].events)) {
					sets[s][p[i].fd / 64] |= 1ull << (p[i].fd % 64);
					r++;
				}
	}
	kfree(p, (size_t)(n ? n : 1) * sizeof *p);
	return r;
}

/* select's timeout is a timeval, and Linux writes back what is left of it. */
long sys_select(long n, uint64_t *r, uint64_t *w, uint64_t *e, int64_t *tv)
{
	uint64_t deadline = 0;
	if (tv) {
		if (!user_ok(tv, 16))
			return -EFAULT;
		if (tv[1] >= 1000000)
			return -EINVAL;
		long r = deadline_in(tv[0], tv[1] * 1000, &deadline);
		if (r)
			return r;
	}
	long res = select_wait(n, r, w, e, deadline);
	if (tv && deadline > 1) {
		uint64_t now = clock_mono_ns(), left = deadline > now ? deadline - now : 0;
		tv[0] = (int64_t)(left / NSEC_PER_SEC), tv[1] = (int64_t)(left % NSEC_PER_SEC / 1000);
	}
	return res;
}

/* pselect6's sixth argument: { const sigset_t *set; size_t size; }. */
long sys_pselect6(long n, uint64_t *r, uint64_t *w, uint64_t *e, int64_t *ts, const uint64_t *sig)
{
	uint64_t deadline, m = 0;
	long res = deadline_ts(ts, &deadline), has_mask = 0;
	if (res)
		return res;
	if (sig) {
		if (!user_ok(sig, 16))
			return -EFAULT;
		if ((has_mask = sigmask_arg((const uint64_t *)sig[0], sig[1], &m)) < 0)
			return has_mask;
	}
	uint64_t old = has_mask ? signal_mask_swap(m) : 0;
	res = select_wait(n, r, w, e, deadline);
	if (has_mask)
		signal_mask_restore(old, res);
	return res;
}
