/* SPDX-License-Identifier: GPL-2.0-only */
/* The filtered network's device (include/husk/net_stream.h,
 * docs/network.md): messages to the network broker and from it. */
#ifndef GUEST_DEV_NET_H
#define GUEST_DEV_NET_H
#include <stddef.h>
#include "husk/net_stream.h"

/* Whether the run has a network (the device brought up on first use). */
int net_up(void);
/* At the snapshot point: the run's network, if it has one, is looked for
 * again at its first use. */
void net_rearm(void);
/* One message to the broker, h->len set to len here: 0, or -ENETDOWN once
 * the broker is gone. */
int net_send(struct husk_net_hdr *h, const void *payload, size_t len);
/* Each message the broker sent, handed to net/inet.c (inet_receive); run at
 * the scheduler's look at events (kernel.h). */
void net_poll(void);
#endif
