/* SPDX-License-Identifier: GPL-2.0-only */
/* The network broker (broker.h).  One thread, one poll loop over the VMM's
 * socket, the host connections and the resolver's sockets.  Every message
 * from the guest is checked before use: its size against its header, its
 * connection number against the table, its credit against what the broker
 * gave, its addresses against the rules.  What the guest did wrong resets
 * that connection and goes on the record; the broker itself goes on. */
#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "audit.h"
#include "errmsg.h"
#include "net/broker.h"
#include "net/sni.h"

#define HDR sizeof(struct husk_net_hdr)
/* What the broker takes from the guest for one connection before the host
 * has taken it: the buf_alloc it gives. */
#define CONN_BUF HUSK_NET_CREDIT_MAX
/* Messages for the guest the VMM has not taken yet: beyond QUEUE_SOFT the
 * broker stops reading from the host; beyond QUEUE_HARD (a guest that
 * claims credit and never takes what it asked for, or floods requests)
 * the guest is broken and the network ends. */
#define QUEUE_SOFT (4u << 20)
#define QUEUE_HARD (64u << 20)
#define CONNS_MAX 1024
#define PINS_MAX 4096

enum conn_state { C_FREE, C_CONNECTING, C_OPEN };

struct conn {
	enum conn_state state;
	uint32_t id;
	int fd;
	char name[NET_NAME_MAX + 1]; /* the pinned name it was allowed by, or "" */
	struct net_addr addr;
	uint16_t port;
	int checking;                /* its first bytes are held until their name is checked */
	uint8_t *out;                /* from the guest, not yet written to the host: */
	size_t out_off, out_len;     /* out_len bytes at out + out_off */
	uint32_t rx_cnt, fwd_cnt, reported; /* from the guest in all; written; fwd_cnt last told */
	uint32_t peer_buf, peer_fwd, tx_cnt; /* the guest's credit; sent to it in all */
	int guest_done, host_done;   /* SHUTDOWN from the guest; EOF from the host */
	int guest_closed;            /* the guest closed it: dropped once what it sent is written */
};

struct pin {
	struct net_addr addr;
	char name[NET_NAME_MAX + 1];
};

struct out_msg {
	struct out_msg *next;
	size_t len;
	uint8_t b[];
};

struct broker {
	const struct broker_config *c;
	int fd;
	struct conn conns[CONNS_MAX];
	struct pin *pins;
	size_t npins;
	struct out_msg *q, **qtail;
	size_t queued;              /* bytes in q */
	ares_channel dns;
	int dns_ready;
	uint32_t open, connects, denials;
	uint64_t bytes;
	unsigned limits_told;       /* the limits with a record (1 << enum limit_kind) */
	double tokens;              /* bytes the rate limit lets through now */
	double refilled;            /* when they were counted (monotonic seconds) */
	uint32_t resolves;          /* in the second that began at resolves_since */
	double resolves_since;
	uint8_t in[HUSK_NET_MSG_MAX];
};

/* ---- to the VMM ---------------------------------------------------------- */

static void flush(struct broker *b)
{
	while (b->q) {
		struct out_msg *m = b->q;
		ssize_t w = send(b->fd, m->b, m->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0)
			return; /* EAGAIN: at the next POLLOUT; the VMM gone: the loop sees it */
		b->q = m->next;
		if (!b->q)
			b->qtail = &b->q;
		b->queued -= m->len;
		free(m);
	}
}

static void send_msg(struct broker *b, struct husk_net_hdr h, const void *payload, size_t len)
{
	struct out_msg *m = malloc(sizeof *m + HDR + len);
	if (!m) {
		fprintf(stderr, "husk: network broker: out of memory\n");
		exit(1);
	}
	h.len = (uint32_t)len;
	memcpy(m->b, &h, HDR);
	if (len)
		memcpy(m->b + HDR, payload, len);
	m->len = HDR + len;
	m->next = NULL;
	*b->qtail = m;
	b->qtail = &m->next;
	b->queued += m->len;
	flush(b);
}

/* A message about conn with the broker's credit for it. */
static struct husk_net_hdr about(const struct conn *c, uint32_t op)
{
	return (struct husk_net_hdr){ .op = op, .conn = c->id, .buf_alloc = CONN_BUF, .fwd_cnt = c->fwd_cnt };
}

