/* SPDX-License-Identifier: GPL-2.0-only */
/* A test-only hostile guest kernel: it replaces husk's kernel (build/tests/
 * husk-test, HUSK_TEST_KERNEL) and attacks the VMM the way a compromised
 * kernel could, one scenario per run, named by the EVIL=NAME variable in the
 * boot device tree.  tests/hostile/evil-kernel.t states what husk must do
 * with each.  If a scenario survives its attack it exits with status 99. */
#include <stddef.h>
#include <stdint.h>
#include "husk/abi.h"
#include "husk/net_stream.h"
#include "husk/virtio_blk.h"
#include "husk/virtio_console.h"
#include "husk/virtio_regs.h"
#include "husk/virtio_ring.h"

#define SURVIVED 99
#define CONSOLE_IN  0 /* device numbers: the order husk attaches them */
#define CONSOLE_OUT 1
#define DISK        3 /* the first --ro disk */
#define RECEIVEQ VIRTIO_CONSOLE_RECEIVEQ
#define TRANSMITQ VIRTIO_CONSOLE_TRANSMITQ
#define SECTOR VIRTIO_BLK_SECTOR_SIZE

/* Well-formed rings of 8 entries: the attacks are in what goes into them. */
struct ring VIRTQ_AVAIL(8);
struct used VIRTQ_USED(8);

static struct virtq_desc desc[8] __attribute__((aligned(16)));
static struct ring avail __attribute__((aligned(16)));
static volatile struct used used __attribute__((aligned(16)));
static char buf[8192] __attribute__((aligned(4096)));

static void out32(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }
static _Noreturn void finish(uint32_t status)
{
	out32(HUSK_PORT_EXIT, status);
	for (;;)
		;
}

static volatile uint32_t *reg(int dev, uint32_t off)
{
	return (volatile uint32_t *)(HUSK_MMIO_BASE + dev * HUSK_MMIO_SIZE + off);
}

static void features_ok(int dev)
{
	*reg(dev, VIRTIO_MMIO_STATUS) = 0;
	*reg(dev, VIRTIO_MMIO_STATUS) = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	*reg(dev, VIRTIO_MMIO_DRIVER_FEATURES_SEL) = 1;
	*reg(dev, VIRTIO_MMIO_DRIVER_FEATURES) = 1; /* VIRTIO_F_VERSION_1 */
	*reg(dev, VIRTIO_MMIO_STATUS) = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK;
}

static void queue_at(int dev, int q, uint32_t num, uint64_t d, uint64_t a, uint64_t u)
{
	*reg(dev, VIRTIO_MMIO_QUEUE_SEL) = q;
	*reg(dev, VIRTIO_MMIO_QUEUE_NUM) = num;
	*reg(dev, VIRTIO_MMIO_QUEUE_DESC_LOW) = (uint32_t)d;
	*reg(dev, VIRTIO_MMIO_QUEUE_DESC_HIGH) = (uint32_t)(d >> 32);
	*reg(dev, VIRTIO_MMIO_QUEUE_DRIVER_LOW) = (uint32_t)a;
	*reg(dev, VIRTIO_MMIO_QUEUE_DRIVER_HIGH) = (uint32_t)(a >> 32);
	*reg(dev, VIRTIO_MMIO_QUEUE_DEVICE_LOW) = (uint32_t)u;
	*reg(dev, VIRTIO_MMIO_QUEUE_DEVICE_HIGH) = (uint32_t)(u >> 32);
	*reg(dev, VIRTIO_MMIO_QUEUE_READY) = 1;
}

static void driver_ok(int dev)
{
	*reg(dev, VIRTIO_MMIO_STATUS) = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
					VIRTIO_STATUS_DRIVER_OK;
}

