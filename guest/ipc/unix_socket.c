/* SPDX-License-Identifier: GPL-2.0-only */
/* Unix sockets (unix_socket.h), as Linux's af_unix for what programs use.
 *
 * A connection (stream or seqpacket) is two pipes crossed: each end reads
 * one and writes the other, so a peer's close is the reader's EOF.  A
 * datagram socket reads its own queue, a pipe it holds both ends of; its
 * senders write into it.  Datagrams and seqpackets keep their bounds: each
 * is stored as a header (its length, its sender's name) and its bytes,
 * written whole, read whole (the rest of a long one dropped, MSG_TRUNC).
 *
 * Names: a path makes a socket node in the file system (bind), found again
 * by its inode (connect, sendto); an abstract name (a leading NUL) lives in
 * a table only.  Descriptors and credentials sent along (SCM_RIGHTS,
 * SCM_CREDENTIALS) are held in a record at the position in the receiver's
 * stream of the first byte they came with; a read stops after that
 * message, as Linux's does, and hands them over. */
#include <errno.h>
#include <string.h>
#include "ipc/pipe.h"
#include "ipc/stream.h"
#include "ipc/unix_socket.h"
#include "kernel.h"
#include "linux_abi.h"
#include "net/socket.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"
#include "sys/sys_fs.h"

#define SCM_MAX_FD     253 /* Linux's limit of descriptors in one message */
#define SUN_PATH_MAX   108

/* sockaddr_un as the program gave it; len counts the family's 2 bytes. */
struct unix_addr {
	uint32_t len;
	char sun[2 + SUN_PATH_MAX + 1]; /* a path of all 108 bytes gets its NUL */
};

struct ucred_k { int32_t pid, uid, gid; };

/* What came with the bytes at pos of a receiver's stream (len of them: a
 * stream read stops at the message's end). */
struct record {
	struct record *next;
	uint64_t pos, len;
	struct ucred_k cred;
	int has_cred;
	int nfiles;
	struct file *files[];
};

enum { UNCONNECTED, LISTENING, CONNECTED };

struct usock {
	int refs;              /* its file, peers pointing at it, a listener's queue */
	int type, state, closed;
	struct pipe *rx, *tx;  /* tx: a connection's peer's rx */
	int rx_open, tx_open;  /* not shut down */
	uint64_t rx_taken;     /* bytes read from rx so far: where records sit */
	struct record *records;
	struct usock *peer;    /* a connection's other end; a datagram socket's destination */
	struct unix_addr name; /* len 0: unbound */
	struct mount *m;       /* bound to a path: its node */
	uint32_t ino;
	struct usock *next_bound;
	struct usock *pending, *next_pending; /* a listener's connections not yet accepted */
	int npending, backlog;
	int passcred;
	struct ucred_k peer_cred; /* SO_PEERCRED: the peer's at connect */
};

/* Datagram and seqpacket messages in a pipe: this header, the sender's
 * name, the bytes. */
struct dgram_hdr {
	uint32_t len, name_len;
};

static struct usock *bound; /* every bound socket */

static const struct stream_ops sock_ops;

static int datagrams(const struct usock *u)
{
	return u->type != SOCK_STREAM;
}

static int connection(const struct usock *u)
{
	return u->type != SOCK_DGRAM;
}

static struct ucred_k my_cred(void)
{
	const struct creds *c = &current->proc->creds;
	return (struct ucred_k){ current->proc->pid, (int32_t)c->uid[1], (int32_t)c->gid[1] };
}

/* --- lifetime ------------------------------------------------------------------ */

static struct usock *usock_new(int type)
{
	struct usock *u = kalloc(sizeof *u);
	if (!u)
		return 0;
	u->refs = 1, u->type = type, u->rx_open = u->tx_open = 1;
	if (type == SOCK_DGRAM && !(u->rx = pipe_new(SOCKET_BUFFER))) { /* it holds both ends of its queue */
		kfree(u, sizeof *u);
		return 0;
	}
	return u;
}

static void record_free(struct record *r);

static void records_free(struct usock *u)
{
	while (u->records) {
		struct record *r = u->records;
		u->records = r->next;
		record_free(r);
	}
}

static void usock_put(struct usock *u)
{
	if (--u->refs)
		return;
	records_free(u); /* descriptors that came after the close */
	kfree(u, sizeof *u);
}

static void unbind(struct usock *u)
{
	for (struct usock **p = &bound; *p; p = &(*p)->next_bound)
		if (*p == u) {
			*p = u->next_bound;
			break;
		}
}

/* The end of a socket (its last close, or a connection never accepted):
 * its peer reads EOF, its name is free again, what waited for it is
 * dropped. */