static void reset_id(struct broker *b, uint32_t id, int err)
{
	send_msg(b, (struct husk_net_hdr){ .op = HUSK_NET_RESET, .conn = id, .error = err }, NULL, 0);
}

/* ---- the record ------------------------------------------------------------ */

/* One record, j taken, with its time (audit_line: a line marked with the
 * run's id). */
static void emit(struct broker *b, json_t *j)
{
	if (!j)
		return;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	json_object_set_new(j, "time", json_real(now.tv_sec + now.tv_nsec / 1e9));
	audit_line(b->c->record_fd, j);
}

static void record(struct broker *b, const char *op, const struct net_addr *a, uint16_t port, const char *name,
		   const char *verdict, const char *reason)
{
	if (b->c->record_fd < 0)
		return;
	json_t *j = json_pack("{s:s, s:s, s:s}", "event", "network", "op", op, "verdict", verdict);
	if (j && a) {
		char t[INET6_ADDRSTRLEN];
		json_object_set_new(j, "addr", json_string(net_addr_text(a, t, sizeof t)));
		json_object_set_new(j, "port", json_integer(port));
	}
	if (j && name && *name)
		json_object_set_new(j, "name", json_string(name));
	if (j && reason)
		json_object_set_new(j, "reason", json_string(reason));
	emit(b, j);
}

/* A limit of the policy's, hit: one "limit" record per kind, at the first
 * hit (each request it refuses has its own "network" record). */
enum limit_kind { LIMIT_DENIALS, LIMIT_CONNECTS, LIMIT_OPEN, LIMIT_BYTES, LIMIT_RATE, LIMIT_RESOLVES, LIMITS };

static void limit_hit(struct broker *b, enum limit_kind k)
{
	static const char *const kinds[LIMITS] = { "network denials", "network connects", "network connections open",
						   "network bytes", "network rate", "network resolves" };
	if (b->c->record_fd < 0 || b->limits_told & 1u << k)
		return;
	b->limits_told |= 1u << k;
	emit(b, json_pack("{s:s, s:s, s:s}", "event", "limit", "kind", kinds[k], "counted_by", "husk"));
}

/* ---- connections ----------------------------------------------------------- */

static struct conn *find(struct broker *b, uint32_t id)
{
	for (int i = 0; i < CONNS_MAX; i++)
		if (b->conns[i].state != C_FREE && b->conns[i].id == id)
			return &b->conns[i];
	return NULL;
}

static void drop(struct broker *b, struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	*c = (struct conn){ .state = C_FREE, .fd = -1 };
	b->open--;
}

static void fail(struct broker *b, struct conn *c, int err)
{
	reset_id(b, c->id, err);
	drop(b, c);
}

/* Whether a:port may be connected to: by an address rule (*name ""), or
 * through a name a was pinned to (*name that name: its connections get the
 * name check).  Denied: the verdict that says most (a pinned name's, e.g.
 * rebinding, before "no rule"), *why its rule. */
static enum net_verdict judge(struct broker *b, const struct net_addr *a, uint16_t port, const char **name,
			      const struct net_rule **why)
{
	*name = "";
	enum net_verdict v = rules_check(&b->c->rules, a, port, NULL, why);
	if (v == NET_ALLOW || v == NET_DENY_FLOOR)
		return v;
	for (size_t i = 0; i < b->npins; i++) {
		if (b->pins[i].addr.family != a->family || memcmp(b->pins[i].addr.a, a->a, 16))
			continue;
		const struct net_rule *pin_why;
		enum net_verdict pv = rules_check(&b->c->rules, a, port, b->pins[i].name, &pin_why);
		if (pv == NET_ALLOW || v == NET_DENY_UNLISTED) {
			v = pv, *why = pin_why, *name = b->pins[i].name;
			if (pv == NET_ALLOW)
				break;
		}
	}
	return v;
}

static void pin(struct broker *b, const struct net_addr *a, const char *name)
{
	for (size_t i = 0; i < b->npins; i++)
		if (!memcmp(&b->pins[i].addr, a, sizeof *a) && !strcmp(b->pins[i].name, name))
			return;
	if (b->npins == PINS_MAX)
		return; /* not pinned: connects to it are then judged as by address */
	struct pin *p = realloc(b->pins, (b->npins + 1) * sizeof *p);
	if (!p)
		return;
	b->pins = p;
	p[b->npins].addr = *a;
	snprintf(p[b->npins].name, sizeof p[b->npins].name, "%s", name);
	b->npins++;
}

