/* SPDX-License-Identifier: GPL-2.0-only */
/* The network of a run, from its options (--allow-net, --deny-net, --net-*,
 * the policy's "network" key): whether it has one, the broker's
 * configuration, and the effective rules as `husk policy show` prints them. */
#ifndef HUSK_NET_CONFIG_H
#define HUSK_NET_CONFIG_H
#include <jansson.h>
#include <stddef.h>
#include "net/broker.h"

#define NET_MAX_OPEN_DEFAULT 256
#define NET_MAX_CONNECTS_DEFAULT 10000
#define NET_MAX_DENIALS_DEFAULT 64
#define NET_MAX_RESOLVES_DEFAULT 100

struct options;

/* Whether the run has a network: some entry allows something. */
int net_attached(const struct options *o);
/* The broker's configuration (record_fd -1, no confine hook): 0, or -1 with
 * a one-line reason in err (a malformed entry, one inside the floor, a bad
 * hosts entry). */
int net_config_build(const struct options *o, struct broker_config *c, char *err, size_t n);
void net_config_free(struct broker_config *c);
/* The options' network checked as the run would build it: 0 or -1 with err. */
int net_options_check(const struct options *o, char *err, size_t n);
/* The policy's "network" as `husk policy show` prints it: the rules as
 * they apply (names with their default ports), the floor, the limits;
 * {"loopback": true} with --net-loopback alone; JSON null without either. */
json_t *net_config_json(const struct options *o);
#endif
