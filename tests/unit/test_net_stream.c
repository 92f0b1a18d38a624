/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/devices/virtio_net_stream.c with its queues laid out in guest memory
 * as the guest's driver would and the broker's end a socketpair: whole
 * messages each way, the framing checked, messages held until a receive
 * buffer comes, and the broker's end told to the guest once. */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "guest_mem.h"
#include "sandbox/stop.h"
#include "tap.h"
#include "devices/virtio_net_stream.h"

#define RAM (1ull << 20)
#define TXQ 0x10000ull /* desc, avail, used at +0, +0x1000, +0x2000 */
#define RXQ 0x20000ull
#define BUF 0x40000ull
#define NUM 8

static struct guest_mem mem;
static struct net_stream net;
static int broker;
static uint16_t posted[2];

static void put(uint64_t gpa, const void *v, size_t n) { memcpy(mem.host + gpa, v, n); }

static void set_desc(uint64_t ring, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	put(ring + 16ull * i, &addr, 8);
	put(ring + 16ull * i + 8, &len, 4);
	put(ring + 16ull * i + 12, &flags, 2);
	put(ring + 16ull * i + 14, &next, 2);
}

/* Chain head of queue q available, then the notify: what it returned. */
static int post(int q, uint16_t head, const char **err)
{
	uint64_t ring = q ? RXQ : TXQ;
	put(ring + 0x1000 + 4 + 2ull * (posted[q] % NUM), &head, 2);
	posted[q]++;
	put(ring + 0x1000 + 2, &posted[q], 2);
	uint32_t v = (uint32_t)q;
	return virtio_mmio_access(&net.mmio, VIRTIO_MMIO_QUEUE_NOTIFY, (uint8_t *)&v, 4, 1, err);
}

static uint32_t used_len(int q, uint16_t i)
{
	uint32_t v;
	memcpy(&v, mem.host + (q ? RXQ : TXQ) + 0x2000 + 4 + 8ull * i + 4, 4);
	return v;
}

static void setup(void)
{
	int sp[2];
	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp);
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	broker = sp[1];
	memset(mem.host, 0, RAM);
	posted[0] = posted[1] = 0;
	net_stream_init(&net, 0xd0000000ull, &mem, sp[0]);
	const char *err = NULL;
	for (int q = 0; q < 2; q++) {
		uint64_t r = q ? RXQ : TXQ;
		net.mmio.q[q] = (struct virtq){ .num = NUM, .desc_gpa = r, .avail_gpa = r + 0x1000, .used_gpa = r + 0x2000 };
		virtq_enable(&net.mmio.q[q], &mem, &err);
	}
	net.mmio.status = VIRTIO_STATUS_DRIVER_OK;
}

