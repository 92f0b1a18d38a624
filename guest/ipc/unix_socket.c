/* SPDX-License-Identifier: GPL-2.0-only */
/* Unix socket pairs (unix_socket.h): each end reads one pipe and writes the
 * other.  Datagrams keep their bounds: each is stored as a 4-byte length
 * and its bytes, written whole, read whole (the rest of a long one dropped,
 * MSG_TRUNC).  Passing descriptors (SCM_RIGHTS) is not supported: a message
 * with control data fails with EOPNOTSUPP rather than losing them. */
#include <errno.h>
#include <string.h>
#include "ipc/pipe.h"
#include "ipc/stream.h"
#include "ipc/unix_socket.h"
#include "kernel.h"
#include "linux_abi.h"
#include "proc/signal.h"

#define AF_UNIX        1
#define SOCK_STREAM    1
#define SOCK_DGRAM     2
#define SOCK_SEQPACKET 5
#define SOCK_NONBLOCK  O_NONBLOCK
#define SOCK_CLOEXEC   O_CLOEXEC
#define MSG_PEEK       0x2
#define MSG_TRUNC      0x20
#define MSG_DONTWAIT   0x40
#define MSG_WAITALL    0x100
#define MSG_NOSIGNAL   0x4000
#define MSG_CMSG_CLOEXEC 0x40000000
#define SOL_SOCKET     1
#define SO_TYPE        3
#define SO_ERROR       4
#define SO_SNDBUF      7
#define SO_RCVBUF      8
#define SO_DOMAIN      39
#define SO_PROTOCOL    38
#define SHUT_RD        0
#define SHUT_WR        1
#define SHUT_RDWR      2

struct unix_end {
	struct pipe *rx, *tx;
	int type;
	int rx_open, tx_open; /* not shut down */
};

struct msghdr_k {
	void *name;
	uint32_t namelen, pad0;
	struct kiovec *iov;
	uint64_t iovlen;
	void *control;
	uint64_t controllen;
	int32_t flags, pad1;
};

static int datagrams(const struct unix_end *u)
{
	return u->type != SOCK_STREAM;
}

/* One receive into buf: a stream's bytes, or one datagram (*trunc: its
 * bytes beyond len, dropped unless peeking). */
static long end_recv(struct file *f, void *buf, size_t len, int peek, size_t *trunc)
{
	struct unix_end *u = f->priv;
	*trunc = 0;
	if (!u->rx_open)
		return 0;
	if (!datagrams(u))
		return pipe_read(u->rx, f, buf, len, peek);
	uint32_t n;
	long r = pipe_read(u->rx, f, &n, sizeof n, 1);
	if (r <= 0)
		return r;
	/* the whole datagram went in at once: its bytes follow */
	char *tmp = kalloc(n + sizeof n);
	if (!tmp)
		return -ENOMEM;
	pipe_read(u->rx, f, tmp, n + sizeof n, peek);
	size_t k = n < len ? n : len;
	memcpy(buf, tmp + sizeof n, k);
	kfree(tmp, n + sizeof n);
	*trunc = n - k;
	return (long)k;
}

static long end_send(struct file *f, const void *buf, size_t len, int nosignal)
{
	struct unix_end *u = f->priv;
	if (!u->tx_open) {
		if (!nosignal)
			signal_raise_thread(SIGPIPE);
		return -EPIPE;
	}
	if (!datagrams(u)) {
		if (nosignal && !u->tx->readers)
			return -EPIPE;
		return pipe_write(u->tx, f, buf, len, 0);
	}
	if (len > SOCKET_BUFFER - sizeof(uint32_t))
		return -EMSGSIZE;
	if (!u->tx->readers) {
		if (!nosignal)
			signal_raise_thread(SIGPIPE);
		return -EPIPE;
	}
	char *tmp = kalloc(len + sizeof(uint32_t));
	if (!tmp)
		return -ENOMEM;
	uint32_t n = (uint32_t)len;
	memcpy(tmp, &n, sizeof n);
	memcpy(tmp + sizeof n, buf, len);
	long r = pipe_write(u->tx, f, tmp, len + sizeof n, 1);
	kfree(tmp, len + sizeof n);
	return r < 0 ? r : (long)len;
}

