/* SPDX-License-Identifier: GPL-2.0-only */
/* Sockets: the system calls (socket.c) and what each family gives them:
 * Unix sockets (ipc/unix_socket.c) and, when the run has a network,
 * IPv4 and IPv6 over the network's device (net/inet.c).  A socket is a
 * stream file whose ops carry its family's calls (stream_ops.sock). */
#ifndef GUEST_NET_SOCKET_H
#define GUEST_NET_SOCKET_H
#include <stddef.h>
#include <stdint.h>
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"

#define AF_UNSPEC      0
#define AF_UNIX        1
#define AF_INET        2
#define AF_INET6       10
#define SOCK_STREAM    1
#define SOCK_DGRAM     2
#define SOCK_SEQPACKET 5
#define SOCK_NONBLOCK  O_NONBLOCK
#define SOCK_CLOEXEC   O_CLOEXEC
#define MSG_OOB        0x1
#define MSG_PEEK       0x2
#define MSG_CTRUNC     0x8
#define MSG_TRUNC      0x20
#define MSG_DONTWAIT   0x40
#define MSG_EOR        0x80
#define MSG_WAITALL    0x100
#define MSG_NOSIGNAL   0x4000
#define MSG_MORE       0x8000
#define MSG_CMSG_CLOEXEC 0x40000000
#define SOL_SOCKET     1
#define SCM_RIGHTS     1
#define SCM_CREDENTIALS 2
#define SO_REUSEADDR   2
#define SO_TYPE        3
#define SO_ERROR       4
#define SO_BROADCAST   6
#define SO_SNDBUF      7
#define SO_RCVBUF      8
#define SO_KEEPALIVE   9
#define SO_LINGER      13
#define SO_REUSEPORT   15
#define SO_PASSCRED    16
#define SO_PEERCRED    17
#define SO_RCVTIMEO    20
#define SO_SNDTIMEO    21
#define SO_ACCEPTCONN  30
#define SO_PROTOCOL    38
#define SO_DOMAIN      39
#define SHUT_RD        0
#define SHUT_WR        1
#define SHUT_RDWR      2
#define SOMAXCONN      4096

struct msghdr_k {
	void *name;
	uint32_t namelen, pad0;
	struct kiovec *iov;
	uint64_t iovlen;
	void *control;
	uint64_t controllen;
	int32_t flags, pad1;
};

struct cmsghdr_k {
	uint64_t len;
	int32_t level, type;
};

#define CMSG_ALIGN(n) (((n) + 7) & ~(size_t)7)
#define CMSG_SPACE(n) (sizeof(struct cmsghdr_k) + CMSG_ALIGN(n))

/* A family's calls, each as the system call's (fd already known to be a
 * socket of the family). */
struct socket_calls {
	long (*bind)(long fd, const void *addr, long len);
	long (*connect)(long fd, const void *addr, long len);
	long (*listen)(long fd, long backlog);
	long (*accept4)(long fd, void *addr, int *alen, long flags);
	long (*sendto)(long fd, const void *buf, size_t len, long flags, const void *addr, long alen);
	long (*recvfrom)(long fd, void *buf, size_t len, long flags, void *addr, int *alen);
	long (*sendmsg)(long fd, struct msghdr_k *m, long flags);
	long (*recvmsg)(long fd, struct msghdr_k *m, long flags);
	long (*shutdown)(long fd, long how);
	long (*getname)(long fd, void *addr, int *alen, int peer);
	long (*getsockopt)(long fd, long level, long name, void *val, int *len);
	long (*setsockopt)(long fd, long level, long name, const void *val, long len);
};

long sys_socket(long domain, long type, long proto);
long sys_socketpair(long domain, long type, long proto, int *sv);
long sys_bind(long fd, const void *addr, long len);
long sys_connect(long fd, const void *addr, long len);
long sys_listen(long fd, long backlog);
long sys_accept4(long fd, void *addr, int *alen, long flags);
long sys_sendto(long fd, const void *buf, size_t len, long flags, const void *addr, long alen);
long sys_recvfrom(long fd, void *buf, size_t len, long flags, void *addr, int *alen);
long sys_sendmsg(long fd, const void *msg, long flags);
long sys_recvmsg(long fd, void *msg, long flags);
long sys_shutdown(long fd, long how);
long sys_getsockname(long fd, void *addr, int *alen, int peer);
long sys_getsockopt(long fd, long level, long name, void *val, int *len);
long sys_setsockopt(long fd, long level, long name, const void *val, long len);

/* Helpers the families share. */
/* A socket file of any family behind fd: NULL with -EBADF or -ENOTSOCK. */
struct file *socket_file(long fd, long *err);
/* An option's value out as Linux does (as much as *len takes; *len set). */
long socket_opt_out(const void *v, int size, void *val, int *len);
/* A name out: as much of name[0..len) as room takes. */
long socket_name_copy(const void *name, size_t len, void *uaddr, size_t room);
/* A name out as accept/getsockname/recvfrom do: as much as fits, *alen its
 * full size (uaddr NULL: nothing). */
long socket_name_out(const void *name, size_t len, void *uaddr, int *alen);
/* A msghdr's iovecs checked; their total, at most max (one call moves no
 * more). */
long socket_iov_total(const struct msghdr_k *m, size_t max, size_t *total);
/* Between a kernel buffer and the iovecs, up to len bytes (each iovec
 * checked again: stops at one no longer the program's). */
void socket_iov_copy(const struct msghdr_k *m, char *buf, size_t len, int to_iov);
#endif