static int denied(struct broker *b)
{
	return b->c->max_denials && b->denials >= b->c->max_denials;
}

static void count_denial(struct broker *b)
{
	b->denials++;
	if (denied(b))
		limit_hit(b, LIMIT_DENIALS);
}

static void refuse(struct broker *b, uint32_t id, const struct net_addr *a, uint16_t port, const char *name,
		   const char *reason)
{
	count_denial(b);
	record(b, "connect", a, port, name, "denied", reason);
	reset_id(b, id, EACCES);
}

static void on_connect(struct broker *b, const struct husk_net_hdr *h)
{
	struct net_addr a = { 0 };
	if ((h->family != AF_INET && h->family != AF_INET6) || !h->port || find(b, h->conn)) {
		record(b, "connect", NULL, 0, NULL, "denied", "a malformed request (family, port, or a number in use)");
		reset_id(b, h->conn, EINVAL);
		return;
	}
	a.family = h->family;
	memcpy(a.a, h->addr, h->family == AF_INET ? 4 : 16);
	if (denied(b)) {
		refuse(b, h->conn, &a, h->port, NULL, "the denial limit was reached earlier");
		return;
	}
	if (b->c->max_connects && b->connects >= b->c->max_connects) {
		limit_hit(b, LIMIT_CONNECTS);
		refuse(b, h->conn, &a, h->port, NULL, "the connect limit");
		return;
	}
	b->connects++;
	if (b->c->max_open && b->open >= b->c->max_open) {
		limit_hit(b, LIMIT_OPEN);
		refuse(b, h->conn, &a, h->port, NULL, "the limit of connections open at once");
		return;
	}
	const char *name;
	const struct net_rule *why = NULL;
	enum net_verdict v = judge(b, &a, h->port, &name, &why);
	if (v != NET_ALLOW) {
		char reason[256], t[128];
		snprintf(reason, sizeof reason, "%s%s%s", net_verdict_text(v), why ? ": " : "",
			 why ? rule_text(why, t, sizeof t) : "");
		refuse(b, h->conn, &a, h->port, name, reason);
		return;
	}
	struct conn *c = NULL;
	for (int i = 0; i < CONNS_MAX && !c; i++)
		if (b->conns[i].state == C_FREE)
			c = &b->conns[i];
	if (!c) {
		refuse(b, h->conn, &a, h->port, name, "the broker's table of connections is full");
		return;
	}
	*c = (struct conn){ .state = C_CONNECTING, .id = h->conn, .addr = a, .port = h->port,
			    .peer_buf = h->buf_alloc, .peer_fwd = h->fwd_cnt };
	snprintf(c->name, sizeof c->name, "%s", name);
	c->checking = *name && b->c->check_names && (h->port == 443 || h->port == 80);
	b->open++;
	c->fd = socket(a.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	if (a.family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET, s4->sin_port = htons(h->port);
		memcpy(&s4->sin_addr, a.a, 4);
		sl = sizeof *s4;
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6, s6->sin6_port = htons(h->port);
		memcpy(&s6->sin6_addr, a.a, 16);
		sl = sizeof *s6;
	}
	int err = c->fd < 0 ? errno : connect(c->fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS ? errno : 0;
	record(b, "connect", &a, h->port, c->name, "allowed", NULL);
	if (err)
		fail(b, c, err);
}

/* A connect finished (POLLOUT): CONNECTED with the host side's address, or RESET. */
static void on_connected(struct broker *b, struct conn *c)
{
	int err = 0;
	socklen_t el = sizeof err;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
		fail(b, c, err ? err : errno);
		return;
	}
	c->state = C_OPEN;
	struct husk_net_hdr h = about(c, HUSK_NET_CONNECTED);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (!getsockname(c->fd, (struct sockaddr *)&ss, &sl)) {
		h.family = ss.ss_family;
		if (ss.ss_family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
			h.port = ntohs(s4->sin_port);
			memcpy(h.addr, &s4->sin_addr, 4);
		} else {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
			h.port = ntohs(s6->sin6_port);
			memcpy(h.addr, &s6->sin6_addr, 16);
		}
	}
	send_msg(b, h, NULL, 0);
}

/* The held first bytes: go on (1), wait (0), or the connection was reset (-1). */
static int name_check(struct broker *b, struct conn *c, int final)
{
	char name[NET_NAME_MAX + 1];
	const uint8_t *first = c->out + c->out_off;
	enum first_bytes r = c->port == 443 ? tls_server_name(first, c->out_len, name) : http_host(first, c->out_len, name);
	if (r == FIRST_MORE && final)
		r = FIRST_NONE; /* the guest sent all it will: no name came */
	if (r == FIRST_MORE)
		return 0;
	const char *why = r == FIRST_NAME ? (strcmp(name, c->name) ? "asks for another name" : NULL)
			  : r == FIRST_NONE ? "names no host"
			  : r == FIRST_HIDDEN ? "hides its name (Encrypted Client Hello)"
					      : "is not a well-formed ClientHello or request";
	if (!why) {
		c->checking = 0;
		return 1;
	}
	char reason[400];
	snprintf(reason, sizeof reason, "the connection %s (%s%s%s)", why, c->port == 443 ? "TLS" : "HTTP",
		 r == FIRST_NAME ? ": " : "", r == FIRST_NAME ? name : "");
	count_denial(b);
	record(b, "name", &c->addr, c->port, c->name, "denied", reason);
	fail(b, c, ECONNRESET);
	return -1;
}

static void credit_if_due(struct broker *b, struct conn *c)
{
	if (c->fwd_cnt - c->reported >= CONN_BUF / 4 || (!c->out_len && c->fwd_cnt != c->reported)) {
		c->reported = c->fwd_cnt;
		send_msg(b, about(c, HUSK_NET_CREDIT), NULL, 0);
	}
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Bytes the rate limit lets through now (SIZE_MAX without one); none left:
 * a "limit" record the first time. */
static size_t rate_room(struct broker *b)
{
	if (!b->c->max_rate)
		return SIZE_MAX;
	double now = now_s(), rate = (double)b->c->max_rate;
	b->tokens += (now - b->refilled) * rate;
	b->refilled = now;
	if (b->tokens > rate)
		b->tokens = rate;
	if (b->tokens < 1)
		limit_hit(b, LIMIT_RATE);
	return b->tokens < 1 ? 0 : (size_t)b->tokens;
}

static void rate_spend(struct broker *b, size_t n)
{
	b->tokens -= (double)n;
}

/* How long until the rate limit lets a byte through (ms), or -1: now. */
static int rate_wait_ms(struct broker *b)
{
	if (!b->c->max_rate || rate_room(b))
		return -1;
	return (int)((1 - b->tokens) * 1000 / (double)b->c->max_rate) + 1;
}

static void write_out(struct broker *b, struct conn *c)
{
	size_t room;
	while (c->out_len && !c->checking && (room = rate_room(b))) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len < room ? c->out_len : room, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno == EAGAIN)
			break;
		if (w < 0) {
			fail(b, c, errno);
			return;
		}
		rate_spend(b, (size_t)w);
		c->out_off += (size_t)w;
		c->out_len -= (size_t)w;
		c->fwd_cnt += (uint32_t)w;
	}
	if (!c->out_len && c->out) { /* only a connection whose host is behind holds a buffer */
		free(c->out);
		c->out = NULL;
		c->out_off = 0;
	}
	credit_if_due(b, c);
	if (!c->out_len && c->guest_done == 1) {
		shutdown(c->fd, SHUT_WR);
		c->guest_done = 2;
	}
	if (!c->out_len && c->guest_closed)
		drop(b, c);
}