static void usock_close(struct usock *u)
{
	u->closed = 1;
	if (u->name.len)
		unbind(u);
	while (u->pending) {
		struct usock *c = u->pending;
		u->pending = c->next_pending;
		usock_close(c);
		usock_put(c);
	}
	if (u->rx) {
		pipe_drop(u->rx, 1);
		if (!connection(u))
			pipe_drop(u->rx, 0);
	}
	if (u->tx)
		pipe_drop(u->tx, 0);
	u->rx = u->tx = 0;
	records_free(u); /* descriptors never received: closed (a cycle of sockets in flight is freed too) */
	if (u->peer) {
		usock_put(u->peer);
		u->peer = 0;
	}
	stream_changed();
}

static void sock_release(struct file *f)
{
	struct usock *u = f->priv;
	usock_close(u);
	usock_put(u);
}

/* Two ends joined by two crossed pipes. */
static int join(struct usock *a, struct usock *b)
{
	struct pipe *p = pipe_new(SOCKET_BUFFER), *q = p ? pipe_new(SOCKET_BUFFER) : 0;
	if (!q) {
		if (p)
			pipe_drop(p, 1), pipe_drop(p, 0);
		return -ENOMEM;
	}
	a->rx = p, b->tx = p, b->rx = q, a->tx = q;
	a->peer = b, b->peer = a;
	a->refs++, b->refs++;
	a->state = b->state = CONNECTED;
	return 0;
}

/* --- names ----------------------------------------------------------------------- */

/* The program's sockaddr_un, checked and copied. */
static int addr_in(const void *uaddr, long len, struct unix_addr *a)
{
	if (len < 2 || len > 2 + SUN_PATH_MAX)
		return -EINVAL;
	if (!user_ok(uaddr, (size_t)len))
		return -EFAULT;
	memcpy(a->sun, uaddr, (size_t)len);
	uint16_t family;
	memcpy(&family, a->sun, 2);
	if (family != AF_UNIX)
		return -EINVAL;
	a->len = (uint32_t)len;
	if (len > 2 && a->sun[2]) { /* a path: up to its NUL (Linux takes one beyond the size given too) */
		size_t n = strnlen(a->sun + 2, (size_t)len - 2);
		a->sun[2 + n] = 0;
		a->len = (uint32_t)(2 + n + 1);
	}
	return 0;
}

static int abstract(const struct unix_addr *a)
{
	return a->len > 2 && !a->sun[2];
}

/* As much of name a as fits in room bytes at uaddr: 0, or -EFAULT. */
static long name_copy(const struct unix_addr *a, void *uaddr, size_t room)
{
	return socket_name_copy(a->sun, a->len, uaddr, room);
}

static long addr_out(const struct unix_addr *a, void *uaddr, int *alen)
{
	return socket_name_out(a->sun, a->len, uaddr, alen);
}

/* An unnamed socket's name: the family alone. */
static const struct unix_addr *name_of(const struct usock *u)
{
	static const struct unix_addr unnamed = { 2, { AF_UNIX, 0 } };
	return u && u->name.len ? &u->name : &unnamed;
}

static struct usock *find_abstract(const struct unix_addr *a)
{
	for (struct usock *u = bound; u; u = u->next_bound)
		if (u->name.len == a->len && !memcmp(u->name.sun, a->sun, a->len))
			return u;
	return 0;
}

static struct usock *find_node(struct mount *m, uint32_t ino)
{
	for (struct usock *u = bound; u; u = u->next_bound)
		if (u->m == m && u->ino == ino)
			return u;
	return 0;
}

/* The socket a name leads to: -ENOENT without a node, -ECONNREFUSED when
 * nobody is bound there. */
static int lookup(const struct unix_addr *a, struct usock **out)
{
	if (a->len <= 2)
		return -EINVAL;
	if (abstract(a)) {
		*out = find_abstract(a);
		return *out ? 0 : -ECONNREFUSED;
	}
	struct node *n = kalloc(sizeof *n);
	if (!n)
		return -ENOMEM;
	int r = vfs_lookup(process_cwd(), a->sun + 2, LOOKUP_FOLLOW, n);
	if (!r && (n->kind != NODE_FS || !n->ino))
		r = -ENOENT;
	struct fs_stat st;
	if (!r && !(r = vfs_stat(n, &st)) && (st.mode & S_IFMT) != S_IFSOCK)
		r = -ECONNREFUSED;
	*out = r ? 0 : find_node(n->m, n->ino);
	kfree(n, sizeof *n);
	return r ? r : *out ? 0 : -ECONNREFUSED;
}

/* An abstract name of five hex digits, as Linux's autobind. */
static int autobind(struct usock *u)
{
	static uint32_t next;
	for (int tries = 0; tries < 0x100000; tries++) {
		struct unix_addr a = { 8, { AF_UNIX, 0, 0 } };
		uint32_t v = next++ & 0xfffff;
		for (int i = 0; i < 5; i++)
			a.sun[3 + i] = "0123456789abcdef"[(v >> (16 - 4 * i)) & 15];
		if (!find_abstract(&a)) {
			u->name = a;
			u->next_bound = bound, bound = u;
			return 0;
		}
	}
	return -ENOSPC;
}

