/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's own loopback (inet_sock.h): the port table, listening
 * sockets, connections between two of the guest's sockets, and datagrams
 * between them (inet.c puts them in the bound socket's queue); none of it
 * leaves the VM.  A connect to a loopback address reaches a listener of the
 * guest's if there is one on its port; else it goes to the broker (the
 * host's loopback, which only a rule inside 127.0.0.0/8 or ::1 opens) or is
 * refused.  An in-guest connection is two sockets whose sends go straight
 * into each other's receive ring; the connect completes at once (the
 * accepting end waits in the listener's queue, as Linux's does). */
#include <errno.h>
#include <string.h>
#include "ipc/stream.h"
#include "net/inet_sock.h"
#include "net/socket.h"

#define EPHEMERAL_LO 32768 /* Linux's ip_local_port_range */
#define EPHEMERAL_HI 60999
#define PENDING_MAX SOMAXCONN /* connections a listener holds unaccepted, at most */

static struct isock *bound;
static uint16_t next_ephemeral = EPHEMERAL_LO;

static const uint8_t mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };

struct inet_addr inet_unmapped(const struct inet_addr *a)
{
	struct inet_addr v = *a;
	if (a->family == AF_INET6 && !memcmp(a->a, mapped_prefix, 12)) {
		v.family = AF_INET;
		memmove(v.a, a->a + 12, 4);
		memset(v.a + 4, 0, 12);
	}
	return v;
}

static int is_any(const struct inet_addr *a)
{
	static const uint8_t zero[16];
	return !memcmp(a->a, zero, a->family == AF_INET ? 4 : 16);
}

int is_loopback(const struct inet_addr *a)
{
	static const uint8_t v6[16] = { [15] = 1 };
	struct inet_addr v = inet_unmapped(a);
	return v.family == AF_INET ? v.a[0] == 127 : !memcmp(v.a, v6, 16);
}

/* Whether a socket bound to `at` takes what is sent to `to` (a loopback
 * address): the same address, or the family's any (an IPv6 one also takes
 * IPv4, unless IPV6_V6ONLY). */
static int covers(const struct isock *s, const struct inet_addr *to)
{
	struct inet_addr at = inet_unmapped(&s->local), t = inet_unmapped(to);
	if (is_any(&at))
		return at.family == t.family || (s->family == AF_INET6 && !opt_int(s, 41, 26 /* IPV6_V6ONLY */));
	return at.family == t.family && !memcmp(at.a, t.a, 16);
}

/* Whether s at a and o share an address: in one family, the any address
 * or the same one; across families, an IPv6 any without IPV6_V6ONLY (it
 * takes IPv4 too). */
static int overlap(const struct isock *s, const struct inet_addr *a, const struct isock *o)
{
	struct inet_addr x = inet_unmapped(a), y = inet_unmapped(&o->local);
	if (x.family == y.family)
		return is_any(&x) || is_any(&y) || !memcmp(x.a, y.a, 16);
	const struct isock *six = x.family == AF_INET6 ? s : o;
	return is_any(x.family == AF_INET6 ? &x : &y) && !opt_int(six, 41, 26 /* IPV6_V6ONLY */);
}

/* Two bindings of one port that Linux refuses: overlapping addresses, unless
 * both asked for SO_REUSEADDR and neither listens. */
static int clash(const struct isock *s, const struct isock *o, const struct inet_addr *a)
{
	if (o == s || o->type != s->type || o->local.port != a->port || !overlap(s, a, o))
		return 0;
	return !(opt_int(s, SOL_SOCKET, SO_REUSEADDR) && opt_int(o, SOL_SOCKET, SO_REUSEADDR) && !o->listening);
}

static int in_use(const struct isock *s, const struct inet_addr *a)
{
	for (const struct isock *o = bound; o; o = o->next_bound)
		if (clash(s, o, a))
			return 1;
	return 0;
}

long loopback_bind(struct isock *s, const struct inet_addr *a)
{
	if (s->bound)
		return -EINVAL;
	if (!is_any(a) && !is_loopback(a))
		return -EADDRNOTAVAIL; /* the guest has no other address */
	struct inet_addr at = *a;
	if (!at.port) {
		int tries = EPHEMERAL_HI - EPHEMERAL_LO + 1;
		do {
			at.port = next_ephemeral++;
			if (next_ephemeral > EPHEMERAL_HI)
				next_ephemeral = EPHEMERAL_LO;
		} while (in_use(s, &at) && --tries);
		if (!tries)
			return -EADDRINUSE;
	} else if (in_use(s, &at)) {
		return -EADDRINUSE;
	}
	s->local = at;
	s->bound = 1;
	s->next_bound = bound, bound = s;
	return 0;
}

static void unbind(struct isock *s)
{
	for (struct isock **p = &bound; *p; p = &(*p)->next_bound)
		if (*p == s) {
			*p = s->next_bound;
			break;
		}
	s->bound = 0;
}

long loopback_bind_any(struct isock *s)
{
	struct inet_addr any = { (uint16_t)s->family, 0, { 0 } };
	return s->bound ? 0 : loopback_bind(s, &any);
}

