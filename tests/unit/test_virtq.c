/* SPDX-License-Identifier: GPL-2.0-only */
/* Split virtqueues (vmm/virtq.c) and the virtio-mmio transport
 * (vmm/virtio_mmio.c) driven through a virtio-console, with the rings laid
 * out in guest memory as a driver would. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "guest_mem.h"
#include "sandbox/stop.h"
#include "tap.h"
#include "devices/virtio_console.h"
#include "devices/virtio_mmio.h"
#include "devices/virtq.h"

#define RAM (4ull << 20)
#define DESC 0x10000ull
#define AVAIL 0x11000ull
#define USED 0x12000ull
#define BUF 0x20000ull
#define MMIO_BASE 0xd0000000ull

static struct guest_mem mem;

/* --- the driver's side of the rings, in guest memory ---------------- */

static void put(uint64_t gpa, const void *v, size_t n) { memcpy(mem.host + gpa, v, n); }
static void put16(uint64_t gpa, uint16_t v) { put(gpa, &v, 2); }

static uint16_t get16(uint64_t gpa)
{
	uint16_t v;
	memcpy(&v, mem.host + gpa, 2);
	return v;
}

static uint32_t get32(uint64_t gpa)
{
	uint32_t v;
	memcpy(&v, mem.host + gpa, 4);
	return v;
}

static void set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	put(DESC + 16ull * i, &addr, 8);
	put(DESC + 16ull * i + 8, &len, 4);
	put16(DESC + 16ull * i + 12, flags);
	put16(DESC + 16ull * i + 14, next);
}

/* Makes chain `head` available, as the driver does. */
static void post(uint16_t num, uint16_t head)
{
	uint16_t idx = get16(AVAIL + 2);
	put16(AVAIL + 4 + 2ull * (idx % num), head);
	put16(AVAIL + 2, (uint16_t)(idx + 1));
}

static void clear_rings(void)
{
	memset(mem.host + DESC, 0, USED + 0x1000 - DESC);
}

/* A ready queue of size num on freshly zeroed rings. */
static int queue_setup(struct virtq *q, uint16_t num)
{
	const char *err = NULL;
	clear_rings();
	*q = (struct virtq){ .num = num, .desc_gpa = DESC, .avail_gpa = AVAIL, .used_gpa = USED };
	return virtq_enable(q, &mem, &err);
}

/* --- virtq_enable ------------------------------------------------------ */

static void enable_refused(const char *what, uint16_t num, uint64_t desc, uint64_t avail, uint64_t used)
{
	struct virtq q = { .num = num, .desc_gpa = desc, .avail_gpa = avail, .used_gpa = used };
	const char *err = NULL;
	int r = virtq_enable(&q, &mem, &err);
	ok(r == -1 && err && !q.ready, "enable refuses %s (%s)", what, err ? err : "no reason");
}

static void test_enable(void)
{
	struct virtq q;
	ok(queue_setup(&q, 256) == 0 && q.ready, "enable accepts num 256 with aligned rings in RAM");
	ok(queue_setup(&q, 1) == 0 && q.ready, "enable accepts num 1");
	ok(q.desc == mem.host + DESC && q.avail == mem.host + AVAIL && q.used == mem.host + USED,
	   "enable keeps host pointers to the rings it checked");
	enable_refused("num 0", 0, DESC, AVAIL, USED);
	enable_refused("num 3", 3, DESC, AVAIL, USED);
	enable_refused("num 512", 512, DESC, AVAIL, USED);
	enable_refused("misaligned desc", 8, DESC + 8, AVAIL, USED);
	enable_refused("misaligned avail", 8, DESC, AVAIL + 1, USED);
	enable_refused("misaligned used", 8, DESC, AVAIL, USED + 2);
	enable_refused("desc past the end of RAM", 8, RAM - 16 * 4, AVAIL, USED);
	enable_refused("avail past the end of RAM", 8, DESC, RAM - 4, USED);
	enable_refused("used past the end of RAM", 8, DESC, AVAIL, RAM - 8);
	enable_refused("desc near UINT64_MAX", 8, 0xfffffffffffffff0ull, AVAIL, USED);
	enable_refused("avail near UINT64_MAX", 8, DESC, 0xfffffffffffffffeull, USED);
	enable_refused("used near UINT64_MAX", 8, DESC, AVAIL, 0xfffffffffffffffcull);
}

