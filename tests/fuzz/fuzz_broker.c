/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/net/broker.c fed the guest's side of its socket: the input is a
 * sequence of messages, each a 2-byte length (little endian, at most the
 * largest message and a bit) and that many bytes, written to the broker's
 * socket one after the other; then the socket is closed and the broker
 * must end with 0.  It runs in a network namespace of its own (root
 * needed), where lo has 127.0.0.1 and 11.0.0.1 and there is no route out:
 * whatever the input asks, nothing leaves it.  The rules allow 127.0.0.1
 * port 1 (nothing listens: refused at once), a.test (mapped to 127.0.0.1:
 * rebinding, refused) and *.b.test (x.b.test mapped to 11.0.0.1, where
 * nothing listens either); no DNS. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz.h"
#include "net/broker.h"

static struct broker_config config;
static struct broker_host hosts[2];

struct run {
	int fd, result;
};

static void *serve(void *arg)
{
	struct run *r = arg;
	r->result = broker_run(r->fd, &config);
	close(r->fd);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!config.rules.n) {
		CHECK(!unshare(CLONE_NEWNET), "a network namespace of its own: %s (run as root)", strerror(errno));
		CHECK(!system("ip link set lo up && ip addr add 11.0.0.1/32 dev lo"), "lo up, 11.0.0.1 on it");
		char err[256];
		CHECK(!rules_add(&config.rules, "127.0.0.1/32:1", err, sizeof err) &&
			      !rules_add(&config.rules, "a.test:1", err, sizeof err) &&
			      !rules_add(&config.rules, "*.b.test", err, sizeof err) &&
			      !broker_host_parse("a.test=127.0.0.1", &hosts[0], err, sizeof err) &&
			      !broker_host_parse("x.b.test=11.0.0.1", &hosts[1], err, sizeof err),
		      "set-up: %s", err);
		config.hosts = hosts, config.nhosts = 2;
		config.check_names = 1, config.max_open = 8, config.max_connects = 64, config.max_denials = 32;
		config.max_bytes = 1 << 20;
		config.record_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	int sp[2];
	CHECK(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), "socketpair");
	struct run r = { sp[1], -1 };
	pthread_t t;
	CHECK(!pthread_create(&t, NULL, serve, &r), "pthread_create");
	for (size_t at = 0; at + 2 <= size;) {
		size_t len = (size_t)(data[at] | data[at + 1] << 8) % (HUSK_NET_MSG_MAX + 64);
		at += 2;
		if (len > size - at)
			len = size - at;
		if (write(sp[0], data + at, len) < 0)
			break;
		at += len;
	}
	close(sp[0]);
	pthread_join(t, NULL);
	CHECK(r.result == 0, "the broker ended with %d", r.result);
	return 0;
}