static int do_bind(struct usock *u, const struct unix_addr *a)
{
	if (u->name.len)
		return -EINVAL;
	if (a->len == 2)
		return autobind(u);
	if (abstract(a)) {
		if (find_abstract(a))
			return -EADDRINUSE;
	} else {
		struct node *n = kalloc(sizeof *n);
		if (!n)
			return -ENOMEM;
		int r = fs_make_node(AT_FDCWD, a->sun + 2, S_IFSOCK | 0777, n);
		if (!r) {
			struct usock *stale = find_node(n->m, n->ino);
			if (stale) /* bound to a node since unlinked whose inode number came back */
				stale->m = 0;
			u->m = n->m, u->ino = n->ino;
		}
		kfree(n, sizeof *n);
		if (r)
			return r == -EEXIST ? -EADDRINUSE : r;
	}
	u->name = *a;
	u->next_bound = bound, bound = u;
	return 0;
}

/* --- data ---------------------------------------------------------------------------- */

/* The pipe u writes to, and its reader (for records and datagrams): a
 * connection's peer, or a datagram's destination. */
static struct usock *receiver(struct usock *u, struct usock *dest)
{
	return dest ? dest : u->peer;
}

static uint32_t room(const struct pipe *p)
{
	return p->size - p->len;
}

/* Waits until a write of need bytes into to's queue goes in at once, so
 * that a record attached now sits at its first byte. */
static int wait_room(struct file *f, struct usock *to, uint32_t need)
{
	while (room(to->rx) < need) {
		if (to->closed || !to->rx->readers)
			return 0; /* the write fails */
		int r = stream_block(f);
		if (r)
			return r;
	}
	return 0;
}

static void record_add(struct usock *to, struct record *r)
{
	r->pos = to->rx_taken + to->rx->len;
	struct record **p = &to->records;
	while (*p)
		p = &(*p)->next;
	*p = r;
}

/* One message of len bytes from u (to dest, or its peer), with rec (or
 * NULL) handed over at its first byte. */
static long end_send(struct file *f, struct usock *dest, const void *buf, size_t len, int nosignal,
		     struct record **rec)
{
	struct usock *u = f->priv, *to = receiver(u, dest);
	if (connection(u) && u->state != CONNECTED)
		return -ENOTCONN;
	if (!to)
		return -ENOTCONN;
	if (!u->tx_open || (connection(u) && !u->tx->readers)) {
		if (!nosignal)
			signal_raise_thread(SIGPIPE);
		return -EPIPE;
	}
	if (!connection(u) && to->closed)
		return -ECONNREFUSED;
	if (to->passcred && !*rec) { /* credentials go with every message to a socket that asks */
		if (!(*rec = kalloc(sizeof **rec)))
			return -ENOMEM;
		(*rec)->cred = my_cred(), (*rec)->has_cred = 1;
	}
	if (!datagrams(u)) {
		if (*rec && len) { /* no bytes, no message to carry them (Linux drops them too) */
			int r = wait_room(f, to, len <= PIPE_BUF ? (uint32_t)len : 1);
			if (r)
				return r;
			(*rec)->len = len;
			record_add(to, *rec);
			*rec = 0;
		}
		return pipe_write(u->tx, f, buf, len, 0);
	}
	const struct unix_addr *from = name_of(u);
	struct dgram_hdr h = { (uint32_t)len, u->name.len ? from->len : 0 };
	size_t total = sizeof h + h.name_len + len;
	if (total > SOCKET_BUFFER)
		return -EMSGSIZE;
	char *tmp = kalloc(total);
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, &h, sizeof h);
	memcpy(tmp + sizeof h, from->sun, h.name_len);
	memcpy(tmp + sizeof h + h.name_len, buf, len);
	long r = wait_room(f, to, (uint32_t)total);
	if (!r && *rec) {
		(*rec)->len = total;
		record_add(to, *rec);
		*rec = 0;
	}
	if (!r)
		r = pipe_write(to->rx, f, tmp, total, 1);
	kfree(tmp, total);
	return r < 0 ? r : (long)len;
}

/* The record a read starting now meets first, and how far the read may go:
 * through that record's message, no further. */
static struct record *next_record(struct usock *u, size_t *limit)
{
	struct record *r = u->records;
	if (r && r->pos + r->len - u->rx_taken < *limit)
		*limit = (size_t)(r->pos + r->len - u->rx_taken);
	return r;
}

/* One receive into buf: a stream's bytes, or one datagram (*trunc: its
 * bytes beyond len, dropped unless peeking; from: its sender's name).
 * *rec: the record the read reached, taken off unless peeking. */