static long sock_read(struct file *f, void *buf, size_t len)
{
	size_t trunc;
	return end_recv(f, buf, len, 0, &trunc);
}

static long sock_write(struct file *f, const void *buf, size_t len)
{
	return end_send(f, buf, len, 0);
}

/* As Linux's unix_poll: readable at EOF too, POLLHUP once both ways are
 * shut (the peer's close shuts both). */
static unsigned sock_poll(struct file *f, uint64_t *deadline)
{
	(void)deadline;
	struct unix_end *u = f->priv;
	int peer_closed = !u->rx->writers;
	int rcv_shut = !u->rx_open || peer_closed || u->rx->shut, snd_shut = !u->tx_open || peer_closed;
	unsigned ev = 0;
	if (u->rx->len || rcv_shut)
		ev |= POLLIN | POLLRDNORM;
	if (rcv_shut)
		ev |= POLLRDHUP;
	if (rcv_shut && snd_shut)
		ev |= POLLHUP;
	if (u->tx->size - u->tx->len >= PIPE_BUF)
		ev |= POLLOUT | POLLWRNORM;
	return ev;
}

static void sock_release(struct file *f)
{
	struct unix_end *u = f->priv;
	pipe_drop(u->rx, 1);
	pipe_drop(u->tx, 0);
	kfree(u, sizeof *u);
}

static const struct stream_ops sock_ops = { "socket", S_IFSOCK, sock_read, sock_write, sock_poll, sock_release };

static struct file *sock_of(long fd, long *err)
{
	struct file *f = fd_get(fd);
	*err = !f ? -EBADF : f->kind != FILE_STREAM || f->ops != &sock_ops ? -ENOTSOCK : 0;
	return *err ? 0 : f;
}