int main(void)
{
	static uint8_t host[RAM], m[HUSK_NET_MSG_MAX + 16];
	mem = (struct guest_mem){ .host = host, .size = RAM };
	const char *err = NULL;
	setup();
	ok(net.mmio.device_id == HUSK_VIRTIO_ID_NET_STREAM, "the device's ID is husk's own (%#x)", net.mmio.device_id);
	uint8_t cfg[8];
	ok(virtio_mmio_access(&net.mmio, VIRTIO_MMIO_CONFIG, cfg, 0, 0, &err) == -1 &&
		   virtio_mmio_access(&net.mmio, VIRTIO_MMIO_CONFIG, cfg, 4, 0, &err) == -1,
	   "it has no config space: a read of it, even of 0 bytes, is refused (fuzz_net found the 0-byte one reading NULL)");

	struct husk_net_hdr h = { .op = HUSK_NET_CONNECT, .conn = 3, .family = 2, .port = 443, .addr = { 11, 0, 0, 1 } };
	put(BUF, &h, sizeof h);
	set_desc(TXQ, 0, BUF, sizeof h, 0, 0);
	ok(post(0, 0, &err) == 0 && read(broker, m, sizeof m) == (ssize_t)sizeof h && !memcmp(m, &h, sizeof h),
	   "a CONNECT reaches the broker as it was");
	h = (struct husk_net_hdr){ .op = HUSK_NET_DATA, .conn = 3, .len = 5 };
	put(BUF, &h, sizeof h);
	put(BUF + 0x1000, "hello", 5);
	set_desc(TXQ, 1, BUF, sizeof h, VIRTQ_DESC_F_NEXT, 2);
	set_desc(TXQ, 2, BUF + 0x1000, 5, 0, 0);
	ok(post(0, 1, &err) == 0 && read(broker, m, sizeof m) == (ssize_t)sizeof h + 5 && !memcmp(m + sizeof h, "hello", 5),
	   "a DATA in two buffers reaches it whole, one message");
	h.len = 6;
	put(BUF, &h, sizeof h);
	ok(post(0, 1, &err) == -1 && err && strstr(err, "not its header's") && recv(broker, m, sizeof m, MSG_DONTWAIT) < 0,
	   "a length that is not the header's: the run ends (%s), nothing reaches the broker", err ? err : "");
	setup();
	set_desc(TXQ, 0, BUF, 20, 0, 0);
	ok(post(0, 0, &err) == -1 && strstr(err, "shorter than its header"), "a message shorter than a header: refused");
	setup();
	set_desc(TXQ, 0, BUF, sizeof h, VIRTQ_DESC_F_WRITE, 0);
	ok(post(0, 0, &err) == -1 && strstr(err, "for the device to write"), "a device-writable buffer on the transmit queue: refused");

	setup();
	struct husk_net_hdr r1 = { .op = HUSK_NET_CONNECTED, .conn = 3 }, r2 = { .op = HUSK_NET_DATA, .conn = 3, .len = 1000 };
	write(broker, &r1, sizeof r1);
	memcpy(m, &r2, sizeof r2);
	memset(m + sizeof r2, 'z', 1000);
	write(broker, m, sizeof r2 + 1000);
	set_desc(RXQ, 0, BUF, HUSK_NET_MSG_MAX, VIRTQ_DESC_F_WRITE, 0);
	ok(post(1, 0, &err) == 0 && used_len(1, 0) == sizeof r1 && !memcmp(mem.host + BUF, &r1, sizeof r1),
	   "a receive buffer takes the broker's first message");
	ok(net_stream_deliver(&net, &err) == 0 && net.received == 1, "the second waits for a buffer");
	set_desc(RXQ, 1, BUF + 0x8000, 4096, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
	set_desc(RXQ, 2, BUF + 0x9000, HUSK_NET_MSG_MAX, VIRTQ_DESC_F_WRITE, 0);
	ok(post(1, 1, &err) == 0 && used_len(1, 1) == sizeof r2 + 1000 && mem.host[BUF + 0x8000 + sizeof r2] == 'z',
	   "then it goes into the next buffer posted (two descriptors)");
	write(broker, m, sizeof r2 + 1000);
	set_desc(RXQ, 3, BUF, 100, VIRTQ_DESC_F_WRITE, 0);
	ok(post(1, 3, &err) == -1 && strstr(err, "smaller"), "a receive buffer too small for the message: refused");

	setup();
	close(broker);
	set_desc(RXQ, 0, BUF, HUSK_NET_MSG_MAX, VIRTQ_DESC_F_WRITE, 0);
	set_desc(RXQ, 1, BUF + 0x8000, HUSK_NET_MSG_MAX, VIRTQ_DESC_F_WRITE, 0);
	struct husk_net_hdr got;
	int r = post(1, 0, &err);
	memcpy(&got, mem.host + BUF, sizeof got);
	ok(r == 0 && got.op == HUSK_NET_RESET && got.conn == HUSK_NET_ALL && got.error == 104 /* ECONNRESET */,
	   "the broker gone: the guest gets one RESET of every connection");
	ok(post(1, 1, &err) == 0 && net.received == 1, "and only one");
	h = (struct husk_net_hdr){ .op = HUSK_NET_CONNECT, .conn = 4, .family = 2, .port = 80 };
	put(BUF + 0x10000, &h, sizeof h);
	set_desc(TXQ, 0, BUF + 0x10000, sizeof h, 0, 0);
	ok(post(0, 0, &err) == 0 && net.sent == 0, "what the guest sends after is dropped, the run goes on");
	return tap_done();
}