/* A device with one well-formed queue of 8 descriptors. */
static void bring_up(int dev, int q)
{
	avail.idx = used.idx = 0; /* a reset device starts its rings over */
	features_ok(dev);
	queue_at(dev, q, 8, (uintptr_t)desc, (uintptr_t)&avail, (uintptr_t)&used);
	driver_ok(dev);
}

/* The device reads and writes our memory during an MMIO exit: the compiler
 * must neither delay our stores past it nor keep values across it. */
static void notify(int dev, int q)
{
	__asm__ volatile("" : : : "memory");
	*reg(dev, VIRTIO_MMIO_QUEUE_NOTIFY) = q;
	__asm__ volatile("" : : : "memory");
}

/* Offers the chain starting at descriptor `head` and notifies. */
static void offer(int dev, int q, uint16_t head)
{
	avail.ring[avail.idx % 8] = head;
	avail.idx++;
	notify(dev, q);
}

static void set_desc(int i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	desc[i] = (struct virtq_desc){ addr, len, flags, next };
}

static size_t length(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static void copy(char *d, const char *s, size_t n)
{
	while (n--)
		*d++ = *s++;
}

static void say(const char *s)
{
	size_t n = length(s);
	copy(buf, s, n);
	set_desc(0, (uintptr_t)buf, n, 0, 0);
	offer(CONSOLE_OUT, TRANSMITQ, 0);
}

/* The network's device (with --allow-net): found by its ID, after the
 * consoles and disks; its receive queue on rings of its own. */
static struct virtq_desc rx_desc[8] __attribute__((aligned(16)));
static struct ring rx_avail __attribute__((aligned(16)));
static volatile struct used rx_used __attribute__((aligned(16)));
static uint8_t rx_buf[4096] __attribute__((aligned(4096)));

static int net_up(void)
{
	int d = 3;
	while (*reg(d, VIRTIO_MMIO_DEVICE_ID) != HUSK_VIRTIO_ID_NET_STREAM)
		d++; /* the windows are taken in order: a window past the last device ends the run */
	avail.idx = used.idx = 0;
	features_ok(d);
	queue_at(d, HUSK_NET_TRANSMITQ, 8, (uintptr_t)desc, (uintptr_t)&avail, (uintptr_t)&used);
	queue_at(d, HUSK_NET_RECEIVEQ, 8, (uintptr_t)rx_desc, (uintptr_t)&rx_avail, (uintptr_t)&rx_used);
	driver_ok(d);
	rx_desc[0] = (struct virtq_desc){ (uintptr_t)rx_buf, sizeof rx_buf, VIRTQ_DESC_F_WRITE, 0 };
	rx_avail.ring[0] = 0;
	rx_avail.idx = 1;
	notify(d, HUSK_NET_RECEIVEQ);
	return d;
}

/* One message as given (len: the bytes sent, whatever the header says). */
static void net_send(int d, const struct husk_net_hdr *h, const char *payload, uint32_t len)
{
	copy(buf, (const char *)h, sizeof *h);
	copy(buf + sizeof *h, payload, len - sizeof *h);
	set_desc(0, (uintptr_t)buf, len, 0, 0);
	offer(d, HUSK_NET_TRANSMITQ, 0);
}

/* The broker's first answer, waited for in host sleeps of 10 ms (2 s at
 * most: the run's -t ends it first). */
static const struct husk_net_hdr *net_answer(void)
{
	struct husk_report *report = (struct husk_report *)HUSK_REPORT;
	for (int i = 0; i < 200 && !rx_used.idx; i++) {
		report->sleep_ns = 10000000;
		out32(HUSK_PORT_SLEEP, 0);
	}
	if (!rx_used.idx)
		finish(97);
	return (const struct husk_net_hdr *)rx_buf;
}

/* Sends one transmit descriptor as given: the attack is in its fields. */
static void tx_one(uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	bring_up(CONSOLE_OUT, TRANSMITQ);
	set_desc(0, addr, len, flags, next);
	offer(CONSOLE_OUT, TRANSMITQ, 0);
}

static struct virtio_blk_req_hdr req;
static volatile uint8_t blk_status;

/* A virtio-blk request: header, optional data at addr, status; returns the
 * status. */
static uint8_t blk_at(uint32_t type, uint64_t sector, uint32_t hdr_len, uint64_t addr, uint32_t data_len,
		      uint16_t data_flags)
{
	bring_up(DISK, 0);
	req = (struct virtio_blk_req_hdr){ type, 0, sector };
	blk_status = 0xee;
	int n = 0;
	set_desc(n, (uintptr_t)&req, hdr_len, VIRTQ_DESC_F_NEXT, n + 1), n++;
	if (data_len)
		set_desc(n, addr, data_len, data_flags | VIRTQ_DESC_F_NEXT, n + 1), n++;
	set_desc(n, (uintptr_t)&blk_status, 1, VIRTQ_DESC_F_WRITE, 0);
	offer(DISK, 0, 0);
	return blk_status;
}

/* The same with the data in buf. */
static uint8_t blk(uint32_t type, uint64_t sector, uint32_t hdr_len, uint32_t data_len, uint16_t data_flags)
{
	return blk_at(type, sector, hdr_len, (uintptr_t)buf, data_len, data_flags);
}

/* Guest memory for large buffers, well above the kernel and its stack. */
#define BIG (16ull << 20)
#define DMA_T (1ull << 20) /* the DMA-loop table's first sector */

/* The DMA-loop table on the workdir disk: sector DMA_T+L holds the avail
 * index L+2 and the sector number DMA_T+(L+1 mod 65536), L < entries (a
 * multiple of 2048), written 1 MiB per request. */
static void dma_table(uint32_t entries)
{
	uint8_t *big = (uint8_t *)BIG;
	for (uint32_t chunk = 0; chunk < entries; chunk += 2048) {
		for (uint32_t k = 0; k < 2048; k++) {
			uint32_t L = chunk + k;
			uint8_t *sec = big + (uint64_t)SECTOR * k;
			uint16_t idx = (uint16_t)(L + 2);
			uint64_t next = DMA_T + ((L + 1) & 0xffff);
			sec[0] = (uint8_t)idx, sec[1] = (uint8_t)(idx >> 8);
			for (int b = 0; b < 8; b++)
				sec[2 + b] = (uint8_t)(next >> (8 * b));
		}
		if (blk_at(VIRTIO_BLK_T_OUT, DMA_T + chunk, sizeof req, BIG, 2048 * SECTOR, 0))
			finish(98);
	}
}

/* Offers a read of sector DMA_T into avail.idx and the request's own
 * sector number: each read makes one more request available, and points
 * it at the next sector. */
static void dma_start(void)
{
	bring_up(DISK, 0);
	req = (struct virtio_blk_req_hdr){ VIRTIO_BLK_T_IN, 0, DMA_T };
	for (int i = 0; i < 8; i++)
		avail.ring[i] = 0;
	set_desc(0, (uintptr_t)&req, sizeof req, VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, (uintptr_t)&avail.idx, 2, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
	set_desc(2, (uintptr_t)&req.sector, 8, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 3);
	set_desc(3, (uintptr_t)buf, SECTOR - sizeof avail.idx - sizeof req.sector, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 4);
	set_desc(4, (uintptr_t)&blk_status, 1, VIRTQ_DESC_F_WRITE, 0);
	avail.idx = 1;
	notify(DISK, 0);
}

static int same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static const char *scenario(const uint8_t *fdt)
{
	uint32_t size = (uint32_t)fdt[4] << 24 | fdt[5] << 16 | fdt[6] << 8 | fdt[7];
	static const char key[] = "EVIL=";
	for (uint32_t i = 0; size > 5 && i < size - 5; i++) {
		uint32_t k = 0;
		while (k < 5 && fdt[i + k] == (uint8_t)key[k])
			k++;
		if (k == 5)
			return (const char *)fdt + i + 5;
	}
	return "";
}

void evil_main(const uint8_t *fdt)
{
	const char *s = scenario(fdt);
	struct husk_report *report = (struct husk_report *)HUSK_REPORT;

	/* The baseline: a well-behaved write, so the others fail for their attack. */
	if (same(s, "hello")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		say("hello from the test kernel\n");
		finish(0);
	}
	/* Descriptors whose addresses or lengths lie. */
	if (same(s, "desc-outside-ram"))
		tx_one(0x7fff00000000ull, 16, 0, 0);
	if (same(s, "desc-length-lie"))
		tx_one((uintptr_t)buf, 0xffffffffu, 0, 0);
	if (same(s, "desc-wraps-around"))
		tx_one(0xfffffffffffff000ull, 0x2000, 0, 0);
	if (same(s, "desc-points-at-mmio"))
		tx_one(HUSK_MMIO_BASE, 64, 0, 0);
	if (same(s, "desc-next-out-of-range"))
		tx_one((uintptr_t)buf, 1, VIRTQ_DESC_F_NEXT, 200);
	if (same(s, "desc-indirect"))
		tx_one((uintptr_t)desc, 32, VIRTQ_DESC_F_INDIRECT, 0);
	if (same(s, "desc-loop")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		set_desc(0, (uintptr_t)buf, 1, VIRTQ_DESC_F_NEXT, 1);
		set_desc(1, (uintptr_t)buf, 1, VIRTQ_DESC_F_NEXT, 0);
		offer(CONSOLE_OUT, TRANSMITQ, 0);
	}
	if (same(s, "desc-read-after-write")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		set_desc(0, (uintptr_t)buf, 1, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
		set_desc(1, (uintptr_t)buf, 1, 0, 0);
		offer(CONSOLE_OUT, TRANSMITQ, 0);
	}
	/* Rings that lie. */
	if (same(s, "avail-index-ahead")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		set_desc(0, (uintptr_t)buf, 1, 0, 0);
		avail.idx = 1000;
		notify(CONSOLE_OUT, TRANSMITQ);
	}
	if (same(s, "avail-head-out-of-range")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		offer(CONSOLE_OUT, TRANSMITQ, 77);
	}
	if (same(s, "rings-outside-ram")) {
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, TRANSMITQ, 8, 0x40000000000ull, (uintptr_t)&avail, (uintptr_t)&used);
	}
	if (same(s, "rings-at-end-of-ram")) {
		/* The used ring starts inside RAM and runs past its end. */
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, TRANSMITQ, 256, (uintptr_t)desc, (uintptr_t)&avail, (32ull << 20) - 8);
	}
	if (same(s, "rings-misaligned")) {
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, TRANSMITQ, 8, (uintptr_t)desc + 1, (uintptr_t)&avail, (uintptr_t)&used);
	}
	if (same(s, "queue-size-not-power-of-two")) {
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, TRANSMITQ, 3, (uintptr_t)desc, (uintptr_t)&avail, (uintptr_t)&used);
	}
	if (same(s, "queue-size-huge")) {
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, TRANSMITQ, 65535, (uintptr_t)desc, (uintptr_t)&avail, (uintptr_t)&used);
	}
	if (same(s, "queue-that-does-not-exist")) {
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, 7, 8, (uintptr_t)desc, (uintptr_t)&avail, (uintptr_t)&used);
	}
	if (same(s, "queue-moved-while-live")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		*reg(CONSOLE_OUT, VIRTIO_MMIO_QUEUE_DESC_LOW) = 0x1000;
	}
	if (same(s, "notify-before-driver-ok")) {
		features_ok(CONSOLE_OUT);
		queue_at(CONSOLE_OUT, TRANSMITQ, 8, (uintptr_t)desc, (uintptr_t)&avail, (uintptr_t)&used);
		notify(CONSOLE_OUT, TRANSMITQ);
	}
	if (same(s, "notify-unknown-queue")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		notify(CONSOLE_OUT, 9);
	}
	if (same(s, "notify-unready-queue")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		notify(CONSOLE_OUT, RECEIVEQ);
	}
	/* Buffers in the wrong direction are not the device's to use: skipped
	 * or answered with nothing, and the run goes on. */
	if (same(s, "tx-device-writable")) {
		tx_one((uintptr_t)buf, 16, VIRTQ_DESC_F_WRITE, 0);
		say("went on\n");
		finish(0);
	}
	if (same(s, "rx-device-readable")) {
		bring_up(CONSOLE_IN, RECEIVEQ);
		set_desc(0, (uintptr_t)buf, 16, 0, 0);
		offer(CONSOLE_IN, RECEIVEQ, 0);
		finish(used.idx == 1 && used.ring[0].len == 0 ? 0 : 98);
	}
	/* Registers. */
	if (same(s, "mmio-no-device"))
		(void)*reg(HUSK_MMIO_MAX - 1, VIRTIO_MMIO_MAGIC_VALUE);
	if (same(s, "mmio-beyond-ram")) {
		/* Map 512 MiB (run with -m 256M: no RAM there) in our own page
		 * tables, then write to it. */
		volatile uint64_t *pd = (volatile uint64_t *)HUSK_PD;
		uintptr_t a = 512ull << 20;
		pd[a >> 21] = a | 0x87; /* present, writable, user, 2 MiB */
		__asm__ volatile("invlpg (%0)" : : "r"(a) : "memory");
		*(volatile uint32_t *)a = 1;
	}
	if (same(s, "mmio-8-byte-register"))
		(void)*(volatile uint64_t *)reg(CONSOLE_OUT, VIRTIO_MMIO_STATUS);
	if (same(s, "mmio-1-byte-register"))
		*(volatile uint8_t *)reg(CONSOLE_OUT, VIRTIO_MMIO_STATUS) = 1;
	if (same(s, "mmio-unaligned-register"))
		*(volatile uint32_t *)((uintptr_t)reg(CONSOLE_OUT, VIRTIO_MMIO_STATUS) + 2) = 1;
	if (same(s, "mmio-write-read-only-register"))
		*reg(CONSOLE_OUT, VIRTIO_MMIO_MAGIC_VALUE) = 0;
	if (same(s, "mmio-config-out-of-range"))
		(void)*reg(CONSOLE_OUT, VIRTIO_MMIO_CONFIG + 0xe00);
	if (same(s, "features-refused")) {
		/* Features the device does not offer: FEATURES_OK does not stick. */
		*reg(CONSOLE_OUT, VIRTIO_MMIO_STATUS) = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
		*reg(CONSOLE_OUT, VIRTIO_MMIO_DRIVER_FEATURES_SEL) = 0;
		*reg(CONSOLE_OUT, VIRTIO_MMIO_DRIVER_FEATURES) = 0xffffffff;
		*reg(CONSOLE_OUT, VIRTIO_MMIO_STATUS) = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
							VIRTIO_STATUS_FEATURES_OK;
		finish(*reg(CONSOLE_OUT, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK ? 98 : 0);
	}
	/* I/O ports. */
	if (same(s, "port-unknown"))
		out32(0x80, 1);
	if (same(s, "port-read")) {
		uint32_t v;
		__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"((uint16_t)HUSK_PORT_EXIT));
	}
	if (same(s, "port-byte-exit"))
		__asm__ volatile("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)HUSK_PORT_EXIT));
	if (same(s, "port-string-exit")) {
		static const uint32_t words[4] = { 5, 6, 7, 8 };
		__asm__ volatile("rep outsl" : : "S"(words), "c"(4), "d"((uint16_t)HUSK_PORT_EXIT) : "memory");
	}
	/* Block requests that lie. */
	if (same(s, "blk-short-header"))
		blk(VIRTIO_BLK_T_IN, 0, 8, SECTOR, VIRTQ_DESC_F_WRITE);
	if (same(s, "blk-no-status")) {
		bring_up(DISK, 0);
		req = (struct virtio_blk_req_hdr){ VIRTIO_BLK_T_IN, 0, 0 };
		set_desc(0, (uintptr_t)&req, sizeof req, 0, 0);
		offer(DISK, 0, 0);
	}
	if (same(s, "blk-data-not-sectors"))
		finish(blk(VIRTIO_BLK_T_IN, 0, sizeof req, 100, VIRTQ_DESC_F_WRITE));
	if (same(s, "blk-read-into-readable"))
		blk(VIRTIO_BLK_T_IN, 0, sizeof req, SECTOR, 0);
	if (same(s, "blk-read-beyond-end"))
		finish(blk(VIRTIO_BLK_T_IN, 1ull << 40, sizeof req, SECTOR, VIRTQ_DESC_F_WRITE));
	if (same(s, "blk-sector-overflow"))
		finish(blk(VIRTIO_BLK_T_IN, ~0ull, sizeof req, 2 * SECTOR, VIRTQ_DESC_F_WRITE));
	if (same(s, "blk-write-read-only"))
		finish(blk(VIRTIO_BLK_T_OUT, 0, sizeof req, SECTOR, 0));
	if (same(s, "blk-unknown-type"))
		finish(blk(77, 0, sizeof req, 0, 0));
	if (same(s, "blk-scribble")) {
		/* Garbage over the start of the disk (superblock, group
		 * descriptors, inode table), then a normal exit: run with a
		 * workdir as the only disk. */
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (char)(i * 7 ^ 0x5a);
		for (uint64_t sector = 0; sector < 256; sector += sizeof buf / SECTOR)
			if (blk(VIRTIO_BLK_T_OUT, sector, sizeof req, sizeof buf, 0))
				finish(98);
		finish(0);
	}
	/* Reports through the report page that lie. */
	if (same(s, "report-bad-fault")) {
		report->fault = (struct husk_fault){ 9999, ~0ul, ~0ul, ~0ul, 9999 };
		out32(HUSK_PORT_FAULT, 0);
	}
	if (same(s, "report-panic-unterminated")) {
		for (size_t i = 0; i < sizeof report->msg; i++)
			report->msg[i] = (char)(0x80 | i);
		out32(HUSK_PORT_PANIC, 0);
	}
	if (same(s, "report-sleep-forever")) {
		report->sleep_ns = ~0ul;
		for (;;)
			out32(HUSK_PORT_SLEEP, 0);
	}
	/* The CPU. */
	/* The network: the broker judges what the kernel asks, whatever it is. */
	if (same(s, "net-connect-metadata")) { /* straight to the device, past any guest check */
		int d = net_up();
		struct husk_net_hdr h = { .op = HUSK_NET_CONNECT, .conn = 7, .family = 2, .port = 80,
					  .addr = { 169, 254, 169, 254 }, .buf_alloc = 65536 };
		net_send(d, &h, 0, sizeof h);
		const struct husk_net_hdr *a = net_answer();
		finish(a->op == HUSK_NET_RESET && a->conn == 7 && a->error == 13 /* EACCES */ ? 0 : 98);
	}
	if (same(s, "net-resolve-unlisted")) {
		int d = net_up();
		struct husk_net_hdr h = { .op = HUSK_NET_RESOLVE, .conn = 5, .len = 24 };
		net_send(d, &h, "metadata.google.internal", sizeof h + 24);
		const struct husk_net_hdr *a = net_answer();
		finish(a->op == HUSK_NET_RESOLVED && a->conn == 5 && a->error == HUSK_NET_NXDOMAIN && !a->len ? 0 : 98);
	}
	if (same(s, "net-data-unopened")) { /* bytes for a connection never made: dropped, the broker goes on */
		int d = net_up();
		struct husk_net_hdr h = { .op = HUSK_NET_DATA, .conn = 9, .len = 5 };
		net_send(d, &h, "hello", sizeof h + 5);
		h = (struct husk_net_hdr){ .op = HUSK_NET_CONNECT, .conn = 10, .family = 2, .port = 1,
					   .addr = { 10, 9, 8, 7 } };
		net_send(d, &h, 0, sizeof h);
		const struct husk_net_hdr *a = net_answer();
		finish(a->op == HUSK_NET_RESET && a->conn == 10 && a->error == 13 ? 0 : 98);
	}
	if (same(s, "net-length-lie")) { /* the device checks framing: the run ends */
		int d = net_up();
		struct husk_net_hdr h = { .op = HUSK_NET_DATA, .conn = 9, .len = 4000 };
		net_send(d, &h, "short", sizeof h + 5);
	}
	if (same(s, "spin"))
		for (;;)
			;
	if (same(s, "halt"))
		__asm__ volatile("cli; hlt");
	if (same(s, "triple-fault")) {
		static const struct { uint16_t limit; uint64_t base; } __attribute__((packed)) none = { 0, 0 };
		__asm__ volatile("lidt %0; int3" : : "m"(none));
	}
	if (same(s, "unknown-msr")) {
		__asm__ volatile("wrmsr" : : "c"(0xdeadbeef), "a"(1), "d"(0));
	}
	if (same(s, "output-flood")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = 'x';
		for (int i = 0; i < 2000; i++) {
			set_desc(0, (uintptr_t)buf, sizeof buf, 0, 0);
			offer(CONSOLE_OUT, TRANSMITQ, 0);
		}
		finish(0);
	}
	/* A device that re-reads avail.idx while it serves would never come
	 * back from this notify; served once, the guest keeps it busy: only
	 * the time limits end the run. */
	if (same(s, "blk-dma-loop")) {
		dma_table(65536);
		bring_up(CONSOLE_OUT, TRANSMITQ);
		say("table written; starting the loop\n");
		dma_start();
		for (;;)
			notify(DISK, 0);
	}
	/* One notify serves the one request that was pending when it came. */
	if (same(s, "blk-dma-once")) {
		dma_table(2048);
		dma_start();
		finish(used.idx == 1 ? 0 : 98);
	}
	/* 4 MiB of data in one request is served, a sector more is an I/O error. */
	if (same(s, "blk-request-too-big")) {
		uint8_t at_cap = blk_at(VIRTIO_BLK_T_IN, 0, sizeof req, BIG, HUSK_BLK_MAX_REQUEST, VIRTQ_DESC_F_WRITE);
		uint8_t beyond =
			blk_at(VIRTIO_BLK_T_IN, 0, sizeof req, BIG, HUSK_BLK_MAX_REQUEST + SECTOR, VIRTQ_DESC_F_WRITE);
		finish(at_cap == VIRTIO_BLK_S_OK && beyond == VIRTIO_BLK_S_IOERR ? 0 : 98);
	}
	/* Eight 64 KiB writes in one notify, to a stdout nobody reads: the
	 * first fills the pipe, the second blocks until the timeout, none may
	 * block after it. */
	if (same(s, "tx-blocked")) {
		bring_up(CONSOLE_OUT, TRANSMITQ);
		uint8_t *big = (uint8_t *)BIG;
		for (uint32_t i = 0; i < 65536; i++)
			big[i] = 'x';
		for (uint16_t i = 0; i < 8; i++) {
			set_desc(i, BIG, 65536, 0, 0);
			avail.ring[i] = i;
		}
		avail.idx = 8;
		notify(CONSOLE_OUT, TRANSMITQ);
		finish(97); /* the VMM came back to the guest */
	}
	if (same(s, "exit-status-wide"))
		finish(0x12345);
	finish(SURVIVED);
}
