/* SPDX-License-Identifier: GPL-2.0-only */
/* Unix sockets: stream, datagram and seqpacket; socketpair, names in the
 * file system and the abstract namespace (bind, listen, accept, connect),
 * descriptors and credentials passed along.  There is no network: other
 * families are refused (EAFNOSUPPORT). */
#ifndef GUEST_UNIX_SOCKET_H
#define GUEST_UNIX_SOCKET_H
#include <stddef.h>
#include <stdint.h>

long sys_socket(long domain, long type, long proto);
long sys_bind(long fd, const void *addr, long len);
long sys_connect(long fd, const void *addr, long len);
long sys_listen(long fd, long backlog);
long sys_accept4(long fd, void *addr, int *alen, long flags);
long sys_socketpair(long domain, long type, long proto, int *sv);
long sys_sendto(long fd, const void *buf, size_t len, long flags, const void *addr, long alen);
long sys_recvfrom(long fd, void *buf, size_t len, long flags, void *addr, int *alen);
long sys_sendmsg(long fd, const void *msg, long flags);
long sys_recvmsg(long fd, void *msg, long flags);
long sys_shutdown(long fd, long how);
long sys_getsockname(long fd, void *addr, int *alen, int peer);
long sys_getsockopt(long fd, long level, long name, void *val, int *len);
long sys_setsockopt(long fd, long level, long name, const void *val, long len);
#endif