/* --- virtq_pop / virtq_push ------------------------------------------- */

static void test_good_chain(void)
{
	struct virtq q;
	struct virtq_chain c;
	const char *err = NULL;
	queue_setup(&q, 8);
	ok(virtq_begin(&q, &err) == 0 && virtq_pop(&q, &mem, &c, &err) == 0, "an empty queue pops nothing");

	set_desc(4, BUF, 5, VIRTQ_DESC_F_NEXT, 2);
	set_desc(2, BUF + 0x100, 7, VIRTQ_DESC_F_NEXT, 7);
	set_desc(7, BUF + 0x200, 64, VIRTQ_DESC_F_WRITE, 0);
	post(8, 4);
	ok(virtq_begin(&q, &err) == 1, "one chain pending");
	int r = virtq_pop(&q, &mem, &c, &err);
	ok(r == 1 && c.head == 4 && c.n == 3, "3-descriptor chain pops (r %d head %u n %d)", r, c.head, c.n);
	ok(c.seg[0].ptr == mem.host + BUF && c.seg[1].ptr == mem.host + BUF + 0x100 &&
	   c.seg[2].ptr == mem.host + BUF + 0x200, "segments point at the guest buffers");
	ok(c.seg[0].len == 5 && c.seg[1].len == 7 && c.seg[2].len == 64, "segment lengths");
	ok(!c.seg[0].writable && !c.seg[1].writable && c.seg[2].writable, "writable flags");
	ok(c.total == 76, "total %llu", (unsigned long long)c.total);
	ok(virtq_pop(&q, &mem, &c, &err) == 0, "then the queue is empty");

	ok(virtq_push(&q, 4, 33, &err) == 0, "push");
	ok(get32(USED + 4) == 4 && get32(USED + 8) == 33 && get16(USED + 2) == 1,
	   "used ring: id %u len %u idx %u", get32(USED + 4), get32(USED + 8), get16(USED + 2));
}