static void on_data(struct broker *b, struct conn *c, const uint8_t *p, uint32_t len)
{
	if (c->state != C_OPEN || c->guest_done || c->rx_cnt - c->fwd_cnt + (uint64_t)len > CONN_BUF) {
		record(b, "data", &c->addr, c->port, c->name, "denied", "bytes past the credit the broker gave, or after shutdown");
		fail(b, c, ECONNRESET);
		return;
	}
	if (b->c->max_bytes && (b->bytes += len) > b->c->max_bytes) {
		limit_hit(b, LIMIT_BYTES);
		record(b, "data", &c->addr, c->port, c->name, "denied", "the limit of bytes in and out");
		fail(b, c, ECONNRESET);
		return;
	}
	c->rx_cnt += len;
	size_t room = !c->checking && !c->out_len ? rate_room(b) : 0;
	if (room) { /* straight to the host: the copy below only for what it does not take now */
		ssize_t w = send(c->fd, p, len < room ? len : room, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN) {
			fail(b, c, errno);
			return;
		}
		if (w > 0) {
			rate_spend(b, (size_t)w);
			c->fwd_cnt += (uint32_t)w;
			p += w, len -= (uint32_t)w;
		}
	}
	if (len && !c->out && !(c->out = malloc(CONN_BUF))) {
		fail(b, c, ENOMEM);
		return;
	}
	if (len && c->out_off + c->out_len + len > CONN_BUF) { /* the credit keeps it within CONN_BUF in all */
		memmove(c->out, c->out + c->out_off, c->out_len);
		c->out_off = 0;
	}
	if (len)
		memcpy(c->out + c->out_off + c->out_len, p, len);
	c->out_len += len;
	if (c->checking && name_check(b, c, 0) < 0)
		return;
	write_out(b, c);
}