static long end_recv(struct file *f, void *buf, size_t len, int peek, size_t *trunc, struct unix_addr *from,
		     struct record **rec)
{
	struct usock *u = f->priv;
	*trunc = 0, *rec = 0;
	if (from)
		from->len = 0;
	if (connection(u) && u->state != CONNECTED)
		return u->type == SOCK_STREAM ? -EINVAL : -ENOTCONN; /* as Linux */
	if (!u->rx_open)
		return 0;
	uint64_t start = u->rx_taken;
	long r;
	if (!datagrams(u)) {
		/* the bytes there first, then the records they came with: no
		 * sender runs between the two looks (the kernel is not preempted) */
		while (!u->rx->len && u->rx->writers && !u->rx->shut)
			if ((r = stream_block(f)))
				return r;
		size_t limit = len;
		struct record *next = next_record(u, &limit);
		if ((r = pipe_read(u->rx, f, buf, limit, peek)) <= 0)
			return r;
		if (next && next->pos < start + (uint64_t)r)
			*rec = next;
		if (from && u->peer && u->peer->name.len)
			*from = u->peer->name;
	} else {
		struct dgram_hdr h;
		if ((r = pipe_read(u->rx, f, &h, sizeof h, 1)) <= 0)
			return r;
		size_t total = sizeof h + h.name_len + h.len;
		char *tmp = kalloc(total);
		if (!tmp)
			return -ENOMEM;
		pipe_read(u->rx, f, tmp, total, peek); /* the whole datagram went in at once */
		size_t k = h.len < len ? h.len : len;
		memcpy(buf, tmp + sizeof h + h.name_len, k);
		if (from && h.name_len) {
			from->len = h.name_len;
			memcpy(from->sun, tmp + sizeof h, h.name_len);
		}
		kfree(tmp, total);
		*trunc = h.len - k;
		r = (long)k;
		if (u->records && u->records->pos == start)
			*rec = u->records;
		if (!peek)
			u->rx_taken += total;
	}
	if (!peek && !datagrams(u))
		u->rx_taken += (uint64_t)r;
	if (*rec && !peek)
		u->records = (*rec)->next;
	return r;
}

static void record_free(struct record *r)
{
	for (int i = 0; i < r->nfiles; i++)
		file_put(r->files[i]);
	kfree(r, sizeof *r + (size_t)r->nfiles * sizeof r->files[0]);
}

/* Writes one control message if it fits in m's control buffer after used
 * bytes: its size with padding, or 0. */
static size_t cmsg_put(struct msghdr_k *m, size_t used, int type, const void *data, size_t len)
{
	if (!m || m->controllen < used + sizeof(struct cmsghdr_k) + len)
		return 0;
	struct cmsghdr_k h = { sizeof h + len, SOL_SOCKET, type };
	memcpy((char *)m->control + used, &h, sizeof h);
	memcpy((char *)m->control + used + sizeof h, data, len);
	size_t space = CMSG_SPACE(len);
	return used + space <= m->controllen ? space : m->controllen - used;
}

/* A receive's end for a record: its credentials (to a socket that asks)
 * and descriptors written as control messages into m, as many as fit
 * (MSG_CTRUNC for the rest, which are closed); without m all are dropped.
 * A peek installs copies and leaves the record; a read consumes it. */
static void put_control(struct usock *u, struct record *r, int peek, struct msghdr_k *m, int cloexec)
{
	size_t used = 0, k;
	if (r && r->has_cred && u->passcred && m) {
		if ((k = cmsg_put(m, used, SCM_CREDENTIALS, &r->cred, sizeof r->cred)))
			used += k;
		else
			m->flags |= MSG_CTRUNC;
	}
	if (r && r->nfiles && m) {
		size_t room_left = m->controllen - used;
		size_t fit = room_left > sizeof(struct cmsghdr_k) ? (room_left - sizeof(struct cmsghdr_k)) / sizeof(int) : 0;
		int fds[SCM_MAX_FD], got = 0;
		for (int i = 0; i < r->nfiles && (size_t)got < fit; i++) {
			r->files[i]->refs++;
			if ((fds[got] = fd_install(r->files[i], 0, cloexec)) < 0) {
				r->files[i]->refs--;
				break;
			}
			got++;
		}
		if (got)
			used += cmsg_put(m, used, SCM_RIGHTS, fds, (size_t)got * sizeof(int));
		if (got < r->nfiles)
			m->flags |= MSG_CTRUNC;
	}
	if (m)
		m->controllen = used;
	if (r && !peek)
		record_free(r);
}

/* --- the file -------------------------------------------------------------------------- */

/* One send or receive: its flags, and what it carries besides bytes. */
struct call {
	long flags;
	struct usock *dest;        /* sendto's */
	struct unix_addr from;     /* recvfrom's */
	struct record *rec;        /* sent, or received */
	size_t trunc;
};

static long recv_op(struct file *f, void *buf, size_t len, struct call *c)
{
	int peek = (c->flags & MSG_PEEK) != 0;
	long got = end_recv(f, buf, len, peek, &c->trunc, &c->from, &c->rec);
	struct usock *u = f->priv;
	/* MSG_WAITALL: a stream read goes on until len, EOF, a signal or descriptors */
	while ((c->flags & MSG_WAITALL) && !datagrams(u) && !peek && !c->rec && got > 0 && (size_t)got < len) {
		long more = end_recv(f, (char *)buf + got, len - got, 0, &c->trunc, 0, &c->rec);
		if (more <= 0)
			break;
		got += more;
	}
	return got;
}