long sys_socketpair(long domain, long type, long proto, int *sv)
{
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT; /* there is no network in the guest */
	int kind = (int)(type & 0xf);
	if (kind != SOCK_STREAM && kind != SOCK_DGRAM && kind != SOCK_SEQPACKET)
		return -EOPNOTSUPP;
	if (type & ~(long)(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (proto)
		return -EPROTONOSUPPORT;
	if (!user_ok(sv, 2 * sizeof(int)))
		return -EFAULT;
	struct pipe *a = pipe_new(SOCKET_BUFFER), *b = a ? pipe_new(SOCKET_BUFFER) : 0;
	struct unix_end *ua = kalloc(sizeof *ua), *ub = kalloc(sizeof *ub);
	if (!a || !b || !ua || !ub) {
		if (a)
			pipe_drop(a, 1), pipe_drop(a, 0);
		if (b)
			pipe_drop(b, 1), pipe_drop(b, 0);
		kfree(ua, sizeof *ua), kfree(ub, sizeof *ub);
		return -ENOMEM;
	}
	*ua = (struct unix_end){ a, b, kind, 1, 1 };
	*ub = (struct unix_end){ b, a, kind, 1, 1 };
	int flags = O_RDWR | (int)(type & (SOCK_NONBLOCK | SOCK_CLOEXEC));
	long fa = stream_open(&sock_ops, ua, flags);
	if (fa < 0) {
		pipe_drop(a, 1), pipe_drop(a, 0), pipe_drop(b, 1), pipe_drop(b, 0);
		kfree(ua, sizeof *ua), kfree(ub, sizeof *ub);
		return fa;
	}
	long fb = stream_open(&sock_ops, ub, flags);
	if (fb < 0) {
		pipe_drop(b, 1), pipe_drop(a, 0);
		kfree(ub, sizeof *ub);
		fd_close(fa);
		return fb;
	}
	sv[0] = (int)fa, sv[1] = (int)fb;
	return 0;
}

/* MSG_DONTWAIT: this call only, as if the file were O_NONBLOCK (flags
 * restored even if the fd was closed meanwhile: the reference keeps f). */
static long with_flags(struct file *f, long flags, long (*op)(struct file *, void *, size_t, long, size_t *),
		       void *buf, size_t len, size_t *trunc)
{
	int saved = f->flags;
	if (flags & MSG_DONTWAIT)
		f->flags |= O_NONBLOCK;
	f->refs++; /* another thread may close the fd while this one waits */
	long r = op(f, buf, len, flags, trunc);
	f->flags = saved;
	file_put(f);
	return r;
}

static long recv_op(struct file *f, void *buf, size_t len, long flags, size_t *trunc)
{
	long got = end_recv(f, buf, len, (flags & MSG_PEEK) != 0, trunc);
	struct unix_end *u = f->priv;
	/* MSG_WAITALL: a stream read goes on until len, EOF or a signal */
	while ((flags & MSG_WAITALL) && !datagrams(u) && !(flags & MSG_PEEK) && got > 0 && (size_t)got < len) {
		long more = end_recv(f, (char *)buf + got, len - got, 0, trunc);
		if (more <= 0)
			break;
		got += more;
	}
	return got;
}

static long send_op(struct file *f, void *buf, size_t len, long flags, size_t *trunc)
{
	(void)trunc;
	return end_send(f, buf, len, (flags & MSG_NOSIGNAL) != 0);
}

/* A pair's peer address: AF_UNIX and no name (2 bytes). */
static long put_addr(void *addr, int *alen)
{
	if (!addr)
		return 0;
	if (!user_ok(alen, sizeof *alen))
		return -EFAULT;
	if (*alen < 0)
		return -EINVAL;
	uint16_t family = AF_UNIX;
	if (*alen >= 2) {
		if (!user_ok(addr, 2))
			return -EFAULT;
		memcpy(addr, &family, 2);
	}
	*alen = 2;
	return 0;
}

/* send/recv of one buffer: the socket found, the buffer checked. */
static long buf_io(long fd, void *buf, size_t len, long flags,
		   long (*op)(struct file *, void *, size_t, long, size_t *), size_t *trunc)
{
	long err;
	struct file *f = sock_of(fd, &err);
	if (!f)
		return err;
	if (len && !user_ok(buf, len))
		return -EFAULT;
	return with_flags(f, flags, op, buf, len, trunc);
}

long sys_sendto(long fd, const void *buf, size_t len, long flags, const void *addr, long alen)
{
	(void)addr, (void)alen; /* connected: Linux ignores the address of a pair's socket too */
	size_t trunc;
	return buf_io(fd, (void *)buf, len, flags, send_op, &trunc);
}

long sys_recvfrom(long fd, void *buf, size_t len, long flags, void *addr, int *alen)
{
	size_t trunc;
	long r = buf_io(fd, buf, len, flags, recv_op, &trunc), err;
	if (r >= 0 && (err = put_addr(addr, alen)))
		return err;
	return r >= 0 && (flags & MSG_TRUNC) ? r + (long)trunc : r;
}

/* sendmsg/recvmsg: the iovecs gathered through a kernel buffer, so a
 * datagram stays one. */
static long msg_io(long fd, struct msghdr_k *m, long flags, int sending)
{
	long err;
	struct file *f = sock_of(fd, &err);
	if (!f)
		return err;
	if (!user_ok(m, sizeof *m))
		return -EFAULT;
	if (sending && m->controllen)
		return -EOPNOTSUPP; /* descriptor passing */
	if (m->iovlen > 1024)
		return -EMSGSIZE;
	if (m->iovlen && !user_ok(m->iov, m->iovlen * sizeof *m->iov))
		return -EFAULT;
	size_t total = 0;
	for (uint64_t i = 0; i < m->iovlen; i++) {
		if (m->iov[i].len && !user_ok(m->iov[i].base, m->iov[i].len))
			return -EFAULT;
		total += m->iov[i].len;
	}
	if (total > SOCKET_BUFFER)
		total = SOCKET_BUFFER; /* one call moves at most a buffer's worth */
	char *tmp = kalloc(total ? total : 1);
	if (!tmp)
		return -ENOMEM;
	size_t trunc = 0, off = 0;
	long r;
	if (sending) {
		for (uint64_t i = 0; i < m->iovlen && off < total; i++) {
			size_t k = m->iov[i].len < total - off ? m->iov[i].len : total - off;
			memcpy(tmp + off, m->iov[i].base, k);
			off += k;
		}
		r = with_flags(f, flags, send_op, tmp, total, &trunc);
	} else {
		r = with_flags(f, flags, recv_op, tmp, total, &trunc);
		for (uint64_t i = 0; r > 0 && i < m->iovlen && off < (size_t)r; i++) {
			size_t k = m->iov[i].len < (size_t)r - off ? m->iov[i].len : (size_t)r - off;
			memcpy((void *)m->iov[i].base, tmp + off, k);
			off += k;
		}
		if (r >= 0) {
			m->controllen = 0;
			m->flags = trunc ? MSG_TRUNC : 0;
			if (m->name)
				m->namelen = 0; /* an unnamed peer */
		}
	}
	kfree(tmp, total ? total : 1);
	return r >= 0 && !sending && (flags & MSG_TRUNC) ? r + (long)trunc : r;
}

long sys_sendmsg(long fd, const void *msg, long flags)
{
	return msg_io(fd, (struct msghdr_k *)msg, flags, 1);
}

long sys_recvmsg(long fd, void *msg, long flags)
{
	return msg_io(fd, msg, flags & ~(long)MSG_CMSG_CLOEXEC, 0);
}

long sys_shutdown(long fd, long how)
{
	long err;
	struct file *f = sock_of(fd, &err);
	if (!f)
		return err;
	if (how < SHUT_RD || how > SHUT_RDWR)
		return -EINVAL;
	struct unix_end *u = f->priv;
	if (how != SHUT_WR && u->rx_open)
		u->rx_open = 0;
	if (how != SHUT_RD && u->tx_open) { /* the peer reads EOF once it has read what is there */
		u->tx_open = 0;
		u->tx->shut = 1;
	}
	stream_changed();
	return 0;
}

long sys_getsockname(long fd, void *addr, int *alen, int peer)
{
	(void)peer;
	long err;
	if (!sock_of(fd, &err))
		return err;
	if (!addr)
		return -EFAULT;
	return put_addr(addr, alen);
}

long sys_getsockopt(long fd, long level, long name, void *val, int *len)
{
	long err;
	struct file *f = sock_of(fd, &err);
	if (!f)
		return err;
	if (level != SOL_SOCKET)
		return -ENOPROTOOPT;
	struct unix_end *u = f->priv;
	int v;
	switch (name) {
	case SO_TYPE: v = u->type; break;
	case SO_ERROR: v = 0; break;
	case SO_SNDBUF: case SO_RCVBUF: v = SOCKET_BUFFER; break;
	case SO_DOMAIN: v = AF_UNIX; break;
	case SO_PROTOCOL: v = 0; break;
	default: return -ENOPROTOOPT;
	}
	if (!user_ok(len, sizeof *len) || *len < 0)
		return -EFAULT;
	if (*len < (int)sizeof v)
		return -EINVAL;
	if (!user_ok(val, sizeof v))
		return -EFAULT;
	memcpy(val, &v, sizeof v);
	*len = sizeof v;
	return 0;
}

/* Buffer sizes and the like: accepted, the pair's buffers stay as they are. */
long sys_setsockopt(long fd, long level, long name, const void *val, long len)
{
	(void)name;
	long err;
	if (!sock_of(fd, &err))
		return err;
	if (len < 0)
		return -EINVAL;
	if (len && !user_ok(val, (size_t)len))
		return -EFAULT;
	return level == SOL_SOCKET ? 0 : -ENOPROTOOPT;
}
