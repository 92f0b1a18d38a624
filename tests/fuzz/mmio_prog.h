/* SPDX-License-Identifier: GPL-2.0-only */
/* Drives a virtio-mmio device (vmm/virtio_mmio.c and the device behind it)
 * with a byte program, for fuzz_console and fuzz_blk.
 *
 * Input:  byte 0    device flags (the target says what they mean)
 *         byte 1    number of 8-byte operations, N
 *         N ops     { u8 kind; u8 arg; u16 off; u32 val; } little endian
 *         the rest  guest memory contents from address 0 (64 KiB, rest zero)
 *
 * kind % 8:
 *   0, 1  register write: offset off & 0xfff, value val, 4 bytes
 *         (arg & 0x80: arg % 9 bytes instead, for config space and misuse)
 *   2     register read, same offset and length rules
 *   3     the guest writes 1 + (arg & 3) bytes of val at guest address off
 *   4     driver init: reset, ACKNOWLEDGE, DRIVER, features (the device's
 *         own & val; arg & 1: val as is), FEATURES_OK, DRIVER_OK
 *   5     queue set-up: QueueSel (arg & 1; arg & 0x40: arg & 0x3f),
 *         QueueNum 1 << ((arg >> 1 & 15) % 9), desc val & 0xfff0,
 *         driver (val >> 16) & 0xfffe, device off & 0xfffc, QueueReady 1
 *   6     QueueNotify val & 1 (arg & 0x80: val as is)
 *   7     the driver makes chain val & 0xffff available on queue arg & 1
 *         (avail->ring[idx % num] = head, idx + 1); arg & 2: then notifies
 *
 * As in vmm/run.c, the first access the transport refuses ends the run.
 * Every chain virtq_pop hands the device is checked (--wrap=virtq_pop) to
 * lie inside guest memory; guest memory is on the ASan heap, so a device
 * access outside it is reported where it happens. */
#ifndef HUSK_MMIO_PROG_H
#define HUSK_MMIO_PROG_H
#include "fuzz.h"
#include "husk/virtio_regs.h"
#include "devices/virtio_mmio.h"

#define RAM (64u << 10)

static struct guest_mem mem;

int __real_virtq_pop(struct virtq *q, const struct guest_mem *m, struct virtq_chain *c, const char **err);

int __wrap_virtq_pop(struct virtq *q, const struct guest_mem *m, struct virtq_chain *c, const char **err);
int __wrap_virtq_pop(struct virtq *q, const struct guest_mem *m, struct virtq_chain *c, const char **err)
{
	int r = __real_virtq_pop(q, m, c, err);
	CHECK(r >= -1 && r <= 1, "virtq_pop returned %d", r);
	if (r == 1) {
		CHECK(c->n >= 1 && c->n <= q->num && c->head < q->num, "chain head %u, %d segments, queue of %u", c->head,
		      c->n, q->num);
		for (int i = 0; i < c->n; i++)
			CHECK(in_guest(m, c->seg[i].ptr, c->seg[i].len), "segment %d [%p, +%u) outside guest memory %p+%#llx",
			      i, (void *)c->seg[i].ptr, c->seg[i].len, (void *)m->host, (unsigned long long)m->size);
	}
	if (r < 0)
		CHECK(*err, "virtq_pop failed without a reason");
	return r;
}

/* One access as KVM would report it; 0 or -1 (the run ends). */
static int mmio_io(struct virtio_mmio *d, uint64_t off, uint32_t len, int is_write, uint32_t val)
{
	uint8_t buf[8];
	memcpy(buf, &val, 4);
	memcpy(buf + 4, &val, 4);
	const char *err = NULL;
	int r = virtio_mmio_access(d, off, buf, len, is_write, &err);
	CHECK(r == 0 || (r == -1 && err), "access returned %d, err %s", r, err ? err : "(none)");
	if (!r && !is_write && off >= VIRTIO_MMIO_CONFIG)
		CHECK(!memcmp(buf, d->config + (off - VIRTIO_MMIO_CONFIG), len), "config read returned other bytes");
	return r;
}

static int mmio_wr(struct virtio_mmio *d, uint64_t off, uint32_t val)
{
	return mmio_io(d, off, 4, 1, val);
}