static long send_op(struct file *f, void *buf, size_t len, struct call *c)
{
	return end_send(f, c->dest, buf, len, (c->flags & MSG_NOSIGNAL) != 0, &c->rec);
}

/* MSG_DONTWAIT: this call only, as if the file were O_NONBLOCK. */
static long with_flags(struct file *f, long (*op)(struct file *, void *, size_t, struct call *), void *buf,
		       size_t len, struct call *c)
{
	int saved = f->flags;
	if (c->flags & MSG_DONTWAIT)
		f->flags |= O_NONBLOCK;
	long r = op(f, buf, len, c);
	f->flags = saved;
	return r;
}

static long sock_read(struct file *f, void *buf, size_t len)
{
	struct call c = { 0 };
	long r = recv_op(f, buf, len, &c);
	if (r >= 0)
		put_control(f->priv, c.rec, 0, 0, 0);
	return r;
}

static long sock_write(struct file *f, const void *buf, size_t len)
{
	struct record *creds = 0; /* made for a receiver that asks for them */
	long r = end_send(f, 0, buf, len, 0, &creds);
	if (creds)
		record_free(creds);
	return r;
}

/* As Linux's unix_poll and unix_dgram_poll. */
static unsigned sock_poll(struct file *f, uint64_t *deadline)
{
	(void)deadline;
	struct usock *u = f->priv;
	if (u->state == LISTENING)
		return u->pending ? POLLIN | POLLRDNORM : 0;
	if (connection(u) && u->state != CONNECTED)
		return POLLOUT | POLLWRNORM | POLLHUP;
	unsigned ev = 0;
	if (!connection(u)) {
		if (u->rx->len || !u->rx_open)
			ev |= POLLIN | POLLRDNORM;
		if (!u->rx_open)
			ev |= POLLRDHUP;
		if (!u->rx_open && !u->tx_open)
			ev |= POLLHUP;
		struct usock *to = u->peer;
		if (!to || to->closed || room(to->rx) >= PIPE_BUF)
			ev |= POLLOUT | POLLWRNORM;
		return ev;
	}
	int peer_closed = !u->rx->writers;
	int rcv_shut = !u->rx_open || peer_closed || u->rx->shut, snd_shut = !u->tx_open || peer_closed;
	if (u->rx->len || rcv_shut)
		ev |= POLLIN | POLLRDNORM;
	if (rcv_shut)
		ev |= POLLRDHUP;
	if (rcv_shut && snd_shut)
		ev |= POLLHUP;
	if (room(u->tx) >= PIPE_BUF || peer_closed)
		ev |= POLLOUT | POLLWRNORM;
	return ev;
}

static const struct socket_calls unix_calls;
static const struct stream_ops sock_ops = {
	.name = "socket", .type = S_IFSOCK, .read = sock_read, .write = sock_write, .poll = sock_poll,
	.release = sock_release, .sock = &unix_calls,
};

/* The calls below are the family's (socket.c checked fd is a socket of it). */
static struct file *sock_file(long fd, long *err)
{
	return socket_file(fd, err);
}

/* For a call that does not wait. */
static struct usock *sock_of(long fd, long *err)
{
	struct file *f = sock_file(fd, err);
	return f ? f->priv : 0;
}

/* For a call that may wait: another thread may close the fd meanwhile, the
 * reference keeps the file (file_put when done). */
static struct file *sock_hold(long fd, long *err)
{
	struct file *f = sock_file(fd, err);
	if (f)
		f->refs++;
	return f;
}

static long open_file(struct usock *u, long flags)
{
	return stream_open(&sock_ops, u, O_RDWR | (int)(flags & (SOCK_NONBLOCK | SOCK_CLOEXEC)));
}

static int type_of(long type, long proto, long *err)
{
	int kind = (int)(type & 0xf);
	*err = 0;
	if (kind != SOCK_STREAM && kind != SOCK_DGRAM && kind != SOCK_SEQPACKET)
		*err = -ESOCKTNOSUPPORT;
	else if (type & ~(long)(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC))
		*err = -EINVAL;
	else if (proto)
		*err = -EPROTONOSUPPORT;
	return kind;
}

long unix_socket_new(long type, long proto)
{
	long err;
	int kind = type_of(type, proto, &err);
	if (err)
		return err;
	struct usock *u = usock_new(kind);
	if (!u)
		return -ENOMEM;
	long fd = open_file(u, type);
	if (fd < 0) {
		usock_close(u);
		usock_put(u);
	}
	return fd;
}