/* Chains and used entries go round the rings modulo num. */
static void test_wrap(void)
{
	struct virtq q;
	struct virtq_chain c;
	const char *err = NULL;
	int good = 1;
	queue_setup(&q, 4);
	for (uint16_t i = 0; i < 10; i++) {
		uint16_t head = (uint16_t)(3 - i % 4);
		set_desc(head, BUF + 16ull * i, 16, 0, 0);
		post(4, head);
		good &= virtq_begin(&q, &err) == 1;
		good &= virtq_pop(&q, &mem, &c, &err) == 1 && c.head == head && c.seg[0].ptr == mem.host + BUF + 16ull * i;
		good &= virtq_push(&q, head, i, &err) == 0;
	}
	ok(good, "10 chains through a ring of 4");
	ok(get16(USED + 2) == 10 && get32(USED + 4 + 8 * (9 % 4)) == 3 - 9 % 4 && get32(USED + 8 + 8 * (9 % 4)) == 9,
	   "used ring wrapped: idx %u", get16(USED + 2));

	/* a chain as long as the ring is not a loop */
	queue_setup(&q, 4);
	for (uint16_t i = 0; i < 4; i++)
		set_desc(i, BUF, 1, i < 3 ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	post(4, 0);
	ok(virtq_begin(&q, &err) == 1 && virtq_pop(&q, &mem, &c, &err) == 1 && c.n == 4,
	   "a chain of num descriptors pops");
}

/* A notify serves what was available when it came: avail.idx is read once
 * (a device's write into guest memory may change it, as may the driver). */
static void test_snapshot(void)
{
	struct virtq q;
	struct virtq_chain c;
	const char *err = NULL;
	queue_setup(&q, 8);
	set_desc(0, BUF, 16, 0, 0);
	post(8, 0);
	post(8, 0);
	ok(virtq_begin(&q, &err) == 2, "two chains pending");
	post(8, 0);
	put16(AVAIL + 2, (uint16_t)(get16(AVAIL + 2) + 200)); /* then far ahead: not read again */
	int a = virtq_pop(&q, &mem, &c, &err), b = virtq_pop(&q, &mem, &c, &err), d = virtq_pop(&q, &mem, &c, &err);
	ok(a == 1 && b == 1 && d == 0, "exactly those two pop (%d %d %d), whatever avail.idx says meanwhile", a, b, d);
	ok(virtq_begin(&q, &err) == -1 && err, "the next notify reads it again (%s)", err ? err : "no reason");
	put16(AVAIL + 2, 3);
	ok(virtq_begin(&q, &err) == 1 && virtq_pop(&q, &mem, &c, &err) == 1 && virtq_pop(&q, &mem, &c, &err) == 0,
	   "and serves the one made available since");
}

static void pop_refused(const char *what, struct virtq *q)
{
	struct virtq_chain c;
	const char *err = NULL;
	int r = virtq_begin(q, &err);
	if (r > 0)
		r = virtq_pop(q, &mem, &c, &err);
	ok(r == -1 && err, "pop refuses %s (%s)", what, err ? err : "no reason");
}

/* A one-descriptor chain at head 0 of a fresh queue of 8. */
static void pop_refused_desc(const char *what, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	struct virtq q;
	queue_setup(&q, 8);
	set_desc(0, addr, len, flags, next);
	post(8, 0);
	pop_refused(what, &q);
}

static void test_pop_refused(void)
{
	struct virtq q;
	pop_refused_desc("a buffer outside RAM", RAM + 0x1000, 16, 0, 0);
	pop_refused_desc("a buffer straddling the end of RAM", RAM - 8, 16, 0, 0);
	pop_refused_desc("addr+len overflowing (RAM-16, 0xffffffff)", RAM - 16, 0xffffffffu, 0, 0);
	pop_refused_desc("addr 0xfffffffffffffff0", 0xfffffffffffffff0ull, 0x20, 0, 0);
	pop_refused_desc("a self-loop", BUF, 16, VIRTQ_DESC_F_NEXT, 0);
	pop_refused_desc("next index == num", BUF, 16, VIRTQ_DESC_F_NEXT, 8);
	pop_refused_desc("next index 0xffff", BUF, 16, VIRTQ_DESC_F_NEXT, 0xffff);
	pop_refused_desc("an indirect descriptor", BUF, 16, VIRTQ_DESC_F_INDIRECT, 0);

	queue_setup(&q, 8);
	set_desc(0, BUF, 16, VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, BUF, 16, VIRTQ_DESC_F_NEXT, 0);
	post(8, 0);
	pop_refused("a loop 0 -> 1 -> 0", &q);

	queue_setup(&q, 256);
	for (uint16_t i = 0; i < 256; i++)
		set_desc(i, BUF, 16, VIRTQ_DESC_F_NEXT, (uint16_t)((i + 1) % 256));
	post(256, 17);
	pop_refused("a loop through all 256 descriptors", &q);

	queue_setup(&q, 8);
	set_desc(0, BUF, 16, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 1);
	set_desc(1, BUF, 16, 0, 0);
	post(8, 0);
	pop_refused("a readable buffer after a writable one", &q);

	queue_setup(&q, 8);
	post(8, 8);
	pop_refused("head index == num", &q);

	queue_setup(&q, 8);
	set_desc(0, BUF, 16, 0, 0);
	put16(AVAIL + 2, 9);
	pop_refused("avail idx more than num ahead", &q);

	clear_rings();
	q = (struct virtq){ .num = 8, .desc_gpa = DESC, .avail_gpa = AVAIL, .used_gpa = USED };
	set_desc(0, BUF, 16, 0, 0);
	post(8, 0);
	pop_refused("a queue that is not ready", &q);
	const char *err = NULL;
	ok(virtq_push(&q, 0, 0, &err) == -1 && err, "push refuses a queue that is not ready");
}

/* --- virtio-mmio transport, through a console ------------------------- */

static struct console con;

static int mmio(uint64_t off, uint32_t *v, uint32_t len, int is_write, const char **err)
{
	*err = NULL;
	return virtio_mmio_access(&con.mmio, off, (uint8_t *)v, len, is_write, err);
}

static uint32_t rd(uint64_t off)
{
	const char *err;
	uint32_t v = 0xdeadbeef;
	return mmio(off, &v, 4, 0, &err) ? 0xdeadbeef : v;
}

static int wr(uint64_t off, uint32_t v)
{
	const char *err;
	return mmio(off, &v, 4, 1, &err);
}

static void mmio_refused(const char *what, uint64_t off, uint32_t v, uint32_t len, int is_write)
{
	const char *err;
	int r = mmio(off, &v, len, is_write, &err);
	ok(r == -1 && err, "mmio refuses %s (%s)", what, err ? err : "no reason");
}

/* Status handshake up to FEATURES_OK with the given driver features;
 * returns the status read back. */
static uint32_t negotiate(uint64_t features)
{
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	for (uint32_t sel = 0; sel < 2; sel++) {
		wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, sel);
		wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> (32 * sel)));
	}
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
	return rd(VIRTIO_MMIO_STATUS);
}

