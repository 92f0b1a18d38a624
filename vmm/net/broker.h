/* SPDX-License-Identifier: GPL-2.0-only */
/* The network broker (docs/network.md): a process of its own, between the
 * VMM's device and the host's network.  It reads the guest's requests
 * (include/husk/net_stream.h) from one SOCK_SEQPACKET socket, resolves only
 * the names the rules allow and pins their addresses, connects only where
 * the rules allow, checks the name a TLS or HTTP connection asks for against
 * the pinned one, relays bytes under credit, and writes a record of every
 * resolve and connect. */
#ifndef HUSK_NET_BROKER_H
#define HUSK_NET_BROKER_H
#include <stddef.h>
#include <stdint.h>
#include "husk/net_stream.h"
#include "net/rules.h"

/* A name the tests resolve without DNS (a hosts map). */
struct broker_host {
	char name[NET_NAME_MAX + 1];
	struct net_addr addr[HUSK_NET_RESOLVED_MAX];
	int n;
};

struct broker_config {
	struct net_rules rules;
	struct broker_host *hosts; /* looked up first */
	size_t nhosts;
	int dns;                   /* other names by DNS (c-ares: the host's resolv.conf, */
	const char *dns_servers;   /* or these, "ADDR[:PORT],..." (a policy's, or the tests') */
	int check_names;           /* the SNI check on 443 and the Host check on 80, for names */
	uint32_t max_open;         /* connections open at once */
	uint32_t max_connects;     /* connects in all, allowed or not */
	uint32_t max_denials;      /* denials before every later request is refused */
	uint64_t max_bytes;        /* in and out together */
	uint64_t max_rate;         /* bytes per second, in and out together (a second's worth at once) */
	uint32_t max_resolves;     /* names resolved per second; beyond: REFUSED */
	int record_fd;             /* JSON lines, one per resolve and connect; -1: none */
	/* Called once the resolver has read the host's configuration, before
	 * the first request (broker_start's filter): 0, or the broker ends. */
	int (*confine)(void);
};

/* Parses "NAME=ADDR[,ADDR...]" into h: 0, or -1 with a reason in err. */
int broker_host_parse(const char *s, struct broker_host *h, char *err, size_t n);

/* Serves the guest's requests on fd until it is closed: 0, or -1 on a
 * failure of the broker's own (printed). */
int broker_run(int fd, const struct broker_config *c);

/* The broker as a process of its own (broker_start.c), forked now, before
 * anything is confined: it keeps only its socket, the record fd and stdio,
 * dies with its parent, and confines itself (seccomp, no files, stream and
 * datagram sockets of IPv4 and IPv6 only).  *vmm_fd: the device's end
 * (non-blocking).  The broker's pid, or -1 with a reason in err. */
int broker_start(struct broker_config *c, int *vmm_fd, char *err, size_t n);
#endif
