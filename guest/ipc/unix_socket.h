/* SPDX-License-Identifier: GPL-2.0-only */
/* socketpair(AF_UNIX): connected pairs of stream, datagram or seqpacket
 * sockets, and the calls that act on them.  There is no network: other
 * families and unconnected sockets are refused as before. */
#ifndef GUEST_UNIX_SOCKET_H
#define GUEST_UNIX_SOCKET_H
#include <stddef.h>
#include <stdint.h>

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
