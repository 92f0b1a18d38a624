#include <string.h>
#include "husk/virtio_regs.h"
#include "virtq.h"

struct desc { uint64_t addr; uint32_t len; uint16_t flags, next; };

static uint64_t avail_size(uint16_t num) { return 4 + 2ull * num + 2; }
static uint64_t used_size(uint16_t num) { return 4 + 8ull * num + 2; }

int virtq_enable(struct virtq *q, const struct guest_mem *m, const char **err)
{
	if (!q->num || q->num > VIRTQ_MAX_SIZE || (q->num & (q->num - 1)))
		return *err = "virtqueue size is not a power of two up to 256", -1;
	if ((q->desc & 15) || (q->avail & 1) || (q->used & 3))
		return *err = "virtqueue rings are misaligned", -1;
	if (!gpa_ptr(m, q->desc, 16ull * q->num) || !gpa_ptr(m, q->avail, avail_size(q->num)) ||
	    !gpa_ptr(m, q->used, used_size(q->num)))
		return *err = "virtqueue rings lie outside guest RAM", -1;
	q->ready = 1;
	q->last_avail = q->avail_end = q->next_used = 0;
	return 0;
}

static uint16_t load16(const struct guest_mem *m, uint64_t gpa)
{
	uint16_t v;
	memcpy(&v, gpa_ptr(m, gpa, 2), 2); /* in range: checked by virtq_enable */
	return v;
}

int virtq_begin(struct virtq *q, const struct guest_mem *m, const char **err)
{
	if (!q->ready)
		return *err = "notify on a virtqueue that is not ready", -1;
	uint16_t avail_idx = load16(m, q->avail + 2);
	uint16_t pending = (uint16_t)(avail_idx - q->last_avail);
	if (pending > q->num)
		return *err = "virtqueue available index ran ahead of the ring", -1;
	q->avail_end = avail_idx;
	return pending;
}

int virtq_pop(struct virtq *q, const struct guest_mem *m, struct virtq_chain *c, const char **err)
{
	if (!q->ready)
		return *err = "notify on a virtqueue that is not ready", -1;
	if (q->last_avail == q->avail_end)
		return 0;
	uint16_t head = load16(m, q->avail + 4 + 2ull * (q->last_avail % q->num));
	if (head >= q->num)
		return *err = "virtqueue head index out of range", -1;
	c->head = head;
	c->n = 0;
	c->total = 0;
	uint16_t i = head;
	int seen_writable = 0;
	for (;;) {
		if (c->n == q->num)
			return *err = "virtqueue descriptor chain loops", -1;
		struct desc d;
		memcpy(&d, gpa_ptr(m, q->desc + 16ull * i, 16), 16);
		if (d.flags & VIRTQ_DESC_F_INDIRECT)
			return *err = "indirect descriptor (not negotiated)", -1;
		uint8_t *p = gpa_ptr(m, d.addr, d.len);
		if (!p)
			return *err = "virtqueue buffer lies outside guest RAM", -1;
		int w = !!(d.flags & VIRTQ_DESC_F_WRITE);
		if (seen_writable && !w)
			return *err = "device-readable buffer after a device-writable one", -1;
		seen_writable |= w;
		c->seg[c->n++] = (struct virtq_seg){ p, d.len, w };
		c->total += d.len;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		if (d.next >= q->num)
			return *err = "virtqueue next index out of range", -1;
		i = d.next;
	}
	q->last_avail++;
	return 1;
}

int virtq_push(struct virtq *q, const struct guest_mem *m, uint16_t head, uint32_t len, const char **err)
{
	if (!q->ready)
		return *err = "virtqueue is not ready", -1;
	uint32_t elem[2] = { head, len };
	memcpy(gpa_ptr(m, q->used + 4 + 8ull * (q->next_used % q->num), 8), elem, 8);
	q->next_used++;
	memcpy(gpa_ptr(m, q->used + 2, 2), &q->next_used, 2);
	return 0;
}
