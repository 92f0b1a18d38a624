/* SPDX-License-Identifier: GPL-2.0-only */
/* epoll: an interest list of (fd, file, events, data), looked at in full on
 * every wait (a program's few dozen fds: cheap beside one exit to the host).
 * Level-triggered; EPOLLONESHOT disarms an entry once reported; EPOLLET is
 * taken as level-triggered (edge-triggered programs read until EAGAIN, so
 * they see the same events, at worst once more).  An entry whose fd was
 * closed (or now names another file) is dropped, as Linux drops it at the
 * file's last close. */
#include <errno.h>
#include <string.h>
#include "ipc/epoll.h"
#include "ipc/poll.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/signal.h"

#define EPOLL_CTL_ADD 1
#define EPOLL_CTL_DEL 2
#define EPOLL_CTL_MOD 3
#define EPOLLEXCLUSIVE (1u << 28)
#define EPOLLWAKEUP    (1u << 29)
#define EPOLLONESHOT   (1u << 30)
#define EPOLLET        (1u << 31)
#define CONTROL_BITS   (EPOLLEXCLUSIVE | EPOLLWAKEUP | EPOLLONESHOT | EPOLLET)

struct epoll_event_k { uint32_t events; uint64_t data; } __attribute__((packed));

struct epitem {
	int fd;
	struct file *f;    /* compared, dereferenced only while fd still names it */
	uint32_t events;
	uint64_t data;
	int disarmed;      /* EPOLLONESHOT, reported */
};

struct epoll {
	struct epitem *items;
	int n, cap;
	int next;          /* where the next wait starts: fairness when more are ready than fit */
};

static const struct stream_ops epoll_ops;

static int alive(const struct epitem *it)
{
	return fd_get(it->fd) == it->f;
}

static void drop_dead(struct epoll *ep)
{
	for (int i = 0; i < ep->n;)
		if (!alive(&ep->items[i]))
			ep->items[i] = ep->items[--ep->n];
		else
			i++;
}

static unsigned item_ready(struct epitem *it, uint64_t *wake)
{
	if (it->disarmed)
		return 0;
	return file_poll(it->f, wake) & (it->events | POLLERR | POLLHUP) & ~CONTROL_BITS;
}

static unsigned epoll_poll(struct file *f, uint64_t *wake)
{
	struct epoll *ep = f->priv;
	drop_dead(ep);
	for (int i = 0; i < ep->n; i++)
		if (ep->items[i].f != f && item_ready(&ep->items[i], wake))
			return POLLIN | POLLRDNORM;
	return 0;
}

static void epoll_release(struct file *f)
{
	struct epoll *ep = f->priv;
	kfree(ep->items, (size_t)ep->cap * sizeof *ep->items);
	kfree(ep, sizeof *ep);
}

static const struct stream_ops epoll_ops = {
	.name = "anon_inode:[eventpoll]", .poll = epoll_poll, .release = epoll_release,
};

long sys_epoll_create1(long flags)
{
	if (flags & ~(long)O_CLOEXEC)
		return -EINVAL;
	struct epoll *ep = kalloc(sizeof *ep);
	if (!ep)
		return -ENOMEM;
	long fd = stream_open(&epoll_ops, ep, O_RDONLY | (int)flags);
	if (fd < 0)
		kfree(ep, sizeof *ep);
	return fd;
}

static struct epitem *find(struct epoll *ep, long fd, struct file *f)
{
	for (int i = 0; i < ep->n; i++)
		if (ep->items[i].fd == fd && ep->items[i].f == f)
			return &ep->items[i];
	return 0;
}

long sys_epoll_ctl(long epfd, long op, long fd, void *event)
{
	struct file *epf = fd_get(epfd), *f = fd_get(fd);
	if (!epf || !f)
		return -EBADF;
	if (epf->kind != FILE_STREAM || epf->ops != &epoll_ops || fd == epfd)
		return -EINVAL;
	if (f->kind == FILE_FS || f->kind == FILE_SYNTH)
		return -EPERM; /* regular files and directories: always ready, Linux refuses them */
	struct epoll *ep = epf->priv;
	struct epoll_event_k ev = { 0, 0 };
	if (op != EPOLL_CTL_DEL) {
		if (!user_ok(event, sizeof ev))
			return -EFAULT;
		memcpy(&ev, event, sizeof ev);
	}
	drop_dead(ep);
	struct epitem *it = find(ep, fd, f);
	switch (op) {
	case EPOLL_CTL_ADD:
		if (it)
			return -EEXIST;
		if (ep->n == ep->cap) {
			int cap = ep->cap ? 2 * ep->cap : 16;
			struct epitem *items = kalloc((size_t)cap * sizeof *items);
			if (!items)
				return -ENOMEM;
			memcpy(items, ep->items, (size_t)ep->n * sizeof *items);
			kfree(ep->items, (size_t)ep->cap * sizeof *items);
			ep->items = items, ep->cap = cap;
		}
		ep->items[ep->n++] = (struct epitem){ (int)fd, f, ev.events, ev.data, 0 };
		break;
	case EPOLL_CTL_MOD:
		if (!it)
			return -ENOENT;
		it->events = ev.events, it->data = ev.data, it->disarmed = 0;
		break;
	case EPOLL_CTL_DEL:
		if (!it)
			return -ENOENT;
		*it = ep->items[--ep->n];
		break;
	default:
		return -EINVAL;
	}
	stream_changed(); /* a waiter on this epoll looks again */
	return 0;
}

/* One look: ready entries into out (at most max), from ep->next round. */
static long harvest(struct epoll *ep, struct file *self, struct epoll_event_k *out, long max, uint64_t *wake)
{
	drop_dead(ep);
	long got = 0;
	int start = ep->next;
	for (int k = 0; k < ep->n && got < max; k++) {
		int i = (start + k) % ep->n;
		struct epitem *it = &ep->items[i];
		unsigned ev = it->f == self ? 0 : item_ready(it, wake);
		if (!ev)
			continue;
		out[got].events = ev, out[got].data = it->data;
		got++;
		if (it->events & EPOLLONESHOT)
			it->disarmed = 1;
		ep->next = i + 1;
	}
	return got;
}

long sys_epoll_pwait(long epfd, void *events, long max, long timeout_ms, const int64_t *ts, int use_ts,
		     const uint64_t *mask, unsigned long size)
{
	struct file *f = fd_get(epfd);
	if (!f)
		return -EBADF;
	if (f->kind != FILE_STREAM || f->ops != &epoll_ops || max <= 0 || max > (1l << 20))
		return -EINVAL;
	if (!user_ok(events, (size_t)max * sizeof(struct epoll_event_k)))
		return -EFAULT;
	uint64_t deadline = 0, m = 0;
	long r = use_ts ? deadline_ts(ts, &deadline) : 0, has_mask;
	if (r)
		return r;
	if (!use_ts)
		deadline = deadline_ms((int)timeout_ms);
	if ((has_mask = sigmask_arg(mask, size, &m)) < 0)
		return has_mask;
	uint64_t old = has_mask ? signal_mask_swap(m) : 0;
	for (;;) {
		uint64_t wake = deadline;
		r = harvest(f->priv, f, events, max, &wake);
		if (r || (deadline && deadline <= clock_mono_ns()))
			break;
		if (stream_wait(wake) == -EINTR) {
			r = -EINTR;
			break;
		}
	}
	if (has_mask)
		signal_mask_restore(old, r);
	return r;
}