/* Queue q at the test rings, size num, then QueueReady; its result. */
static int mmio_queue(uint32_t q, uint32_t num)
{
	clear_rings();
	int e = wr(VIRTIO_MMIO_QUEUE_SEL, q) | wr(VIRTIO_MMIO_QUEUE_NUM, num);
	e |= wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)DESC) | wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	e |= wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)AVAIL) | wr(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
	e |= wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)USED) | wr(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
	return e | wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

static void test_mmio_registers(void)
{
	ok(rd(VIRTIO_MMIO_MAGIC_VALUE) == VIRTIO_MMIO_MAGIC, "magic %#x", rd(VIRTIO_MMIO_MAGIC_VALUE));
	ok(rd(VIRTIO_MMIO_VERSION) == 2, "version 2");
	ok(rd(VIRTIO_MMIO_DEVICE_ID) == VIRTIO_ID_CONSOLE, "device id 3");
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	ok(rd(VIRTIO_MMIO_DEVICE_FEATURES) & 1u << (VIRTIO_F_VERSION_1 - 32), "device offers VERSION_1");

	mmio_refused("a 2-byte register read", VIRTIO_MMIO_MAGIC_VALUE, 0, 2, 0);
	mmio_refused("a 1-byte register write", VIRTIO_MMIO_STATUS, 1, 1, 1);
	mmio_refused("an 8-byte register read", VIRTIO_MMIO_MAGIC_VALUE, 0, 8, 0);
	mmio_refused("a misaligned 4-byte read", VIRTIO_MMIO_MAGIC_VALUE + 2, 0, 4, 0);
	mmio_refused("a write to the magic register", VIRTIO_MMIO_MAGIC_VALUE, 0, 4, 1);
	mmio_refused("a config read past its end", VIRTIO_MMIO_CONFIG + sizeof con.config, 0, 4, 0);
	mmio_refused("a config read straddling its end", VIRTIO_MMIO_CONFIG + sizeof con.config - 2, 0, 4, 0);
	mmio_refused("a config read at offset UINT64_MAX-3", UINT64_MAX - 3, 0, 4, 0);
	uint32_t v = 0;
	const char *err;
	con.config.emerg_wr = 0x5a;
	ok(mmio(VIRTIO_MMIO_CONFIG + offsetof(struct virtio_console_config, emerg_wr), &v, 4, 0, &err) == 0 &&
		   v == 0x5a,
	   "config read inside it");

	ok(!(negotiate(0) & VIRTIO_STATUS_FEATURES_OK), "FEATURES_OK without VERSION_1 does not stick");
	ok(!(negotiate(1ull << VIRTIO_F_VERSION_1 | 1) & VIRTIO_STATUS_FEATURES_OK),
	   "FEATURES_OK with a feature not offered does not stick");
	ok(negotiate(1ull << VIRTIO_F_VERSION_1) & VIRTIO_STATUS_FEATURES_OK, "FEATURES_OK with VERSION_1 sticks");
	mmio_refused("QueueNotify before DRIVER_OK", VIRTIO_MMIO_QUEUE_NOTIFY, 1, 4, 1);
	mmio_refused("QueueNum above 256", VIRTIO_MMIO_QUEUE_NUM, 512, 4, 1);
	wr(VIRTIO_MMIO_QUEUE_SEL, 5);
	mmio_refused("QueueNum for queue 5", VIRTIO_MMIO_QUEUE_NUM, 8, 4, 1);
	ok(rd(VIRTIO_MMIO_QUEUE_NUM_MAX) == 0, "queue 5 has QueueNumMax 0");
	ok(mmio_queue(1, 3) == -1, "QueueReady with num 3 refused");
	ok(rd(VIRTIO_MMIO_QUEUE_READY) == 0, "and the queue stays not ready");
}

static void test_mmio_transmit(int rfd)
{
	ok(negotiate(1ull << VIRTIO_F_VERSION_1) & VIRTIO_STATUS_FEATURES_OK, "features negotiated");
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	ok(rd(VIRTIO_MMIO_QUEUE_NUM_MAX) == VIRTQ_MAX_SIZE, "QueueNumMax 256");
	ok(mmio_queue(1, 8) == 0 && rd(VIRTIO_MMIO_QUEUE_READY) == 1, "transmitq set up and ready");
	mmio_refused("a queue register changed while ready", VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)DESC, 4, 1);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
				       VIRTIO_STATUS_DRIVER_OK);
	mmio_refused("QueueNotify for queue 5", VIRTIO_MMIO_QUEUE_NOTIFY, 5, 4, 1);

	put(BUF, "hello", 5);
	set_desc(3, BUF, 5, 0, 0);
	post(8, 3);
	ok(wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1) == 0, "QueueNotify 1");
	char got[16] = { 0 };
	ssize_t n = read(rfd, got, sizeof got);
	ok(n == 5 && !memcmp(got, "hello", 5), "\"hello\" came out on the host fd (%zd bytes)", n);
	ok(con.bytes_out == 5, "bytes_out %llu", (unsigned long long)con.bytes_out);
	ok(get16(USED + 2) == 1 && get32(USED + 4) == 3 && get32(USED + 8) == 0,
	   "used ring: idx %u id %u len %u", get16(USED + 2), get32(USED + 4), get32(USED + 8));

	set_desc(3, RAM - 2, 5, 0, 0);
	post(8, 3);
	mmio_refused("QueueNotify with a buffer outside RAM", VIRTIO_MMIO_QUEUE_NOTIFY, 1, 4, 1);

	wr(VIRTIO_MMIO_STATUS, 0);
	ok(rd(VIRTIO_MMIO_STATUS) == 0 && rd(VIRTIO_MMIO_QUEUE_READY) == 0, "status 0 resets the device");
}

