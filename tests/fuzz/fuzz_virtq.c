/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/virtq.c on guest memory the fuzzer writes.  Input: a 32-byte header
 * (queue size, ring addresses, how the driver goes on), then the contents of
 * a 64 KiB guest memory from address 0 (the rest zero).  virtq_enable, then
 * rounds (notifies) of virtq_begin and virtq_pop/virtq_push as a device
 * would, the driver making more chains available between rounds.  Never a
 * crash; every segment returned lies inside guest memory, the device's
 * writes into writable segments (which may overlap the rings, avail.idx
 * included) stay inside it too, and a round serves exactly the chains
 * virtq_begin counted, at most num, whatever those writes do to the ring. */
#include "fuzz.h"
#include "husk/virtio_regs.h"
#include "devices/virtq.h"

#define RAM (64u << 10)

struct hdr {
	uint16_t num;
	uint8_t rounds;    /* 1 + rounds % 4 */
	uint8_t step;      /* the driver adds this to avail->idx between rounds */
	uint32_t push_len; /* bytes the device says it wrote */
	uint64_t desc, avail, used;
};

static struct guest_mem mem;

static void check_chain(const struct virtq *q, const struct virtq_chain *c)
{
	CHECK(c->head < q->num, "head %u of %u", c->head, q->num);
	CHECK(c->n >= 1 && c->n <= q->num, "%d segments in a queue of %u", c->n, q->num);
	uint64_t total = 0;
	int seen_w = 0;
	for (int i = 0; i < c->n; i++) {
		const struct virtq_seg *s = &c->seg[i];
		CHECK(in_guest(&mem, s->ptr, s->len), "segment %d [%p, +%u) is outside guest memory %p+%#x", i,
		      (void *)s->ptr, s->len, (void *)mem.host, RAM);
		CHECK(!seen_w || s->writable, "readable segment %d after a writable one", i);
		seen_w |= s->writable;
		total += s->len;
	}
	CHECK(total == c->total, "total %llu, segments add up to %llu", (unsigned long long)c->total,
	      (unsigned long long)total);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hdr h;
	if (size < sizeof h)
		return 0;
	if (!mem.host)
		heap_guest_mem(&mem, RAM);
	memcpy(&h, data, sizeof h);
	data += sizeof h, size -= sizeof h;
	memset(mem.host, 0, RAM);
	memcpy(mem.host, data, size < RAM ? size : RAM);

	struct virtq q = { .num = h.num, .desc_gpa = h.desc, .avail_gpa = h.avail, .used_gpa = h.used };
	const char *err = NULL;
	static struct virtq_chain c;
	if (virtq_enable(&q, &mem, &err)) {
		CHECK(err && !q.ready, "refused without a reason");
		CHECK(virtq_begin(&q, &err) == -1, "begin on a queue that is not ready");
		CHECK(virtq_pop(&q, &mem, &c, &err) == -1, "pop on a queue that is not ready");
		return 0;
	}
	CHECK(q.ready && q.num && q.num <= VIRTQ_MAX_SIZE && !(q.num & (q.num - 1)), "enabled with num %u", q.num);
	CHECK(q.desc_gpa <= RAM && 16ull * q.num <= RAM - q.desc_gpa, "descriptor table outside RAM");
	CHECK(q.avail_gpa <= RAM && 6 + 2ull * q.num <= RAM - q.avail_gpa, "available ring outside RAM");
	CHECK(q.used_gpa <= RAM && 6 + 8ull * q.num <= RAM - q.used_gpa, "used ring outside RAM");
	CHECK(q.desc == mem.host + q.desc_gpa && q.avail == mem.host + q.avail_gpa && q.used == mem.host + q.used_gpa,
	      "ring pointers do not match the ring addresses");

	for (int round = 0; round < 1 + h.rounds % 4; round++) {
		if (round) {
			uint8_t *idx = q.avail + 2; /* the driver's avail.idx, in RAM: checked above */
			uint16_t v = rd16(idx) + h.step;
			memcpy(idx, &v, 2);
		}
		err = NULL;
		int pending = virtq_begin(&q, &err);
		if (pending < 0) {
			CHECK(err, "begin failed without a reason");
			return 0; /* the VMM stops the run here */
		}
		CHECK(pending <= q.num, "%d chains pending in a queue of %u", pending, q.num);
		for (int k = 0;; k++) {
			err = NULL;
			int r = virtq_pop(&q, &mem, &c, &err);
			if (r < 0) {
				CHECK(err, "pop failed without a reason");
				return 0;
			}
			CHECK(r == (k < pending), "pop %d of %d pending returned %d", k, pending, r);
			if (!r)
				break;
			check_chain(&q, &c);
			for (int i = 0; i < c.n; i++)
				if (c.seg[i].writable)
					memset(c.seg[i].ptr, 0x5a ^ i, c.seg[i].len);
			CHECK(virtq_push(&q, c.head, h.push_len, &err) == 0, "push failed: %s", err);
			CHECK(rd16(mem.host + q.used_gpa + 2) == q.next_used, "used->idx %u, next_used %u",
			      rd16(mem.host + q.used_gpa + 2), q.next_used);
		}
	}
	return 0;
}
