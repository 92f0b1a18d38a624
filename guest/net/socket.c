/* SPDX-License-Identifier: GPL-2.0-only */
/* The socket system calls (socket.h): the family's calls, found through the
 * socket's file. */
#include <errno.h>
#include <string.h>
#include "ipc/unix_socket.h"
#include "net/inet.h"
#include "net/socket.h"

long sys_socket(long domain, long type, long proto)
{
	if (domain == AF_UNIX)
		return unix_socket_new(type, proto);
	if (domain == AF_INET || domain == AF_INET6)
		return inet_socket_new((int)domain, type, proto); /* EAFNOSUPPORT without a network */
	return -EAFNOSUPPORT;
}

long sys_socketpair(long domain, long type, long proto, int *sv)
{
	if (domain != AF_UNIX)
		return domain == AF_INET || domain == AF_INET6 ? -EOPNOTSUPP : -EAFNOSUPPORT;
	return unix_socketpair(type, proto, sv);
}

struct file *socket_file(long fd, long *err)
{
	struct file *f = fd_get(fd);
	*err = !f ? -EBADF : f->kind != FILE_STREAM || !f->ops->sock ? -ENOTSOCK : 0;
	return *err ? 0 : f;
}

static const struct socket_calls *calls(long fd, long *err)
{
	struct file *f = socket_file(fd, err);
	return f ? f->ops->sock : 0;
}

/* sys_NAME(fd, args...): the family's NAME, or the fd's error. */
#define CALL(name, ...)                                          \
	long err;                                                \
	const struct socket_calls *c = calls(fd, &err);          \
	return c ? c->name(fd, __VA_ARGS__) : err

long sys_bind(long fd, const void *addr, long len) { CALL(bind, addr, len); }
long sys_connect(long fd, const void *addr, long len) { CALL(connect, addr, len); }
long sys_listen(long fd, long backlog) { CALL(listen, backlog); }
long sys_accept4(long fd, void *addr, int *alen, long flags) { CALL(accept4, addr, alen, flags); }
long sys_sendto(long fd, const void *buf, size_t len, long flags, const void *addr, long alen)
{
	CALL(sendto, buf, len, flags, addr, alen);
}
long sys_recvfrom(long fd, void *buf, size_t len, long flags, void *addr, int *alen)
{
	CALL(recvfrom, buf, len, flags, addr, alen);
}
long sys_sendmsg(long fd, const void *msg, long flags) { CALL(sendmsg, (struct msghdr_k *)msg, flags); }
long sys_recvmsg(long fd, void *msg, long flags) { CALL(recvmsg, msg, flags); }
long sys_shutdown(long fd, long how) { CALL(shutdown, how); }
long sys_getsockname(long fd, void *addr, int *alen, int peer) { CALL(getname, addr, alen, peer); }
long sys_getsockopt(long fd, long level, long name, void *val, int *len) { CALL(getsockopt, level, name, val, len); }
long sys_setsockopt(long fd, long level, long name, const void *val, long len)
{
	CALL(setsockopt, level, name, val, len);
}

long socket_opt_out(const void *v, int size, void *val, int *len)
{
	if (!user_ok(len, sizeof *len) || *len < 0)
		return !user_ok(len, sizeof *len) ? -EFAULT : -EINVAL;
	int n = *len < size ? *len : size;
	if (n && !user_ok(val, (size_t)n))
		return -EFAULT;
	memcpy(val, v, (size_t)n);
	*len = n;
	return 0;
}

long socket_name_copy(const void *name, size_t len, void *uaddr, size_t room)
{
	size_t n = room < len ? room : len;
	if (n && !user_ok(uaddr, n))
		return -EFAULT;
	memcpy(uaddr, name, n);
	return 0;
}

long socket_name_out(const void *name, size_t len, void *uaddr, int *alen)
{
	if (!uaddr)
		return 0;
	if (!user_ok(alen, sizeof *alen))
		return -EFAULT;
	if (*alen < 0)
		return -EINVAL;
	long r = socket_name_copy(name, len, uaddr, (size_t)*alen);
	if (!r)
		*alen = (int)len;
	return r;
}

long socket_iov_total(const struct msghdr_k *m, size_t max, size_t *total)
{
	if (!user_ok(m, sizeof *m))
		return -EFAULT;
	if (m->iovlen > 1024)
		return -EMSGSIZE;
	if (m->iovlen && !user_ok(m->iov, m->iovlen * sizeof *m->iov))
		return -EFAULT;
	*total = 0;
	for (uint64_t i = 0; i < m->iovlen; i++) {
		if (m->iov[i].len && !user_ok(m->iov[i].base, m->iov[i].len))
			return -EFAULT;
		*total += m->iov[i].len;
	}
	if (*total > max)
		*total = max;
	return 0;
}

void socket_iov_copy(const struct msghdr_k *m, char *buf, size_t len, int to_iov)
{
	/* Read and checked again: another thread may have changed the iovecs
	 * while the call waited (a receive), and no address may be written
	 * that was not checked. */
	uint64_t n = m->iovlen;
	if (n > 1024 || (n && !user_ok(m->iov, n * sizeof *m->iov)))
		return;
	size_t off = 0;
	for (uint64_t i = 0; i < n && off < len; i++) {
		struct kiovec v = m->iov[i];
		size_t k = v.len < len - off ? v.len : len - off;
		if (k && !user_ok(v.base, k))
			return;
		if (to_iov)
			memcpy((void *)v.base, buf + off, k);
		else
			memcpy(buf + off, v.base, k);
		off += k;
	}
}