/* What the guest has room for on c: its buffer less what was sent and it
 * has not taken yet (0 when its claims do not add up). */
static uint32_t guest_credit(const struct conn *c)
{
	uint32_t credit = c->peer_buf - (c->tx_cnt - c->peer_fwd);
	return credit <= c->peer_buf ? credit : 0;
}

/* The host has bytes for the guest: as many as its credit takes. */
static void on_readable(struct broker *b, struct conn *c)
{
	if (c->host_done)
		return;
	uint32_t credit = guest_credit(c);
	size_t want = credit < HUSK_NET_PAYLOAD_MAX ? credit : HUSK_NET_PAYLOAD_MAX, room = rate_room(b);
	want = want < room ? want : room;
	if (!want)
		return;
	ssize_t r = recv(c->fd, b->in, want, MSG_DONTWAIT);
	if (r < 0 && errno == EAGAIN)
		return;
	if (r < 0) {
		fail(b, c, errno);
		return;
	}
	if (r == 0) {
		c->host_done = 1;
		struct husk_net_hdr h = about(c, HUSK_NET_SHUTDOWN);
		h.flags = HUSK_NET_SHUT_WR;
		send_msg(b, h, NULL, 0);
		return;
	}
	if (b->c->max_bytes && (b->bytes += (uint64_t)r) > b->c->max_bytes) {
		limit_hit(b, LIMIT_BYTES);
		record(b, "data", &c->addr, c->port, c->name, "denied", "the limit of bytes in and out");
		fail(b, c, ECONNRESET);
		return;
	}
	rate_spend(b, (size_t)r);
	c->tx_cnt += (uint32_t)r;
	send_msg(b, about(c, HUSK_NET_DATA), b->in, (size_t)r);
}

/* ---- names ---------------------------------------------------------------- */

struct query {
	struct broker *b;
	uint32_t id;
	char name[NET_NAME_MAX + 1];
};

static void answer(struct broker *b, uint32_t id, const char *name, const struct net_addr *a, int n, int rcode)
{
	struct husk_net_addr out[HUSK_NET_RESOLVED_MAX] = { 0 };
	for (int i = 0; i < n && i < HUSK_NET_RESOLVED_MAX; i++) {
		out[i].family = (uint16_t)a[i].family;
		memcpy(out[i].addr, a[i].a, 16);
		pin(b, &a[i], name);
	}
	if (n > HUSK_NET_RESOLVED_MAX)
		n = HUSK_NET_RESOLVED_MAX;
	send_msg(b, (struct husk_net_hdr){ .op = HUSK_NET_RESOLVED, .conn = id, .error = rcode }, out,
		 (size_t)n * sizeof out[0]);
}