/* The transmitq of a fresh console, ready; "hello world" in BUF. */
static void transmit_ready(void)
{
	negotiate(1ull << VIRTIO_F_VERSION_1);
	mmio_queue(1, 8);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
				       VIRTIO_STATUS_DRIVER_OK);
	put(BUF, "hello world", 11);
}

/* Output up to the limit is written exactly; a write past it stops the
 * run, and nothing is served after a stop request. */
static void test_output_limit(int rfd)
{
	static struct output_limit lim;
	char got[32];
	lim = (struct output_limit){ .limit = 16, .cut = 1 }; /* cut: no marker on the test's stderr */
	con.limit = &lim;
	transmit_ready();
	set_desc(0, BUF, 5, 0, 0);
	post(8, 0);
	post(8, 0);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	ssize_t n = read(rfd, got, sizeof got);
	ok(n == 10 && stop_requested() == STOP_NONE, "10 bytes of a 16-byte limit pass (%zd), no stop", n);
	set_desc(1, BUF, 11, 0, 0);
	post(8, 1);
	post(8, 1);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = read(rfd, got, sizeof got);
	ok(n == 6 && !memcmp(got, "hello ", 6), "11 more: the 6 up to the limit come out (%zd)", n);
	ok(stop_requested() == STOP_OUTPUT, "and the run is stopped for output");
	ok(get16(USED + 2) == 3, "the chain after the stop is not served (used idx %u)", get16(USED + 2));
	stop_reset();
	con.limit = NULL;

	transmit_ready();
	set_desc(0, BUF, 5, 0, 0);
	post(8, 0);
	stop_request(STOP_TIMEOUT);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	ok(read(rfd, got, sizeof got) == -1 && get16(USED + 2) == 0, "after a timeout nothing is written");
	stop_reset();
}

static void test_mmio(void)
{
	int p[2];
	if (pipe(p)) {
		ok(0, "pipe");
		return;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	console_init(&con, MMIO_BASE, &mem, -1, p[1]);
	test_mmio_registers();
	test_mmio_transmit(p[0]);
	test_output_limit(p[0]);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	if (guest_mem_alloc(&mem, RAM)) {
		printf("Bail out! guest_mem_alloc\n");
		return 1;
	}
	test_enable();
	test_good_chain();
	test_wrap();
	test_snapshot();
	test_pop_refused();
	test_mmio();
	guest_mem_free(&mem);
	return tap_done();
}
