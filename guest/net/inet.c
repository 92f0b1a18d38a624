/* SPDX-License-Identifier: GPL-2.0-only */
/* IPv4 and IPv6 sockets (inet.h) as requests to the network broker
 * (include/husk/net_stream.h).
 *
 * A stream socket's connect is CONNECT; the broker answers CONNECTED or
 * RESET (EACCES: a rule refused it).  Bytes go both ways as DATA under
 * credit: the broker sends no more than the socket's receive ring holds (its
 * receive ring), the socket no more than the broker's buffer less what it
 * has not yet written to the host.  Every message carries the sender's
 * credit; a CREDIT alone is sent when the program has read a quarter of
 * the ring since the last.  close is SHUTDOWN with both flags: the broker
 * writes what it holds, then closes.
 *
 * A datagram socket is a DNS client's: what it sends must go to port 53 of
 * 127.0.0.1 or ::1, where the kernel itself answers (net/dns.c): A and AAAA
 * questions become RESOLVE, the broker's RESOLVED the answer; "localhost"
 * is answered here, other types with no records. */
#include <errno.h>
#include <string.h>
#include "dev/net.h"
#include "ipc/pipe.h"
#include "net/dns.h"
#include "net/inet.h"
#include "net/inet_sock.h"
#include "net/socket.h"
#include "proc/signal.h"

#define IPPROTO_IP   0
#define IPPROTO_TCP  6
#define IPPROTO_UDP  17
#define IPPROTO_IPV6 41
#define DNS_PORT 53
#define QUERIES_MAX 32  /* a socket's questions in flight: beyond, one is lost, as over UDP */
#define ANSWERS_MAX 64  /* answers waiting to be read: beyond, one is lost */
#define ANSWER_MAX 1024

struct dgram {
	struct dgram *next;
	struct inet_addr from;
	size_t len;
	uint8_t b[];
};

struct query {
	struct query *next;
	uint32_t id;
	struct isock *s;           /* NULL once the socket closed */
	struct inet_addr to;       /* where it was sent: the answer's source */
	struct dns_query q;
	size_t len;
	uint8_t raw[];
};

static struct isock *conns;
static struct query *queries;
static uint32_t next_conn = 1, next_query = 1;
static uint8_t tx[HUSK_NET_PAYLOAD_MAX]; /* one message at a time: the kernel is not preempted */

static const struct stream_ops inet_ops;

/* --- messages ----------------------------------------------------------------- */

static struct husk_net_hdr about(struct isock *s, uint32_t op)
{
	s->fwd_told = s->fwd_cnt;
	return (struct husk_net_hdr){ .op = op, .conn = s->conn, .buf_alloc = s->rx_size, .fwd_cnt = s->fwd_cnt };
}

static struct isock *find(uint32_t conn)
{
	for (struct isock *s = conns; s; s = s->next)
		if (s->conn == conn)
			return s;
	return 0;
}