static void resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	(void)timeouts;
	struct query *q = arg;
	struct net_addr a[HUSK_NET_RESOLVED_MAX] = { 0 };
	int n = 0;
	for (struct ares_addrinfo_node *node = res ? res->nodes : NULL; node && n < HUSK_NET_RESOLVED_MAX; node = node->ai_next) {
		a[n] = (struct net_addr){ .family = node->ai_family };
		if (node->ai_family == AF_INET)
			memcpy(a[n++].a, &((struct sockaddr_in *)node->ai_addr)->sin_addr, 4);
		else if (node->ai_family == AF_INET6)
			memcpy(a[n++].a, &((struct sockaddr_in6 *)node->ai_addr)->sin6_addr, 16);
	}
	/* a name without addresses of the type asked (ENODATA): an empty answer,
	 * not NXDOMAIN, which tells a resolver the name does not exist at all */
	int rcode = status == ARES_SUCCESS || status == ARES_ENODATA ? 0
		    : status == ARES_ENOTFOUND			  ? HUSK_NET_NXDOMAIN
								  : HUSK_NET_SERVFAIL;
	record(q->b, "resolve", NULL, 0, q->name, rcode ? "failed" : "allowed", status ? ares_strerror(status) : NULL);
	answer(q->b, q->id, q->name, a, n, rcode);
	if (res)
		ares_freeaddrinfo(res);
	free(q);
}

static void on_resolve(struct broker *b, const struct husk_net_hdr *h, const uint8_t *p)
{
	char raw[NET_NAME_MAX + 2], name[NET_NAME_MAX + 1];
	if (!h->len || h->len > NET_NAME_MAX + 1 || memchr(p, 0, h->len)) {
		record(b, "resolve", NULL, 0, NULL, "denied", "not a name");
		answer(b, h->conn, "", NULL, 0, HUSK_NET_REFUSED);
		return;
	}
	memcpy(raw, p, h->len);
	raw[h->len] = 0;
	if (net_name_normal(raw, name) || !rules_name_allowed(&b->c->rules, name) || denied(b)) {
		count_denial(b);
		char shown[4 * (NET_NAME_MAX + 1) + 1];
		record(b, "resolve", NULL, 0, str_escape(raw, h->len, shown, sizeof shown), "denied",
		       denied(b) ? "no allow rule lists it, or the denial limit" : "no allow rule lists it");
		answer(b, h->conn, name, NULL, 0, HUSK_NET_NXDOMAIN);
		return;
	}
	double now = now_s();
	if (now - b->resolves_since >= 1)
		b->resolves_since = now, b->resolves = 0;
	if (b->c->max_resolves && ++b->resolves > b->c->max_resolves) {
		limit_hit(b, LIMIT_RESOLVES);
		record(b, "resolve", NULL, 0, name, "denied", "the limit of names resolved per second");
		answer(b, h->conn, name, NULL, 0, HUSK_NET_REFUSED);
		return;
	}
	for (size_t i = 0; i < b->c->nhosts; i++)
		if (!strcmp(b->c->hosts[i].name, name)) {
			record(b, "resolve", NULL, 0, name, "allowed", "the hosts map");
			answer(b, h->conn, name, b->c->hosts[i].addr, b->c->hosts[i].n, 0);
			return;
		}
	struct query *q = b->dns_ready ? malloc(sizeof *q) : NULL;
	if (!q) {
		record(b, "resolve", NULL, 0, name, "failed", "no resolver");
		answer(b, h->conn, name, NULL, 0, HUSK_NET_SERVFAIL);
		return;
	}
	*q = (struct query){ b, h->conn, "" };
	snprintf(q->name, sizeof q->name, "%s", name);
	struct ares_addrinfo_hints hints = { .ai_family = h->family == AF_INET ? AF_INET : h->family == AF_INET6 ? AF_INET6 : AF_UNSPEC,
					     .ai_socktype = SOCK_STREAM };
	ares_getaddrinfo(b->dns, name, NULL, &hints, resolved, q);
}

int broker_host_parse(const char *s, struct broker_host *h, char *err, size_t n)
{
	const char *eq = strchr(s, '=');
	char name[NET_NAME_MAX + 2];
	*h = (struct broker_host){ 0 };
	if (!eq || (size_t)(eq - s) >= sizeof name)
		return errmsg(err, n, "host \"%s\": expected NAME=ADDR[,ADDR...]", s);
	memcpy(name, s, (size_t)(eq - s));
	name[eq - s] = 0;
	if (net_name_normal(name, h->name))
		return errmsg(err, n, "host \"%s\": not a host name", s);
	for (const char *a = eq + 1; *a && h->n < HUSK_NET_RESOLVED_MAX;) {
		size_t len = strcspn(a, ",");
		char t[INET6_ADDRSTRLEN];
		if (len >= sizeof t)
			return errmsg(err, n, "host \"%s\": not an address list", s);
		memcpy(t, a, len);
		t[len] = 0;
		struct net_addr *x = &h->addr[h->n++];
		x->family = strchr(t, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(x->family, t, x->a) != 1)
			return errmsg(err, n, "host \"%s\": \"%s\" is not an address", s, t);
		a += len + (a[len] == ',');
	}
	return h->n ? 0 : errmsg(err, n, "host \"%s\": no address", s);
}