static void guest_write(uint64_t gpa, const void *p, size_t n)
{
	if (gpa < RAM)
		memcpy(mem.host + gpa, p, n < RAM - gpa ? n : RAM - gpa);
}

static int op_init(struct virtio_mmio *d, int raw, uint32_t val)
{
	uint32_t lo = raw ? val : val & (uint32_t)d->features;
	uint32_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	return mmio_wr(d, VIRTIO_MMIO_STATUS, 0) || mmio_wr(d, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE) ||
	       mmio_wr(d, VIRTIO_MMIO_STATUS, s) || mmio_wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0) ||
	       mmio_wr(d, VIRTIO_MMIO_DRIVER_FEATURES, lo) || mmio_wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1) ||
	       mmio_wr(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(d->features >> 32)) ||
	       mmio_wr(d, VIRTIO_MMIO_STATUS, s | VIRTIO_STATUS_FEATURES_OK) ||
	       mmio_wr(d, VIRTIO_MMIO_STATUS, s | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
}

static int op_queue(struct virtio_mmio *d, uint8_t arg, uint16_t off, uint32_t val)
{
	uint32_t sel = arg & 0x40 ? arg & 0x3f : arg & 1;
	return mmio_wr(d, VIRTIO_MMIO_QUEUE_SEL, sel) ||
	       mmio_wr(d, VIRTIO_MMIO_QUEUE_NUM, 1u << ((arg >> 1 & 15) % 9)) ||
	       mmio_wr(d, VIRTIO_MMIO_QUEUE_DESC_LOW, val & 0xfff0) || mmio_wr(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0) ||
	       mmio_wr(d, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (val >> 16) & 0xfffe) ||
	       mmio_wr(d, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0) || mmio_wr(d, VIRTIO_MMIO_QUEUE_DEVICE_LOW, off & 0xfffc) ||
	       mmio_wr(d, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0) || mmio_wr(d, VIRTIO_MMIO_QUEUE_READY, 1);
}

static int op_post(struct virtio_mmio *d, uint8_t arg, uint32_t val)
{
	int sel = arg & 1;
	if (sel >= d->nqueues)
		return 0;
	const struct virtq *q = &d->q[sel];
	if (q->num) {
		uint8_t *idx = gpa_ptr(&mem, q->avail_gpa + 2, 2);
		uint16_t i = idx ? rd16(idx) : 0;
		uint8_t *ring = gpa_ptr(&mem, q->avail_gpa + 4 + 2ull * (i % q->num), 2);
		if (idx && ring) {
			uint16_t head = (uint16_t)val;
			memcpy(ring, &head, 2);
			i++;
			memcpy(idx, &i, 2);
		}
	}
	return arg & 2 ? mmio_wr(d, VIRTIO_MMIO_QUEUE_NOTIFY, (uint32_t)sel) : 0;
}

/* Lays out guest memory from the input and runs the program; returns the
 * number of operations done. */
static int mmio_run(struct virtio_mmio *d, const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t nops = data[1], avail = (size - 2) / 8;
	if (nops > avail)
		nops = avail;
	const uint8_t *ops = data + 2, *image = ops + 8 * nops;
	size_t image_len = size - 2 - 8 * nops;
	memset(mem.host, 0, RAM);
	memcpy(mem.host, image, image_len < RAM ? image_len : RAM);
	for (size_t i = 0; i < nops; i++) {
		const uint8_t *o = ops + 8 * i;
		uint8_t kind = o[0] % 8, arg = o[1];
		uint16_t off = rd16(o + 2);
		uint32_t val = rd32(o + 4);
		uint32_t len = arg & 0x80 ? arg % 9 : 4;
		int r = 0;
		switch (kind) {
		case 0:
		case 1: r = mmio_io(d, off & 0xfff, len, 1, val); break;
		case 2: r = mmio_io(d, off & 0xfff, len, 0, val); break;
		case 3: guest_write(off, &val, 1 + (arg & 3)); break;
		case 4: r = op_init(d, arg & 1, val); break;
		case 5: r = op_queue(d, arg, off, val); break;
		case 6: r = mmio_wr(d, VIRTIO_MMIO_QUEUE_NOTIFY, arg & 0x80 ? val : val & 1); break;
		case 7: r = op_post(d, arg, val); break;
		}
		if (r)
			return (int)i + 1;
	}
	return (int)nops;
}
#endif