static void unlink_conn(struct isock *s)
{
	for (struct isock **p = &conns; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	s->next = 0;
}

/* The connection is gone (RESET, or the broker ended): err once, then EOF. */
static void gone(struct isock *s, int err)
{
	unlink_conn(s);
	if (s->state == I_CONNECTING)
		s->state = I_CLOSED;
	else
		s->reset = 1;
	s->error = err;
}

/* --- the receive ring ----------------------------------------------------------- */

int rx_ready(struct isock *s)
{
	if (s->rx)
		return 0;
	if (!(s->rx = kalloc(RX_MIN)))
		return -ENOMEM;
	s->rx_size = RX_MIN;
	return 0;
}

/* The ring twice as large, its bytes from its start. */
void rx_grow(struct isock *s)
{
	uint32_t size = s->rx_size * 2, first = s->rx_len < s->rx_size - s->rx_head ? s->rx_len : s->rx_size - s->rx_head;
	uint8_t *rx = size <= RX_MAX ? kalloc(size) : 0;
	if (!rx)
		return; /* it stays as it is */
	memcpy(rx, s->rx + s->rx_head, first);
	memcpy(rx + first, s->rx, s->rx_len - first);
	kfree(s->rx, s->rx_size);
	s->rx = rx, s->rx_size = size, s->rx_head = 0;
}

void rx_put(struct isock *s, const uint8_t *p, uint32_t len)
{
	if (len > s->rx_size - s->rx_len)
		len = s->rx_size - s->rx_len; /* beyond the credit given: a broken broker's (a mate never sends more) */
	uint32_t at = (s->rx_head + s->rx_len) % s->rx_size, first = len < s->rx_size - at ? len : s->rx_size - at;
	memcpy(s->rx + at, p, first);
	memcpy(s->rx, p + first, len - first);
	s->rx_len += len;
	if (s->rx_len > s->rx_size / 2 && s->rx_size < RX_MAX)
		rx_grow(s); /* the broker learns it with the next credit */
}

static void answer_add(struct isock *s, const struct inet_addr *from, const uint8_t *b, size_t len)
{
	struct dgram *d = s->nanswers < ANSWERS_MAX ? kalloc(sizeof *d + len) : 0;
	if (!d)
		return; /* lost, as a datagram may be */
	d->from = *from;
	d->len = len;
	memcpy(d->b, b, len);
	*s->answers_tail = d;
	s->answers_tail = &d->next;
	s->nanswers++;
	stream_changed();
}

static void query_done(struct query *q, int rcode, const struct husk_net_addr *a, int n)
{
	for (struct query **p = &queries; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	if (q->s) {
		uint8_t out[ANSWER_MAX];
		size_t len = dns_answer(&q->q, q->raw, rcode, a, n, out, sizeof out);
		if (!len)
			len = dns_error(q->raw, q->len, HUSK_NET_SERVFAIL, out, sizeof out);
		answer_add(q->s, &q->to, out, len);
		q->s->nqueries--;
	}
	kfree(q, sizeof *q + q->len);
}

static int errno_ok(int e)
{
	return e > 0 && e < 134 ? e : ECONNRESET;
}

void inet_receive(const struct husk_net_hdr *h, const uint8_t *p)
{
	if (h->op == HUSK_NET_RESOLVED) {
		for (struct query *q = queries; q; q = q->next)
			if (q->id == h->conn) {
				int n = (int)(h->len / sizeof(struct husk_net_addr));
				query_done(q, h->error & 15, (const struct husk_net_addr *)p, n > HUSK_NET_RESOLVED_MAX ? 0 : n);
				break;
			}
		return;
	}
	if (h->op == HUSK_NET_RESET && h->conn == HUSK_NET_ALL) { /* the broker is gone */
		while (conns)
			gone(conns, ECONNRESET);
		while (queries)
			query_done(queries, HUSK_NET_SERVFAIL, 0, 0);
		stream_changed();
		return;
	}
	struct isock *s = find(h->conn);
	if (!s)
		return; /* closed meanwhile */
	s->peer_buf = h->buf_alloc, s->peer_fwd = h->fwd_cnt;
	switch (h->op) {
	case HUSK_NET_CONNECTED:
		if (s->state == I_CONNECTING) {
			s->state = I_OPEN;
			s->local = (struct inet_addr){ h->family == AF_INET6 ? AF_INET6 : AF_INET, h->port, { 0 } };
			memcpy(s->local.a, h->addr, 16);
		}
		break;
	case HUSK_NET_RESET:
		gone(s, errno_ok(h->error));
		break;
	case HUSK_NET_SHUTDOWN:
		if (h->flags & HUSK_NET_SHUT_WR)
			s->eof = 1;
		break;
	case HUSK_NET_DATA:
		if (s->state == I_OPEN && !s->eof)
			rx_put(s, p, h->len);
		break;
	}
	stream_changed();
}

/* --- addresses ---------------------------------------------------------------- */

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* A sockaddr the program gave: AF_INET, AF_INET6 (an AF_INET6 socket's
 * only), or AF_UNSPEC (family 0). */
static long addr_in(const struct isock *s, const void *addr, long len, struct inet_addr *a)
{
	*a = (struct inet_addr){ 0 };
	if (len < 2 || len > 128)
		return -EINVAL;
	if (!user_ok(addr, (size_t)len))
		return -EFAULT;
	const uint8_t *b = addr;
	uint16_t family;
	memcpy(&family, b, 2);
	if (family == AF_UNSPEC)
		return 0;
	if (family != s->family)
		return -EAFNOSUPPORT;
	if (len < (family == AF_INET ? 16 : 24))
		return -EINVAL;
	a->family = family;
	a->port = be16(b + 2);
	memcpy(a->a, b + (family == AF_INET ? 4 : 8), family == AF_INET ? 4 : 16);
	return 0;
}

/* An address as the socket's family gives it (an IPv4 one to an AF_INET6
 * socket: mapped). */
/* An address as the socket's family gives it (an IPv4 one to an AF_INET6
 * socket: mapped), into b: its length. */
static size_t name_bytes(const struct isock *s, const struct inet_addr *a, uint8_t b[28])
{
	uint16_t family = (uint16_t)s->family;
	memset(b, 0, 28);
	memcpy(b, &family, 2);
	b[2] = (uint8_t)(a->port >> 8), b[3] = (uint8_t)a->port;
	if (s->family == AF_INET) {
		memcpy(b + 4, a->a, 4);
		return 16;
	}
	if (a->family == AF_INET) {
		b[18] = b[19] = 0xff;
		memcpy(b + 20, a->a, 4);
	} else {
		memcpy(b + 8, a->a, 16);
	}
	return 28;
}

static long name_out(const struct isock *s, const struct inet_addr *a, void *uaddr, int *alen)
{
	uint8_t b[28];
	return socket_name_out(b, name_bytes(s, a, b), uaddr, alen);
}

/* Where the guest's DNS server listens: 127.0.0.1:53, [::1]:53, or
 * [::ffff:127.0.0.1]:53. */
static int is_dns_server(const struct inet_addr *a)
{
	static const uint8_t v4[4] = { 127, 0, 0, 1 }, v6[16] = { [15] = 1 };
	struct inet_addr v = inet_unmapped(a);
	return a->port == DNS_PORT && (v.family == AF_INET ? !memcmp(v.a, v4, 4) : !memcmp(v.a, v6, 16));
}

/* --- the file ------------------------------------------------------------------ */

static int nonblocking(const struct file *f, long flags)
{
	return (f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* A call's deadline from SO_RCVTIMEO or SO_SNDTIMEO (a struct timeval;
 * 0: none), taken when the call starts. */
static uint64_t call_deadline(struct file *f, int name)
{
	const struct isock *s = f->priv;
	uint64_t until = 0;
	for (int i = 0; i < s->nopts; i++)
		if (s->opts[i].level == SOL_SOCKET && s->opts[i].name == name) {
			int64_t tv[2];
			memcpy(tv, s->opts[i].v, sizeof tv);
			if (deadline_in(tv[0], tv[1] * 1000, &until) || until == 1)
				until = 0; /* a bad or zero timeout: none, as Linux's 0 */
		}
	return until;
}

/* Waits for a change until the call's deadline (0: none): 0, -EAGAIN
 * (non-blocking, or the deadline passed, as Linux's socket timeouts), or
 * -ERESTARTSYS (-EINTR with a timeout: such a call is not restarted). */
static int wait_change(struct file *f, long flags, uint64_t until)
{
	if (nonblocking(f, flags))
		return -EAGAIN;
	int r = stream_wait(until);
	return r == -EINTR ? (until ? -EINTR : -ERESTARTSYS) : r == -ETIMEDOUT ? -EAGAIN : 0;
}

static void credit_if_due(struct isock *s)
{
	if (s->in_guest) {
		stream_changed(); /* the mate may have waited for room */
		return;
	}
	if (s->state == I_OPEN && !s->reset && s->fwd_cnt - s->fwd_told >= s->rx_size / 4) {
		struct husk_net_hdr h = about(s, HUSK_NET_CREDIT);
		net_send(&h, 0, 0);
	}
}

static size_t rx_take(struct isock *s, char *buf, size_t len, int peek)
{
	size_t n = len < s->rx_len ? len : s->rx_len, first = n < s->rx_size - s->rx_head ? n : s->rx_size - s->rx_head;
	memcpy(buf, s->rx + s->rx_head, first);
	memcpy(buf + first, s->rx, n - first);
	if (!peek) {
		s->rx_head = (uint32_t)((s->rx_head + n) % s->rx_size);
		s->rx_len -= (uint32_t)n;
		s->fwd_cnt += (uint32_t)n;
		credit_if_due(s);
	}
	return n;
}

static long stream_recv(struct file *f, char *buf, size_t len, long flags)
{
	struct isock *s = f->priv;
	size_t got = 0;
	uint64_t until = call_deadline(f, SO_RCVTIMEO);
	int peek = (flags & MSG_PEEK) != 0;
	if (!len)
		return 0;
	for (;;) {
		if (s->rx_len && !s->rd_shut) {
			got += rx_take(s, buf + got, len - got, peek);
			if (got == len || peek || !(flags & MSG_WAITALL))
				return (long)got;
			continue;
		}
		if (s->reset && s->error && !got) {
			int e = s->error;
			s->error = 0;
			return -e;
		}
		if (s->eof || s->rd_shut || s->reset || s->state == I_CLOSED)
			return (long)got;
		if (s->state == I_NEW)
			return -ENOTCONN;
		int r = wait_change(f, flags, until);
		if (r)
			return got ? (long)got : r;
	}
}

/* What a send may put out now: room in the mate's ring, or the broker's
 * credit (0 when its claims do not add up). */
static uint32_t credit_of(struct isock *s)
{
	if (s->in_guest)
		return loopback_room(s);
	uint32_t credit = s->peer_buf - (s->tx_cnt - s->peer_fwd);
	return credit <= s->peer_buf ? credit : 0;
}

static long stream_send(struct file *f, const char *buf, size_t len, long flags)
{
	struct isock *s = f->priv;
	size_t sent = 0;
	uint64_t until = call_deadline(f, SO_SNDTIMEO);
	for (;;) {
		if (s->state == I_CONNECTING) {
			int r = wait_change(f, flags, until);
			if (r)
				return r;
			continue;
		}
		if (s->reset && s->error) {
			int e = s->error;
			s->error = 0;
			return sent ? (long)sent : -e;
		}
		if (s->state != I_OPEN || s->reset || s->wr_shut || (s->in_guest && !s->mate)) {
			if (sent)
				return (long)sent;
			if (!(flags & MSG_NOSIGNAL))
				signal_raise_thread(SIGPIPE);
			return -EPIPE;
		}
		if (sent == len)
			return (long)sent;
		uint32_t credit = credit_of(s);
		if (!credit) {
			int r = wait_change(f, flags, until);
			if (r)
				return sent ? (long)sent : r;
			continue;
		}
		size_t k = len - sent;
		k = k < credit ? k : credit;
		if (s->in_guest) { /* straight into the mate's ring */
			rx_put(s->mate, (const uint8_t *)buf + sent, (uint32_t)k);
			sent += k;
			stream_changed();
			continue;
		}
		k = k < sizeof tx ? k : sizeof tx;
		memcpy(tx, buf + sent, k);
		struct husk_net_hdr h = about(s, HUSK_NET_DATA);
		if (net_send(&h, tx, k)) {
			gone(s, ECONNRESET);
			continue;
		}
		s->tx_cnt += (uint32_t)k;
		sent += k;
	}
}

static long dgram_recv(struct file *f, char *buf, size_t len, long flags, struct inet_addr *from, size_t *trunc)
{
	struct isock *s = f->priv;
	uint64_t until = call_deadline(f, SO_RCVTIMEO);
	while (!s->answers) {
		if (s->rd_shut)
			return 0;
		int r = wait_change(f, flags, until);
		if (r)
			return r;
	}
	struct dgram *d = s->answers;
	size_t n = len < d->len ? len : d->len;
	memcpy(buf, d->b, n);
	*trunc = d->len - n;
	if (from)
		*from = d->from;
	if (!(flags & MSG_PEEK)) {
		s->answers = d->next;
		if (!s->answers)
			s->answers_tail = &s->answers;
		s->nanswers--;
		kfree(d, sizeof *d + d->len);
	}
	return (long)n;
}

static int is_localhost(const char *name)
{
	static const char l[] = "localhost";
	size_t n = strlen(name);
	if (n && name[n - 1] == '.')
		n--;
	if (n != sizeof l - 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((name[i] | 0x20) != l[i])
			return 0;
	return 1;
}

/* A question to the guest's DNS server: answered now, or asked of the
 * broker.  Whatever happens, the datagram was sent (len). */
static long dns_ask(struct isock *s, const struct inet_addr *to, const uint8_t *buf, size_t len)
{
	struct dns_query dq;
	uint8_t out[ANSWER_MAX];
	if (dns_query_parse(buf, len, &dq)) {
		size_t n = dns_error(buf, len, DNS_RCODE_FORMERR, out, sizeof out);
		answer_add(s, to, out, n);
		return (long)len;
	}
	if (is_localhost(dq.name) || (dq.qtype != DNS_TYPE_A && dq.qtype != DNS_TYPE_AAAA)) {
		struct husk_net_addr lo[2] = { { AF_INET, 0, { 127, 0, 0, 1 } }, { AF_INET6, 0, { [15] = 1 } } };
		size_t n = dns_answer(&dq, buf, 0, lo, is_localhost(dq.name) ? 2 : 0, out, sizeof out);
		answer_add(s, to, out, n);
		return (long)len;
	}
	if (!net_up()) { /* --net-loopback: no name but localhost */
		size_t n = dns_answer(&dq, buf, HUSK_NET_NXDOMAIN, 0, 0, out, sizeof out);
		answer_add(s, to, out, n);
		return (long)len;
	}
	if (s->nqueries >= QUERIES_MAX || len > 4096)
		return (long)len; /* lost */
	struct query *q = kalloc(sizeof *q + len);
	if (!q)
		return -ENOMEM;
	*q = (struct query){ .id = next_query++, .s = s, .to = *to, .q = dq, .len = len };
	memcpy(q->raw, buf, len);
	q->next = queries, queries = q;
	s->nqueries++;
	struct husk_net_hdr h = { .op = HUSK_NET_RESOLVE, .conn = q->id,
				  .family = dq.qtype == DNS_TYPE_A ? AF_INET : AF_INET6 };
	if (net_send(&h, dq.name, strlen(dq.name)))
		query_done(q, HUSK_NET_SERVFAIL, 0, 0);
	return (long)len;
}

static long dgram_send(struct file *f, const char *buf, size_t len, const struct inet_addr *dest)
{
	struct isock *s = f->priv;
	const struct inet_addr *to = dest && dest->family ? dest : &s->peer;
	if (s->wr_shut)
		return -EPIPE;
	if (!to->family)
		return -EDESTADDRREQ;
	if (len > 65507)
		return -EMSGSIZE;
	loopback_bind_any(s); /* a datagram socket's port, when it sends before binding */
	struct isock *d = is_loopback(to) ? loopback_find(SOCK_DGRAM, to) : 0;
	if (d) { /* a datagram socket of the guest's own bound there */
		struct inet_addr from = *to;
		from.port = s->local.port;
		answer_add(d, &from, (const uint8_t *)buf, len);
		return (long)len;
	}
	if (is_dns_server(to))
		return dns_ask(s, to, (const uint8_t *)buf, len);
	if (is_loopback(to))
		return (long)len; /* no one there: lost, as over UDP */
	return -EACCES; /* beyond the guest, only its DNS server answers datagrams */
}

static long inet_read(struct file *f, void *buf, size_t len)
{
	struct isock *s = f->priv;
	size_t trunc;
	return s->type == SOCK_STREAM ? stream_recv(f, buf, len, 0) : dgram_recv(f, buf, len, 0, 0, &trunc);
}

static long inet_write(struct file *f, const void *buf, size_t len)
{
	struct isock *s = f->priv;
	return s->type == SOCK_STREAM ? stream_send(f, buf, len, 0) : dgram_send(f, buf, len, 0);
}

/* As Linux's tcp_poll and udp_poll. */
static unsigned inet_poll(struct file *f, uint64_t *deadline)
{
	(void)deadline;
	struct isock *s = f->priv;
	if (s->type == SOCK_DGRAM)
		return POLLOUT | POLLWRNORM | (s->answers || s->rd_shut ? POLLIN | POLLRDNORM : 0);
	unsigned ev = s->error ? POLLERR : 0;
	if (s->listening)
		return s->pending ? POLLIN | POLLRDNORM : 0;
	switch (s->state) {
	case I_NEW:
		return POLLOUT | POLLWRNORM | POLLHUP;
	case I_CONNECTING:
		return 0;
	case I_CLOSED:
		return ev | POLLIN | POLLRDNORM | POLLRDHUP | POLLOUT | POLLWRNORM | POLLHUP;
	}
	int rd_done = s->eof || s->rd_shut || s->reset;
	if (s->rx_len || rd_done)
		ev |= POLLIN | POLLRDNORM;
	if (rd_done)
		ev |= POLLRDHUP;
	if (s->reset || (rd_done && (s->wr_shut || (s->in_guest && !s->mate))))
		ev |= POLLHUP;
	if (s->reset || s->wr_shut || (s->in_guest && !s->mate) || credit_of(s))
		ev |= POLLOUT | POLLWRNORM;
	return ev;
}

void isock_free(struct isock *s)
{
	if (s->type == SOCK_STREAM && !s->in_guest &&
	    (s->state == I_CONNECTING || (s->state == I_OPEN && !s->reset))) {
		struct husk_net_hdr h = about(s, HUSK_NET_SHUTDOWN);
		h.flags = HUSK_NET_SHUT_WR | HUSK_NET_SHUT_RD;
		net_send(&h, 0, 0);
	}
	unlink_conn(s);
	loopback_release(s);
	for (struct query *q = queries; q; q = q->next)
		if (q->s == s)
			q->s = 0;
	while (s->answers) {
		struct dgram *d = s->answers;
		s->answers = d->next;
		kfree(d, sizeof *d + d->len);
	}
	if (s->rx)
		kfree(s->rx, s->rx_size);
	kfree(s, sizeof *s);
}

static void inet_release(struct file *f)
{
	isock_free(f->priv);
}

/* --- the calls ----------------------------------------------------------------- */

static struct isock *sock_of(long fd, struct file **f, long *err)
{
	*f = socket_file(fd, err);
	return *f ? (*f)->priv : 0;
}

/* bind's and connect's start: the socket and the address given. */
static struct isock *sock_and_addr(long fd, const void *addr, long len, struct file **f, struct inet_addr *a,
				   long *err)
{
	struct isock *s = sock_of(fd, f, err);
	if (s && (*err = addr_in(s, addr, len, a)))
		s = 0;
	return s;
}

static long inet_bind(long fd, const void *addr, long len)
{
	struct file *f;
	long err;
	struct inet_addr a;
	struct isock *s = sock_and_addr(fd, addr, len, &f, &a, &err);
	if (!s)
		return err;
	if (!a.family)
		return -EAFNOSUPPORT;
	if (s->state != I_NEW)
		return -EINVAL;
	return loopback_bind(s, &a);
}

static long inet_connect(long fd, const void *addr, long len)
{
	struct file *f;
	long err;
	struct inet_addr a;
	struct isock *s = sock_and_addr(fd, addr, len, &f, &a, &err);
	if (!s)
		return err;
	if (s->type == SOCK_DGRAM) {
		s->peer = a; /* AF_UNSPEC: none */
		if (a.family)
			loopback_bind_any(s);
		return 0;
	}
	if (!a.family)
		return -EAFNOSUPPORT;
	if (s->listening)
		return -EINVAL;
	switch (s->state) {
	case I_OPEN:
		return -EISCONN;
	case I_CONNECTING:
		if (nonblocking(f, 0))
			return -EALREADY;
		break;
	case I_CLOSED:
		if (s->error) { /* a failed non-blocking connect's, not yet taken */
			int e = s->error;
			s->error = 0;
			return -e;
		}
		__attribute__((fallthrough)); /* connect again */
	case I_NEW:
		if (!a.port)
			return -ECONNREFUSED;
		if (is_loopback(&a)) { /* a server of the guest's own first */
			struct isock *l = loopback_find(SOCK_STREAM, &a);
			if (l) {
				/* connected at once; but a non-blocking TCP connect on Linux says
				 * EINPROGRESS even on loopback, and programs expect it */
				int nb = nonblocking(f, 0);
				f->refs++; /* closed by another thread meanwhile: s lives on until this returns */
				err = loopback_connect(f, s, l, &a);
				file_put(f);
				return !err && nb ? -EINPROGRESS : err;
			}
			if (!net_up())
				return -ECONNREFUSED;
		} else if (!net_up()) {
			return -ENETUNREACH; /* --net-loopback: nothing beyond the guest */
		}
		if ((err = rx_ready(s)))
			return err;
		s->conn = next_conn++;
		if (next_conn == HUSK_NET_ALL)
			next_conn = 1;
		s->peer = a;
		s->rx_head = s->rx_len = s->fwd_cnt = s->peer_buf = s->peer_fwd = s->tx_cnt = 0;
		s->reset = s->eof = s->rd_shut = s->wr_shut = 0;
		struct husk_net_hdr h = about(s, HUSK_NET_CONNECT);
		h.family = a.family, h.port = a.port;
		memcpy(h.addr, a.a, 16);
		if (net_send(&h, 0, 0))
			return -ENETUNREACH;
		s->next = conns, conns = s;
		s->state = I_CONNECTING;
		if (nonblocking(f, 0))
			return -EINPROGRESS;
	}
	f->refs++; /* closed by another thread meanwhile: s lives on until this returns */
	uint64_t until = call_deadline(f, SO_SNDTIMEO);
	while (s->state == I_CONNECTING && !(err = wait_change(f, 0, until)))
		;
	if (err == -EAGAIN)
		err = -EINPROGRESS; /* SO_SNDTIMEO passed: the connect goes on, as Linux's */
	if (!err && s->state != I_OPEN) { /* I_NEW: another thread's connect to the guest's loopback failed */
		err = s->error ? -s->error : -ECONNREFUSED;
		s->error = 0;
	}
	file_put(f);
	return err;
}

static long inet_listen(long fd, long backlog)
{
	struct file *f;
	long err;
	struct isock *s = sock_of(fd, &f, &err);
	if (!s)
		return err;
	if (s->type != SOCK_STREAM)
		return -EOPNOTSUPP;
	return loopback_listen(s, backlog); /* only the guest's own processes can reach it */
}

static long inet_accept4(long fd, void *addr, int *alen, long flags)
{
	struct file *f;
	long err;
	struct isock *s = sock_of(fd, &f, &err), *t;
	if (!s)
		return err;
	if (flags & ~(long)(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (!s->listening)
		return -EINVAL;
	if (addr && !user_ok(alen, sizeof *alen))
		return -EFAULT;
	f->refs++;
	err = loopback_accept(f, s, &t);
	file_put(f);
	if (err)
		return err;
	long nfd = stream_open(&inet_ops, t, O_RDWR | (int)(flags & (SOCK_NONBLOCK | SOCK_CLOEXEC)));
	if (nfd < 0) {
		isock_free(t);
		return nfd;
	}
	if (addr && (err = name_out(t, &t->peer, addr, alen))) {
		fd_close(nfd);
		return err;
	}
	return nfd;
}

/* One send or receive on a socket held for the call (buf: checked, the
 * program's or the kernel's).  A stream ignores a destination, as Linux's
 * TCP does; *from: a datagram's sender (family 0 for a stream's), *trunc:
 * its bytes that did not fit. */
static long send_held(struct file *f, const void *buf, size_t len, long flags, const struct inet_addr *to)
{
	struct isock *s = f->priv;
	return s->type == SOCK_STREAM ? stream_send(f, buf, len, flags) : dgram_send(f, buf, len, to);
}

static long recv_held(struct file *f, void *buf, size_t len, long flags, struct inet_addr *from, size_t *trunc)
{
	struct isock *s = f->priv;
	*from = (struct inet_addr){ 0 };
	*trunc = 0;
	if (flags & MSG_OOB)
		return -EINVAL;
	return s->type == SOCK_STREAM ? stream_recv(f, buf, len, flags) : dgram_recv(f, buf, len, flags, from, trunc);
}

/* The socket behind fd, held (file_put when done), and a destination the
 * program gave (none for a stream). */
static struct file *hold_with_dest(long fd, const void *addr, long alen, struct inet_addr *to, long *err)
{
	struct file *f;
	struct isock *s = sock_of(fd, &f, err);
	*to = (struct inet_addr){ 0 };
	if (!s)
		return 0;
	if (addr && alen && s->type != SOCK_STREAM && (*err = addr_in(s, addr, alen, to)))
		return 0;
	f->refs++;
	return f;
}

static long inet_sendto(long fd, const void *buf, size_t len, long flags, const void *addr, long alen)
{
	struct inet_addr to;
	long err;
	if (len && !user_ok(buf, len))
		return socket_file(fd, &err) ? -EFAULT : err;
	struct file *f = hold_with_dest(fd, addr, alen, &to, &err);
	if (!f)
		return err;
	err = send_held(f, buf, len, flags, &to);
	file_put(f);
	return err;
}

static long inet_recvfrom(long fd, void *buf, size_t len, long flags, void *addr, int *alen)
{
	struct inet_addr from;
	size_t trunc;
	long err;
	if (len && !user_ok(buf, len))
		return socket_file(fd, &err) ? -EFAULT : err;
	struct file *f = hold_with_dest(fd, 0, 0, &from, &err);
	if (!f)
		return err;
	long r = recv_held(f, buf, len, flags, &from, &trunc);
	if (r >= 0 && addr) /* a stream's sender: length 0, as Linux */
		err = from.family ? name_out(f->priv, &from, addr, alen) : socket_name_out("", 0, addr, alen);
	file_put(f);
	if (r >= 0 && err)
		return err;
	return r >= 0 && (flags & MSG_TRUNC) ? r + (long)trunc : r;
}

/* sendmsg/recvmsg: the iovecs gathered through a kernel buffer, so a
 * datagram stays one; no control messages. */
static long msg_io(long fd, struct msghdr_k *m, long flags, int sending)
{
	size_t total;
	struct inet_addr peer;
	long r = socket_iov_total(m, RX_MAX, &total);
	if (r)
		return r;
	struct file *f = hold_with_dest(fd, sending ? m->name : 0, sending ? m->namelen : 0, &peer, &r);
	if (!f)
		return r;
	char *tmp = kalloc(total ? total : 1);
	if (!tmp) {
		file_put(f);
		return -ENOMEM;
	}
	if (sending) {
		socket_iov_copy(m, tmp, total, 0);
		r = send_held(f, tmp, total, flags, &peer);
	} else {
		size_t trunc;
		r = recv_held(f, tmp, total, flags, &peer, &trunc);
		if (r >= 0) {
			socket_iov_copy(m, tmp, (size_t)r, 1);
			m->flags = trunc ? MSG_TRUNC : 0;
			m->controllen = 0;
			if (m->name) { /* a stream's sender: length 0, as Linux */
				uint8_t b[28];
				size_t n = peer.family ? name_bytes(f->priv, &peer, b) : 0;
				long e = socket_name_copy(b, n, m->name, m->namelen);
				if (e)
					r = e;
				else
					m->namelen = (uint32_t)n;
			}
			if (r >= 0 && (flags & MSG_TRUNC))
				r += (long)trunc;
		}
	}
	kfree(tmp, total ? total : 1);
	file_put(f);
	return r;
}

static long inet_sendmsg(long fd, struct msghdr_k *m, long flags)
{
	return msg_io(fd, m, flags, 1);
}

static long inet_recvmsg(long fd, struct msghdr_k *m, long flags)
{
	return msg_io(fd, m, flags, 0);
}

static long inet_shutdown(long fd, long how)
{
	struct file *f;
	long err;
	struct isock *s = sock_of(fd, &f, &err);
	if (!s)
		return err;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	if (s->type == SOCK_STREAM && s->state != I_OPEN)
		return -ENOTCONN;
	if (how != SHUT_WR)
		s->rd_shut = 1;
	if (how != SHUT_RD && !s->wr_shut) {
		s->wr_shut = 1;
		if (s->in_guest && s->mate)
			s->mate->eof = 1;
		else if (s->type == SOCK_STREAM && !s->reset && !s->in_guest) {
			struct husk_net_hdr h = about(s, HUSK_NET_SHUTDOWN);
			h.flags = HUSK_NET_SHUT_WR;
			net_send(&h, 0, 0);
		}
	}
	stream_changed();
	return 0;
}

static long inet_getname(long fd, void *addr, int *alen, int peer)
{
	struct file *f;
	long err;
	struct isock *s = sock_of(fd, &f, &err);
	if (!s)
		return err;
	if (!addr)
		return -EFAULT;
	if (peer && (s->type == SOCK_STREAM ? s->state != I_OPEN : !s->peer.family))
		return -ENOTCONN;
	struct inet_addr any = { (uint16_t)s->family, 0, { 0 } };
	const struct inet_addr *a = peer ? &s->peer : s->local.family ? &s->local : &any;
	return name_out(s, a, addr, alen);
}

/* The options a program may set: kept and given back, none of them changes
 * what the broker does on the host.  size 0: an int. */
static const struct { int level, name, def, size; } known_opts[] = {
	{ SOL_SOCKET, SO_REUSEADDR, 0, 0 }, { SOL_SOCKET, SO_KEEPALIVE, 0, 0 }, { SOL_SOCKET, SO_BROADCAST, 0, 0 },
	{ SOL_SOCKET, SO_REUSEPORT, 0, 0 }, { SOL_SOCKET, SO_SNDBUF, SOCKET_BUFFER, 0 },
	{ SOL_SOCKET, SO_RCVBUF, SOCKET_BUFFER, 0 }, { SOL_SOCKET, 10 /* SO_OOBINLINE */, 0, 0 },
	{ SOL_SOCKET, 12 /* SO_PRIORITY */, 0, 0 }, { SOL_SOCKET, SO_LINGER, 0, 8 },
	{ SOL_SOCKET, SO_RCVTIMEO, 0, 16 }, { SOL_SOCKET, SO_SNDTIMEO, 0, 16 },
	{ IPPROTO_TCP, 1 /* TCP_NODELAY */, 0, 0 }, { IPPROTO_TCP, 2 /* TCP_MAXSEG */, 1448, 0 },
	{ IPPROTO_TCP, 4 /* TCP_KEEPIDLE */, 7200, 0 }, { IPPROTO_TCP, 5 /* TCP_KEEPINTVL */, 75, 0 },
	{ IPPROTO_TCP, 6 /* TCP_KEEPCNT */, 9, 0 }, { IPPROTO_TCP, 12 /* TCP_QUICKACK */, 1, 0 },
	{ IPPROTO_TCP, 18 /* TCP_USER_TIMEOUT */, 0, 0 }, { IPPROTO_TCP, 23 /* TCP_FASTOPEN */, 0, 0 },
	{ IPPROTO_IP, 1 /* IP_TOS */, 0, 0 }, { IPPROTO_IP, 2 /* IP_TTL */, 64, 0 },
	{ IPPROTO_IP, 10 /* IP_MTU_DISCOVER */, 1, 0 }, { IPPROTO_IP, 11 /* IP_RECVERR */, 0, 0 },
	{ IPPROTO_IPV6, 26 /* IPV6_V6ONLY */, 0, 0 }, { IPPROTO_IPV6, 67 /* IPV6_TCLASS */, 0, 0 },
	{ IPPROTO_IPV6, 16 /* IPV6_UNICAST_HOPS */, 64, 0 }, { IPPROTO_IPV6, 23 /* IPV6_MTU_DISCOVER */, 1, 0 },
	{ IPPROTO_IPV6, 25 /* IPV6_RECVERR */, 0, 0 },
};

static int known_opt(long level, long name)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_opts); i++)
		if (known_opts[i].level == level && known_opts[i].name == name)
			return (int)i;
	return -1;
}

int opt_int(const struct isock *s, int level, int name)
{
	int v = 0;
	for (int i = 0; i < s->nopts; i++)
		if (s->opts[i].level == level && s->opts[i].name == name)
			memcpy(&v, s->opts[i].v, sizeof v);
	return v;
}

static long inet_getsockopt(long fd, long level, long name, void *val, int *len)
{
	struct file *f;
	long err;
	struct isock *s = sock_of(fd, &f, &err);
	if (!s)
		return err;
	int v;
	if (level == SOL_SOCKET && (name == SO_TYPE || name == SO_ERROR || name == SO_DOMAIN ||
				    name == SO_PROTOCOL || name == SO_ACCEPTCONN)) {
		v = name == SO_TYPE ? s->type : name == SO_DOMAIN ? s->family
		    : name == SO_PROTOCOL ? (s->type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP)
		    : name == SO_ERROR ? s->error : name == SO_ACCEPTCONN ? s->listening : 0;
		if (name == SO_ERROR)
			s->error = 0;
		return socket_opt_out(&v, sizeof v, val, len);
	}
	int k = known_opt(level, name);
	if (k < 0)
		return -ENOPROTOOPT;
	for (int i = 0; i < s->nopts; i++)
		if (s->opts[i].level == level && s->opts[i].name == name)
			return socket_opt_out(s->opts[i].v, s->opts[i].size, val, len);
	uint8_t def[16] = { 0 };
	memcpy(def, &known_opts[k].def, sizeof(int));
	return socket_opt_out(def, known_opts[k].size ? known_opts[k].size : (int)sizeof(int), val, len);
}

static long inet_setsockopt(long fd, long level, long name, const void *val, long len)
{
	struct file *f;
	long err;
	struct isock *s = sock_of(fd, &f, &err);
	if (!s)
		return err;
	int k = known_opt(level, name);
	if (k < 0)
		return -ENOPROTOOPT;
	int size = known_opts[k].size ? known_opts[k].size : (int)sizeof(int);
	if (len < size)
		return -EINVAL;
	if (!user_ok(val, (size_t)size))
		return -EFAULT;
	struct opt *o = 0;
	for (int i = 0; i < s->nopts && !o; i++)
		if (s->opts[i].level == level && s->opts[i].name == name)
			o = &s->opts[i];
	if (!o && s->nopts == OPTS_MAX)
		return -ENOMEM;
	if (!o)
		o = &s->opts[s->nopts++];
	*o = (struct opt){ (int)level, (int)name, size, { 0 } };
	memcpy(o->v, val, (size_t)size);
	if ((level == SOL_SOCKET && (name == SO_SNDBUF || name == SO_RCVBUF)) && size == sizeof(int)) {
		int v;
		memcpy(&v, o->v, sizeof v);
		v = v < 1152 ? 2304 : v > (int)SOCKET_BUFFER ? 2 * (int)SOCKET_BUFFER : 2 * v; /* as Linux */
		memcpy(o->v, &v, sizeof v);
	}
	return 0;
}

static const struct socket_calls inet_calls = {
	inet_bind, inet_connect, inet_listen, inet_accept4, inet_sendto, inet_recvfrom, inet_sendmsg,
	inet_recvmsg, inet_shutdown, inet_getname, inet_getsockopt, inet_setsockopt,
};

static const struct stream_ops inet_ops = {
	.name = "socket", .type = S_IFSOCK, .read = inet_read, .write = inet_write, .poll = inet_poll,
	.release = inet_release, .sock = &inet_calls,
};

long inet_socket_new(int family, long type, long proto)
{
	if (!net_up() && !boot.loopback)
		return -EAFNOSUPPORT; /* the run has no network */
	int kind = (int)(type & 0xf);
	if (type & ~(long)(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (kind != SOCK_STREAM && kind != SOCK_DGRAM)
		return kind == 3 /* SOCK_RAW */ ? -EPERM : -ESOCKTNOSUPPORT;
	if (proto && proto != (kind == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP))
		return -EPROTONOSUPPORT;
	struct isock *s = kalloc(sizeof *s);
	if (!s)
		return -ENOMEM;
	s->family = family, s->type = kind;
	s->answers_tail = &s->answers;
	long fd = stream_open(&inet_ops, s, O_RDWR | (int)(type & (SOCK_NONBLOCK | SOCK_CLOEXEC)));
	if (fd < 0)
		kfree(s, sizeof *s);
	return fd;
}