/* ---- the loop ------------------------------------------------------------- */

static void on_message(struct broker *b, const uint8_t *m, size_t len)
{
	struct husk_net_hdr h;
	if (len < HDR) {
		record(b, "message", NULL, 0, NULL, "denied", "shorter than a header");
		return;
	}
	memcpy(&h, m, HDR);
	if (h.len != len - HDR || h.len > HUSK_NET_PAYLOAD_MAX) {
		record(b, "message", NULL, 0, NULL, "denied", "its length is not its header's");
		return;
	}
	const uint8_t *p = m + HDR;
	struct conn *c = h.op == HUSK_NET_CONNECT || h.op == HUSK_NET_RESOLVE ? NULL : find(b, h.conn);
	if (c) { /* every message carries the guest's credit */
		c->peer_buf = h.buf_alloc < CONN_BUF ? h.buf_alloc : CONN_BUF;
		c->peer_fwd = h.fwd_cnt;
	}
	switch (h.op) {
	case HUSK_NET_CONNECT:
		on_connect(b, &h);
		return;
	case HUSK_NET_RESOLVE:
		on_resolve(b, &h, p);
		return;
	case HUSK_NET_DATA:
		if (c)
			on_data(b, c, p, h.len);
		return;
	case HUSK_NET_SHUTDOWN:
		if (c && (h.flags & HUSK_NET_SHUT_RD))
			c->guest_closed = 1;
		if (c && c->guest_closed && c->state == C_CONNECTING)
			drop(b, c); /* closed before it was open: nothing to write */
		else if (c && c->checking && c->state == C_OPEN && name_check(b, c, 1) < 0)
			return; /* it ended before its first bytes named a host: reset */
		else if (c && (h.flags & (HUSK_NET_SHUT_WR | HUSK_NET_SHUT_RD)) && !c->guest_done) {
			c->guest_done = 1;
			if (c->state == C_OPEN)
				write_out(b, c);
		} else if (c && c->guest_closed && c->state == C_OPEN)
			write_out(b, c);
		return;
	case HUSK_NET_RESET:
		if (c)
			drop(b, c);
		return;
	case HUSK_NET_CREDIT:
		return;
	}
	record(b, "message", NULL, 0, NULL, "denied", "an unknown operation");
}