long unix_socketpair(long type, long proto, int *sv)
{
	long err;
	int kind = type_of(type, proto, &err);
	if (err)
		return err;
	if (!user_ok(sv, 2 * sizeof(int)))
		return -EFAULT;
	struct usock *a = usock_new(kind), *b = a ? usock_new(kind) : 0;
	int r = !b ? -ENOMEM : 0;
	if (!r && kind != SOCK_DGRAM)
		r = join(a, b);
	else if (!r) { /* each one's destination is the other */
		a->peer = b, b->peer = a;
		a->refs++, b->refs++;
		a->state = b->state = CONNECTED;
	}
	if (!r)
		a->peer_cred = b->peer_cred = my_cred();
	long fa = r ? r : open_file(a, type), fb = fa < 0 ? fa : open_file(b, type);
	if (fb < 0) {
		if (fa >= 0)
			fd_close(fa); /* closes a */
		else if (a)
			usock_close(a), usock_put(a);
		if (b)
			usock_close(b), usock_put(b);
		return fb;
	}
	sv[0] = (int)fa, sv[1] = (int)fb;
	return 0;
}

static long unix_bind(long fd, const void *addr, long len)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	struct unix_addr a;
	if (!u)
		return err;
	if ((err = addr_in(addr, len, &a)))
		return err;
	return do_bind(u, &a);
}

static long unix_listen(long fd, long backlog)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	if (!u)
		return err;
	if (!connection(u))
		return -EOPNOTSUPP;
	if (!u->name.len || u->state == CONNECTED)
		return -EINVAL;
	u->state = LISTENING;
	u->backlog = backlog < 0 ? 0 : backlog > SOMAXCONN ? SOMAXCONN : (int)backlog;
	u->peer_cred = my_cred();
	stream_changed(); /* connects waiting for room may go on */
	return 0;
}

/* A connection to a listener: the accepting end is made now and waits in
 * the listener's queue; connect returns at once, as Linux's does. */
static long connect_stream(struct file *f, struct usock *u, const struct unix_addr *a)
{
	if (u->state == CONNECTED)
		return -EISCONN;
	if (u->state == LISTENING)
		return -EINVAL;
	for (;;) {
		struct usock *l;
		long r = lookup(a, &l);
		if (r)
			return r;
		if (l->type != u->type)
			return -EPROTOTYPE;
		if (l->state != LISTENING)
			return -ECONNREFUSED;
		if (l->npending <= l->backlog) {
			struct usock *s = usock_new(u->type);
			if (!s)
				return -ENOMEM;
			if ((r = join(u, s))) {
				usock_put(s);
				return r;
			}
			s->name = l->name;
			s->peer_cred = my_cred();
			u->peer_cred = l->peer_cred;
			struct usock **p = &l->pending;
			while (*p)
				p = &(*p)->next_pending;
			*p = s; /* the queue's reference is the one usock_new gave */
			l->npending++;
			stream_changed();
			return 0;
		}
		if ((r = stream_block(f)))
			return r; /* the listener's queue is full */
	}
}

static long unix_connect(long fd, const void *addr, long len)
{
	long err;
	struct usock *u = sock_of(fd, &err), *to;
	struct unix_addr a;
	if (!u)
		return err;
	if ((err = addr_in(addr, len, &a)))
		return err;
	if (connection(u)) { /* it may wait for room in the listener's queue */
		struct file *f = sock_hold(fd, &err);
		err = connect_stream(f, u, &a);
		file_put(f);
		return err;
	}
	if (a.len == 2) { /* AF_UNSPEC-like: a datagram socket forgets its destination */
		if (u->peer)
			usock_put(u->peer);
		u->peer = 0, u->state = UNCONNECTED;
		return 0;
	}
	if ((err = lookup(&a, &to)))
		return err;
	if (to->type != u->type)
		return -EPROTOTYPE;
	to->refs++;
	if (u->peer)
		usock_put(u->peer);
	u->peer = to, u->state = CONNECTED;
	u->peer_cred = my_cred();
	return 0;
}