long loopback_listen(struct isock *s, long backlog)
{
	if (s->state != I_NEW)
		return -EINVAL;
	long r = loopback_bind_any(s);
	if (r)
		return r;
	if (!s->listening) { /* a second listen only changes the backlog */
		for (struct isock *o = bound; o; o = o->next_bound)
			if (o != s && o->listening && o->type == s->type && clash(s, o, &s->local))
				return -EADDRINUSE;
	}
	s->listening = 1;
	s->backlog = backlog < 0 ? 0 : backlog > SOMAXCONN ? SOMAXCONN : (int)backlog;
	stream_changed(); /* connects waiting for room */
	return 0;
}

struct isock *loopback_find(int type, const struct inet_addr *to)
{
	for (struct isock *l = bound; l; l = l->next_bound)
		if (l->type == type && (l->listening || type != SOCK_STREAM) && l->local.port == to->port && covers(l, to))
			return l;
	return 0;
}

long loopback_connect(struct file *f, struct isock *s, struct isock *l, const struct inet_addr *to)
{
	/* A full queue: a blocking connect waits for room (Linux's retried
	 * SYN); a non-blocking one goes in beyond the backlog, up to a bound,
	 * as its connect could not say EAGAIN on Linux. */
	s->state = I_CONNECTING; /* a second connect meanwhile: EALREADY, or it waits */
	while (l->npending > l->backlog && !(f->flags & O_NONBLOCK)) {
		int r = stream_wait(0);
		if (r == -EINTR || !(l = loopback_find(SOCK_STREAM, to))) {
			s->state = I_NEW;
			stream_changed();
			return r == -EINTR ? -ERESTARTSYS : -ECONNREFUSED; /* it closed meanwhile */
		}
	}
	if (l->npending >= PENDING_MAX) {
		s->state = I_NEW;
		stream_changed();
		return -ECONNREFUSED;
	}
	struct isock *t = kalloc(sizeof *t);
	s->state = I_NEW;
	if (!t)
		return -ENOMEM;
	t->family = l->family, t->type = l->type;
	memcpy(t->opts, l->opts, sizeof t->opts); /* an accepted socket inherits its listener's options, as Linux's */
	t->nopts = l->nopts;
	int r;
	if ((r = rx_ready(s)) || (r = rx_ready(t))) {
		isock_free(t);
		return r;
	}
	if (!s->bound) {
		struct inet_addr from = { to->family, 0, { 0 } };
		memcpy(from.a, to->a, 16);
		if ((r = loopback_bind(s, &from))) {
			isock_free(t);
			return r;
		}
	}
	if (is_any(&s->local)) { /* bound to any: the connection's own end is at the address it reached */
		uint16_t port = s->local.port;
		s->local = *to;
		s->local.port = port;
	}
	t->local = *to, t->peer = s->local;
	s->peer = *to;
	s->state = t->state = I_OPEN;
	s->in_guest = t->in_guest = 1;
	s->mate = t, t->mate = s;
	s->reset = s->eof = s->rd_shut = s->wr_shut = s->error = 0;
	struct isock **p = &l->pending;
	while (*p)
		p = &(*p)->next_pending;
	*p = t;
	l->npending++;
	stream_changed();
	return 0;
}

long loopback_accept(struct file *f, struct isock *l, struct isock **out)
{
	while (!l->pending) {
		if (!l->listening)
			return -EINVAL;
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		if (stream_wait(0) == -EINTR)
			return -ERESTARTSYS;
	}
	struct isock *t = l->pending;
	l->pending = t->next_pending, l->npending--;
	t->next_pending = 0;
	stream_changed(); /* room in the queue */
	*out = t;
	return 0;
}

uint32_t loopback_room(struct isock *s)
{
	struct isock *m = s->mate;
	if (!m)
		return 0;
	/* the receiver's SO_RCVBUF bounds what waits for it (the size it asked
	 * for: Linux stores it doubled, for its own overhead) */
	int asked = opt_int(m, SOL_SOCKET, SO_RCVBUF) / 2;
	uint32_t cap = asked > 0 && (uint32_t)asked < RX_MAX ? (uint32_t)asked : RX_MAX;
	if (m->rx_size - m->rx_len < m->rx_size / 2 && m->rx_size < cap)
		rx_grow(m);
	cap = cap < m->rx_size ? cap : m->rx_size;
	return m->rx_len < cap ? cap - m->rx_len : 0;
}

void loopback_release(struct isock *s)
{
	if (s->mate) {
		s->mate->mate = 0;
		s->mate->eof = 1;
	}
	while (s->pending) { /* connected, never accepted: their connects' ends are reset */
		struct isock *t = s->pending;
		s->pending = t->next_pending;
		if (t->mate) {
			t->mate->reset = 1;
			t->mate->error = ECONNRESET;
		}
		isock_free(t);
	}
	s->listening = 0;
	if (s->bound)
		unbind(s);
	stream_changed();
}