int broker_run(int fd, const struct broker_config *cfg)
{
	struct broker *b = calloc(1, sizeof *b);
	if (!b)
		return -1;
	b->c = cfg, b->fd = fd, b->qtail = &b->q;
	for (int i = 0; i < CONNS_MAX; i++)
		b->conns[i].fd = -1;
	/* DNS only ("b"): no /etc/hosts read per query, which the confined
	 * broker could not open; the servers read now or given */
	struct ares_options opts = { .lookups = (char *)"b" };
	if (cfg->dns && ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS &&
	    ares_init_options(&b->dns, &opts, ARES_OPT_LOOKUPS) == ARES_SUCCESS) {
		b->dns_ready = 1;
		if (cfg->dns_servers && ares_set_servers_ports_csv(b->dns, cfg->dns_servers) != ARES_SUCCESS) {
			fprintf(stderr, "husk: network broker: DNS servers \"%s\" refused\n", cfg->dns_servers);
			ares_destroy(b->dns);
			b->dns_ready = 0;
		}
	}
	json_object_seed(0); /* jansson's hash seed from /dev/urandom now, not at the first record */
	if (cfg->confine && cfg->confine()) {
		fprintf(stderr, "husk: network broker: cannot confine itself\n");
		exit(1);
	}
	struct pollfd pfd[1 + CONNS_MAX + ARES_GETSOCK_MAXNUM];
	struct conn *of[1 + CONNS_MAX];
	int result = 0;
	b->refilled = now_s();
	b->tokens = (double)cfg->max_rate;
	for (;;) {
		if (b->queued > QUEUE_HARD) {
			record(b, "message", NULL, 0, NULL, "denied",
			       "the guest does not take the messages it asked for: the network ends");
			break;
		}
		int n = 0, throttle_ms = rate_wait_ms(b), throttled = throttle_ms >= 0, backed_up = b->queued > QUEUE_SOFT;
		pfd[n++] = (struct pollfd){ fd, POLLIN | (b->q ? POLLOUT : 0), 0 };
		for (int i = 0; i < CONNS_MAX; i++) {
			struct conn *c = &b->conns[i];
			if (c->state == C_FREE)
				continue;
			short ev = c->state == C_CONNECTING ? POLLOUT : 0;
			if (c->state == C_OPEN && !throttled) {
				ev |= (guest_credit(c) && !c->host_done && !c->guest_closed && !backed_up ? POLLIN : 0) |
				      (c->out_len && !c->checking ? POLLOUT : 0);
			}
			of[n] = c;
			/* nothing wanted: not polled, or a hung-up socket would wake the loop for ever */
			pfd[n++] = (struct pollfd){ ev ? c->fd : -1, ev, 0 };
		}
		int first_dns = n;
		ares_socket_t socks[ARES_GETSOCK_MAXNUM];
		/* ares_getsock's bits: readable 1 << i, writable 1 << (i + 16) (its
		 * macros shift a signed 1 into the sign bit) */
		unsigned bits = b->dns_ready ? (unsigned)ares_getsock(b->dns, socks, ARES_GETSOCK_MAXNUM) : 0;
		for (unsigned i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
			short ev = (short)((bits & 1u << i ? POLLIN : 0) | (bits & 1u << (i + ARES_GETSOCK_MAXNUM) ? POLLOUT : 0));
			if (ev)
				pfd[n++] = (struct pollfd){ socks[i], ev, 0 };
		}
		struct timeval tv, *tvp = b->dns_ready ? ares_timeout(b->dns, NULL, &tv) : NULL;
		int ms = tvp ? (int)(tvp->tv_sec * 1000 + tvp->tv_usec / 1000) : -1;
		if (throttled && (ms < 0 || throttle_ms < ms))
			ms = throttle_ms;
		int r = poll(pfd, (nfds_t)n, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("husk: network broker: poll");
			result = -1;
			break;
		}
		if (pfd[0].revents & POLLOUT)
			flush(b);
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t len = recv(fd, b->in, sizeof b->in, MSG_DONTWAIT | MSG_TRUNC);
			if (len == 0 || (len < 0 && errno != EAGAIN))
				break; /* the VMM is gone: the run is over */
			if (len > (ssize_t)sizeof b->in)
				record(b, "message", NULL, 0, NULL, "denied", "longer than the largest message");
			else if (len > 0)
				on_message(b, b->in, (size_t)len);
		}
		for (int i = 1; i < first_dns; i++) {
			struct conn *c = of[i];
			if (c->state == C_FREE || c->fd != pfd[i].fd || pfd[i].fd < 0 || !pfd[i].revents)
				continue; /* reset meanwhile */
			if (c->state == C_CONNECTING)
				on_connected(b, c);
			else if (pfd[i].revents & POLLOUT)
				write_out(b, c);
			if (c->state == C_OPEN && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				on_readable(b, c);
		}
		if (b->dns_ready)
			for (int i = first_dns; i < n; i++)
				ares_process_fd(b->dns, pfd[i].revents & POLLIN ? pfd[i].fd : ARES_SOCKET_BAD,
						pfd[i].revents & POLLOUT ? pfd[i].fd : ARES_SOCKET_BAD);
		if (b->dns_ready && r == 0)
			ares_process_fd(b->dns, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* timeouts */
	}
	for (int i = 0; i < CONNS_MAX; i++)
		if (b->conns[i].state != C_FREE)
			drop(b, &b->conns[i]);
	if (b->dns_ready) {
		ares_destroy(b->dns);
		ares_library_cleanup();
	}
	while (b->q) {
		struct out_msg *m = b->q;
		b->q = m->next;
		free(m);
	}
	free(b->pins);
	free(b);
	return result;
}