static long unix_accept4(long fd, void *addr, int *alen, long flags)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	if (!u)
		return err;
	if (flags & ~(long)(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (u->state != LISTENING)
		return -EINVAL;
	if (addr && !user_ok(alen, sizeof *alen))
		return -EFAULT;
	if (addr && *alen < 0)
		return -EINVAL;
	struct file *f = sock_hold(fd, &err);
	while (!u->pending && !u->closed && u->state == LISTENING && !(err = stream_block(f)))
		;
	struct usock *s = err ? 0 : u->pending;
	file_put(f);
	if (err)
		return err;
	if (!s)
		return -EINVAL;
	u->pending = s->next_pending, u->npending--;
	stream_changed(); /* room in the queue */
	long nfd = open_file(s, flags);
	if (nfd < 0) {
		usock_close(s);
		usock_put(s);
		return nfd;
	}
	if ((err = addr_out(name_of(s->peer), addr, alen))) {
		fd_close(nfd);
		return err;
	}
	return nfd;
}

/* --- send and receive -------------------------------------------------------------- */

/* sendto's destination, held for the call (usock_put): a named socket for
 * a datagram; a stream refuses an address, a seqpacket ignores it (as
 * Linux). */
static long dest_of(struct usock *u, const void *addr, long alen, struct usock **dest)
{
	*dest = 0;
	if (!addr || !alen || u->type == SOCK_SEQPACKET)
		return 0;
	if (u->type == SOCK_STREAM)
		return u->state == CONNECTED ? -EISCONN : -EOPNOTSUPP;
	struct unix_addr a;
	long r = addr_in(addr, alen, &a);
	if (!r && !(r = lookup(&a, dest)) && (*dest)->type != u->type)
		r = -EPROTOTYPE;
	if (r)
		*dest = 0;
	else
		(*dest)->refs++;
	return r;
}

/* The descriptors (SCM_RIGHTS) and credentials (SCM_CREDENTIALS) of a
 * sendmsg's control data, as a record: -EINVAL for anything else. */
static long parse_control(const struct msghdr_k *m, struct record **out)
{
	*out = 0;
	if (!m->controllen)
		return 0;
	if (m->controllen > 65536 || !user_ok(m->control, m->controllen))
		return m->controllen > 65536 ? -ENOBUFS : -EFAULT;
	const char *c = m->control, *end = c + m->controllen;
	int nfds = 0;
	struct ucred_k cred;
	int has_cred = 0;
	for (const char *p = c; p + sizeof(struct cmsghdr_k) <= end;) {
		struct cmsghdr_k h;
		memcpy(&h, p, sizeof h);
		if (h.len < sizeof h || h.len > (size_t)(end - p) || h.level != SOL_SOCKET)
			return -EINVAL;
		size_t n = h.len - sizeof h;
		if (h.type == SCM_RIGHTS) {
			if (n % sizeof(int) || nfds + n / sizeof(int) > SCM_MAX_FD)
				return -EINVAL;
			for (size_t i = 0; i < n / sizeof(int); i++) {
				int fd;
				memcpy(&fd, p + sizeof h + i * sizeof fd, sizeof fd);
				if (!fd_get(fd))
					return -EBADF;
			}
			nfds += (int)(n / sizeof(int));
		} else if (h.type == SCM_CREDENTIALS && n == sizeof cred) {
			memcpy(&cred, p + sizeof h, sizeof cred);
			struct ucred_k own = my_cred();
			if (cred.pid != own.pid || cred.uid != own.uid || cred.gid != own.gid)
				return -EPERM; /* one's own, as an unprivileged sender */
			has_cred = 1;
		} else {
			return -EINVAL;
		}
		p += CMSG_ALIGN(h.len);
	}
	struct record *r = kalloc(sizeof *r + (size_t)nfds * sizeof r->files[0]);
	if (!r)
		return -ENOMEM;
	r->cred = my_cred(), r->has_cred = has_cred;
	for (const char *p = c; p + sizeof(struct cmsghdr_k) <= end;) {
		struct cmsghdr_k h;
		memcpy(&h, p, sizeof h);
		for (size_t i = 0; h.type == SCM_RIGHTS && i < (h.len - sizeof h) / sizeof(int); i++) {
			int fd;
			memcpy(&fd, p + sizeof h + i * sizeof fd, sizeof fd);
			struct file *f = fd_get(fd); /* each checked above */
			f->refs++;
			r->files[r->nfiles++] = f;
		}
		p += CMSG_ALIGN(h.len);
	}
	*out = r;
	return 0;
}

static long unix_sendto(long fd, const void *buf, size_t len, long flags, const void *addr, long alen)
{
	long err;
	struct file *f = sock_hold(fd, &err);
	struct call c = { .flags = flags };
	if (!f)
		return err;
	if (len && !user_ok(buf, len))
		err = -EFAULT;
	else if (!(err = dest_of(f->priv, addr, alen, &c.dest)))
		err = with_flags(f, send_op, (void *)buf, len, &c);
	if (c.rec)
		record_free(c.rec);
	if (c.dest)
		usock_put(c.dest);
	file_put(f);
	return err;
}

static long unix_recvfrom(long fd, void *buf, size_t len, long flags, void *addr, int *alen)
{
	long r;
	struct file *f = sock_hold(fd, &r);
	struct call c = { .flags = flags };
	if (!f)
		return r;
	r = len && !user_ok(buf, len) ? -EFAULT : with_flags(f, recv_op, buf, len, &c);
	if (r >= 0) {
		put_control(f->priv, c.rec, (flags & MSG_PEEK) != 0, 0, 0);
		long err = addr_out(&c.from, addr, alen); /* an unnamed sender: length 0, as Linux */
		r = err ? err : flags & MSG_TRUNC ? r + (long)c.trunc : r;
	}
	file_put(f);
	return r;
}

/* sendmsg/recvmsg: the iovecs gathered through a kernel buffer, so a
 * datagram stays one. */
static long msg_io(long fd, struct msghdr_k *m, long flags, int sending)
{
	long r;
	struct file *f = sock_hold(fd, &r);
	struct call c = { .flags = flags };
	size_t total = 0;
	char *tmp = 0;
	if (!f)
		return r;
	struct usock *u = f->priv;
	if ((r = socket_iov_total(m, SOCKET_BUFFER, &total)))
		goto out;
	if (sending && ((r = dest_of(u, m->name, m->namelen, &c.dest)) || (r = parse_control(m, &c.rec))))
		goto out;
	if (!sending && m->controllen && !user_ok(m->control, m->controllen)) {
		r = -EFAULT;
		goto out;
	}
	if (!(tmp = kalloc(total ? total : 1))) {
		r = -ENOMEM;
		goto out;
	}
	if (sending) {
		socket_iov_copy(m, tmp, total, 0);
		r = with_flags(f, send_op, tmp, total, &c);
		goto out;
	}
	r = with_flags(f, recv_op, tmp, total, &c);
	if (r < 0)
		goto out;
	socket_iov_copy(m, tmp, (size_t)r, 1);
	m->flags = c.trunc ? MSG_TRUNC : 0;
	put_control(u, c.rec, (flags & MSG_PEEK) != 0, m, (flags & MSG_CMSG_CLOEXEC) != 0);
	c.rec = 0;
	if (m->name) { /* an unnamed sender: length 0, as Linux */
		long e = name_copy(&c.from, m->name, m->namelen);
		if (e)
			r = e;
		else
			m->namelen = c.from.len;
	}
	if (r >= 0 && (flags & MSG_TRUNC))
		r += (long)c.trunc;
out:
	if (c.rec && sending) /* not sent: its descriptors stay the sender's alone */
		record_free(c.rec);
	if (c.dest)
		usock_put(c.dest);
	if (tmp)
		kfree(tmp, total ? total : 1);
	file_put(f);
	return r;
}

static long unix_sendmsg(long fd, struct msghdr_k *m, long flags)
{
	return msg_io(fd, m, flags, 1);
}

static long unix_recvmsg(long fd, struct msghdr_k *m, long flags)
{
	return msg_io(fd, m, flags, 0);
}

/* --- the rest ---------------------------------------------------------------------------- */

static long unix_shutdown(long fd, long how)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	if (!u)
		return err;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	if (connection(u) && u->state != CONNECTED)
		return -ENOTCONN;
	if (how != SHUT_WR)
		u->rx_open = 0;
	if (how != SHUT_RD && u->tx_open) { /* the peer reads EOF once it has read what is there */
		u->tx_open = 0;
		if (u->tx)
			u->tx->shut = 1;
	}
	stream_changed();
	return 0;
}

