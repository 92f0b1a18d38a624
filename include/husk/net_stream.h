/* SPDX-License-Identifier: GPL-2.0-only */
/* The filtered network's messages (docs/network.md): the guest kernel, the
 * VMM's device and the network broker all speak them.  A message is this
 * header and len bytes of payload; every field is the sender's claim and is
 * checked by whoever reads it. */
#ifndef HUSK_NET_STREAM_H
#define HUSK_NET_STREAM_H
#include <stdint.h>

/* The device's ID (virtio-mmio DeviceID): husk's own, no standard device's. */
#define HUSK_VIRTIO_ID_NET_STREAM 0x4855
#define HUSK_NET_TRANSMITQ 0 /* guest -> broker */
#define HUSK_NET_RECEIVEQ 1  /* broker -> guest */
/* RESET of this conn: every connection, and the network is gone (the
 * broker ended); the device sends it once. */
#define HUSK_NET_ALL 0xffffffffu

enum husk_net_op {
	HUSK_NET_CONNECT = 1, /* guest: open conn to family/addr/port */
	HUSK_NET_CONNECTED,   /* broker: conn is open; family/addr/port: the host side's local address */
	HUSK_NET_RESET,       /* either: conn is gone; error: the errno the guest's calls give */
	HUSK_NET_SHUTDOWN,    /* either: flags HUSK_NET_SHUT_WR: the sender sends no more;
			       * guest: HUSK_NET_SHUT_RD too: it closed the socket (the broker
			       * writes what it holds, then closes and forgets conn) */
	HUSK_NET_DATA,        /* either: len bytes of conn's stream */
	HUSK_NET_CREDIT,      /* either: the sender's buf_alloc and fwd_cnt, nothing else */
	HUSK_NET_RESOLVE,     /* guest: payload a name; conn: the query's number; family 0: both */
	HUSK_NET_RESOLVED,    /* broker: payload n * struct husk_net_addr; error HUSK_NET_NXDOMAIN etc. */
};

#define HUSK_NET_SHUT_WR 1u
#define HUSK_NET_SHUT_RD 2u

/* RESOLVED's error, as DNS's RCODE says it. */
#define HUSK_NET_NXDOMAIN 3
#define HUSK_NET_SERVFAIL 2
#define HUSK_NET_REFUSED 5

/* Credit (virtio-vsock's scheme, 5.10.6.3): every message says how much
 * buffer its sender has for conn (buf_alloc) and how many bytes of it the
 * sender has taken out so far (fwd_cnt); a sender keeps what it has sent
 * and not yet seen taken below the other's buf_alloc. */
struct husk_net_hdr {
	uint32_t op, conn, len, flags;
	uint32_t buf_alloc, fwd_cnt;
	int32_t error;
	uint16_t family, port; /* family: 2 (AF_INET) or 10 (AF_INET6); port in host order */
	uint8_t addr[16];      /* network order; AF_INET in addr[0..3] */
};
_Static_assert(sizeof(struct husk_net_hdr) == 48, "the wire size");

struct husk_net_addr {
	uint16_t family, pad;
	uint8_t addr[16];
};
_Static_assert(sizeof(struct husk_net_addr) == 20, "the wire size");

/* The guest posts receive buffers of HUSK_NET_MSG_MAX bytes. */
#define HUSK_NET_PAYLOAD_MAX 131072
#define HUSK_NET_RESOLVED_MAX 16 /* addresses in one answer */
#define HUSK_NET_MSG_MAX (sizeof(struct husk_net_hdr) + HUSK_NET_PAYLOAD_MAX)
/* The most credit either side gives for one connection (buf_alloc): a
 * larger claim counts as this much. */
#define HUSK_NET_CREDIT_MAX (1u << 20)
#endif
