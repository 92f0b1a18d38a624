/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/virtio_mmio.c and vmm/devices/virtio_net_stream.c driven by a byte
 * program (mmio_prog.h); the broker's end is a socketpair read by a thread.
 * Flags byte: bit 0, the broker is gone before the run (its end closed);
 * bit 1, the broker sent three messages first (CONNECTED, DATA, RESOLVED).
 * After the program, net_stream_deliver runs as the run loop calls it.
 * What reaches the broker must be whole messages whose length is their
 * header's; the guest may get no more than the broker sent, and the one
 * notice that it is gone. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include "mmio_prog.h"
#include "sandbox/stop.h"
#include "devices/virtio_net_stream.h"

static struct net_stream net;

static void *broker(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static uint8_t m[HUSK_NET_MSG_MAX + 1];
	ssize_t n;
	while ((n = read(fd, m, sizeof m)) > 0) {
		struct husk_net_hdr h;
		CHECK(n >= (ssize_t)sizeof h && n <= (ssize_t)HUSK_NET_MSG_MAX, "a message of %zd bytes reached the broker", n);
		memcpy(&h, m, sizeof h);
		CHECK(h.len == (size_t)n - sizeof h, "a message of %zd bytes says %u", n, h.len);
	}
	close(fd);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!mem.host)
		heap_guest_mem(&mem, RAM);
	uint8_t flags = size ? data[0] : 0;
	int sp[2];
	CHECK(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), "socketpair");
	int sent = 0;
	if (flags & 2) {
		static const uint8_t payload[100];
		struct husk_net_hdr h[3] = { { .op = HUSK_NET_CONNECTED, .conn = 1 },
					     { .op = HUSK_NET_DATA, .conn = 1, .len = sizeof payload },
					     { .op = HUSK_NET_RESOLVED, .conn = 2, .error = HUSK_NET_NXDOMAIN } };
		uint8_t m[sizeof h[0] + sizeof payload];
		for (int i = 0; i < 3; i++) {
			memcpy(m, &h[i], sizeof h[i]);
			memcpy(m + sizeof h[i], payload, h[i].len);
			sent += write(sp[1], m, sizeof h[i] + h[i].len) > 0;
		}
	}
	pthread_t t;
	int threaded = !(flags & 1) && !pthread_create(&t, NULL, broker, (void *)(intptr_t)sp[1]);
	if (!threaded)
		close(sp[1]);
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	stop_reset();
	net_stream_init(&net, 0xd0000000ull, &mem, sp[0]);
	mmio_run(&net.mmio, data, size);
	const char *err = NULL;
	int r = net_stream_deliver(&net, &err);
	CHECK(r >= 0 || err, "deliver failed without a reason");
	CHECK(net.received <= (uint64_t)sent + 1, "%llu messages given to the guest, the broker sent %d",
	      (unsigned long long)net.received, sent);
	if (net.broker_fd >= 0)
		close(net.broker_fd);
	if (threaded)
		pthread_join(t, NULL);
	return 0;
}