static long unix_getname(long fd, void *addr, int *alen, int peer)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	if (!u)
		return err;
	if (!addr)
		return -EFAULT;
	if (peer && (!u->peer || u->state != CONNECTED))
		return -ENOTCONN;
	return addr_out(name_of(peer ? u->peer : u), addr, alen);
}

static long unix_getsockopt(long fd, long level, long name, void *val, int *len)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	if (!u)
		return err;
	if (level != SOL_SOCKET)
		return -EOPNOTSUPP;
	int v;
	switch (name) {
	case SO_TYPE: v = u->type; break;
	case SO_ERROR: v = 0; break;
	case SO_SNDBUF: case SO_RCVBUF: v = SOCKET_BUFFER; break;
	case SO_DOMAIN: v = AF_UNIX; break;
	case SO_PROTOCOL: v = 0; break;
	case SO_PASSCRED: v = u->passcred; break;
	case SO_ACCEPTCONN: v = u->state == LISTENING; break;
	case SO_PEERCRED: {
		struct ucred_k none = { 0, -1, -1 };
		return socket_opt_out(u->state == CONNECTED || u->state == LISTENING ? &u->peer_cred : &none,
			       sizeof none, val, len);
	}
	default: return -ENOPROTOOPT;
	}
	return socket_opt_out(&v, sizeof v, val, len);
}

/* Buffer sizes and timeouts are accepted and change nothing (the buffers
 * stay Linux's defaults); SO_PASSCRED is kept. */
static long unix_setsockopt(long fd, long level, long name, const void *val, long len)
{
	long err;
	struct usock *u = sock_of(fd, &err);
	if (!u)
		return err;
	if (len < 0)
		return -EINVAL;
	if (len && !user_ok(val, (size_t)len))
		return -EFAULT;
	if (level != SOL_SOCKET)
		return -ENOPROTOOPT;
	if (name == SO_PASSCRED) {
		int v = 0;
		if (len < (long)sizeof v)
			return -EINVAL;
		memcpy(&v, val, sizeof v);
		u->passcred = v != 0;
	}
	return 0;
}

static const struct socket_calls unix_calls = {
	unix_bind, unix_connect, unix_listen, unix_accept4, unix_sendto, unix_recvfrom, unix_sendmsg,
	unix_recvmsg, unix_shutdown, unix_getname, unix_getsockopt, unix_setsockopt,
};
