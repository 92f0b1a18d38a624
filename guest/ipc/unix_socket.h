/* SPDX-License-Identifier: GPL-2.0-only */
/* Unix sockets: stream, datagram and seqpacket; socketpair, names in the
 * file system and the abstract namespace (bind, listen, accept, connect),
 * descriptors and credentials passed along.  The system calls are
 * net/socket.c's; these make the sockets. */
#ifndef GUEST_UNIX_SOCKET_H
#define GUEST_UNIX_SOCKET_H

/* socket(AF_UNIX, type, proto) and socketpair(AF_UNIX, ...). */
long unix_socket_new(long type, long proto);
long unix_socketpair(long type, long proto, int *sv);
#endif
