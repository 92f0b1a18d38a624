/* SPDX-License-Identifier: GPL-2.0-only */
#include <string.h>
#include "husk/virtio_ring.h"
#include "devices/virtq.h"

int virtq_enable(struct virtq *q, const struct guest_mem *m, const char **err)
{
	if (!q->num || q->num > VIRTQ_MAX_SIZE || (q->num & (q->num - 1)))
		return *err = "virtqueue size is not a power of two up to 256", -1;
	if ((q->desc_gpa % VIRTQ_DESC_ALIGN) || (q->avail_gpa % VIRTQ_AVAIL_ALIGN) ||
	    (q->used_gpa % VIRTQ_USED_ALIGN))
		return *err = "virtqueue rings are misaligned", -1;
	uint8_t *desc = gpa_ptr(m, q->desc_gpa, sizeof(struct virtq_desc) * (uint64_t)q->num);
	uint8_t *avail = gpa_ptr(m, q->avail_gpa, VIRTQ_AVAIL_SIZE(q->num));
	uint8_t *used = gpa_ptr(m, q->used_gpa, VIRTQ_USED_SIZE(q->num));
	if (!desc || !avail || !used)
		return *err = "virtqueue rings lie outside guest RAM", -1;
	/* The rings cannot move while the queue is ready (the transport refuses
	 * the writes), so the checked pointers stay good until it is not. */
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->ready = 1;
	q->last_avail = q->avail_end = q->next_used = 0;
	return 0;
}

/* Ring fields through memcpy: the guest chose the rings' alignment, and
 * the offsets are in range (virtq_enable checked the whole ring). */
static uint16_t load16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

int virtq_begin(struct virtq *q, const char **err)
{
	if (!q->ready)
		return *err = "notify on a virtqueue that is not ready", -1;
	uint16_t avail_idx = load16(q->avail + VIRTQ_AVAIL_IDX);
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
	uint16_t head = load16(q->avail + VIRTQ_AVAIL_ENTRY(q->last_avail % q->num));
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
		struct virtq_desc d;
		memcpy(&d, q->desc + sizeof d * i, sizeof d);
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

int virtq_push(struct virtq *q, uint16_t head, uint32_t len, const char **err)
{
	if (!q->ready)
		return *err = "virtqueue is not ready", -1;
	struct virtq_used_elem e = { head, len };
	memcpy(q->used + VIRTQ_USED_ENTRY(q->next_used % q->num), &e, sizeof e);
	q->next_used++;
	memcpy(q->used + VIRTQ_USED_IDX, &q->next_used, 2);
	return 0;
}
