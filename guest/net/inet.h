/* SPDX-License-Identifier: GPL-2.0-only */
/* IPv4 and IPv6 sockets over the network's device (docs/network.md): stream
 * sockets are connections the broker makes on the host; datagram sockets
 * reach only the guest's own DNS server at 127.0.0.1:53 (and [::1]:53),
 * which asks the broker to resolve. */
#ifndef GUEST_NET_INET_H
#define GUEST_NET_INET_H
#include "husk/net_stream.h"

/* socket(AF_INET or AF_INET6, type, proto): -EAFNOSUPPORT when the run has
 * no network. */
long inet_socket_new(int family, long type, long proto);
/* One message from the broker (dev/net.c), its payload h->len bytes. */
void inet_receive(const struct husk_net_hdr *h, const uint8_t *payload);
#endif
