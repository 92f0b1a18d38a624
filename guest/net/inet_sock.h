/* SPDX-License-Identifier: GPL-2.0-only */
/* An IPv4 or IPv6 socket as net/inet.c (the calls, the broker's
 * connections, the DNS server) and net/loopback.c (ports, listeners and the
 * connections between the guest's own processes) share it. */
#ifndef GUEST_NET_INET_SOCK_H
#define GUEST_NET_INET_SOCK_H
#include <stddef.h>
#include <stdint.h>
#include "fs/file.h"
#include "husk/net_stream.h"

/* The receive ring starts small and doubles when it is more than half full
 * as data comes (a bulk transfer: fewer waits for credit), as Linux tunes
 * its receive buffer; a socket that only talks holds RX_MIN. */
#define RX_MIN (64u << 10)
#define RX_MAX HUSK_NET_CREDIT_MAX
#define OPTS_MAX 16

enum { I_NEW, I_CONNECTING, I_OPEN, I_CLOSED };

struct inet_addr {
	uint16_t family, port; /* port in host order; family 0: none */
	uint8_t a[16];         /* network order; AF_INET in a[0..3] */
};

/* An option set with setsockopt, for getsockopt to give back. */
struct opt {
	int level, name, size;
	uint8_t v[16];
};

struct dgram;

struct isock {
	struct isock *next;        /* in inet.c's `conns` while it has a connection number */
	int family, type, state;
	uint32_t conn;
	int error;                 /* SO_ERROR: a failed connect's, or a reset's (once) */
	int reset, eof;            /* the connection is gone; the peer sends no more */
	int rd_shut, wr_shut;      /* shutdown() */
	struct inet_addr local, peer;
	uint8_t *rx;               /* the receive ring, rx_size bytes */
	uint32_t rx_size, rx_head, rx_len;
	uint32_t fwd_cnt, fwd_told;         /* read by the program; as last told */
	uint32_t peer_buf, peer_fwd, tx_cnt; /* the broker's credit; sent in all */
	struct dgram *answers, **answers_tail;
	int nanswers, nqueries;
	struct opt opts[OPTS_MAX];
	int nopts;
	/* loopback.c's */
	int bound;                 /* in the port table (local.port is its) */
	struct isock *next_bound;
	int in_guest;              /* a connection between two of the guest's sockets */
	struct isock *mate;        /* its other end (NULL once that closed) */
	int listening, backlog, npending;
	struct isock *pending, *next_pending; /* connections not yet accepted */
};

/* inet.c's, for loopback.c */
void rx_put(struct isock *s, const uint8_t *p, uint32_t len);
void rx_grow(struct isock *s);  /* twice as large, up to RX_MAX */
int rx_ready(struct isock *s);     /* a ring to receive into (-ENOMEM) */
int opt_int(const struct isock *s, int level, int name);
void isock_free(struct isock *s);  /* everything a socket holds, and itself */

/* loopback.c */
int is_loopback(const struct inet_addr *a);
/* a as an IPv4 address when it is one mapped into IPv6 (::ffff:a.b.c.d). */
struct inet_addr inet_unmapped(const struct inet_addr *a);
/* s bound to a (an address of the guest's: any or loopback, else
 * -EADDRNOTAVAIL; port 0: a free one; -EADDRINUSE). */
long loopback_bind(struct isock *s, const struct inet_addr *a);
/* s bound to its family's any address and a free port, unless bound already. */
long loopback_bind_any(struct isock *s);
long loopback_listen(struct isock *s, long backlog);
/* The socket a connect (SOCK_STREAM: a listener) or a datagram (SOCK_DGRAM)
 * to `to` reaches, or NULL. */
struct isock *loopback_find(int type, const struct inet_addr *to);
/* s connected to l's next accept (a blocking connect waits for room in its
 * queue; the caller holds f). */
long loopback_connect(struct file *f, struct isock *s, struct isock *l, const struct inet_addr *to);
/* The next connection l accepted (waits unless non-blocking). */
long loopback_accept(struct file *f, struct isock *l, struct isock **out);
/* How much a send may put into the mate's ring now. */
uint32_t loopback_room(struct isock *s);
/* What releasing s means to others: its mate's EOF, its queue's connects
 * reset, its port free. */
void loopback_release(struct isock *s);
#endif
