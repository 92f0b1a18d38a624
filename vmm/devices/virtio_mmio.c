/* SPDX-License-Identifier: GPL-2.0-only */
#include <string.h>
#include "husk/virtio_regs.h"
#include "sandbox/stop.h"
#include "devices/virtio_mmio.h"

void virtio_mmio_init(struct virtio_mmio *d, uint64_t base, const struct guest_mem *m,
		      const struct virtio_device *dev)
{
	d->base = base;
	d->device_id = dev->id;
	d->features = dev->features | 1ull << VIRTIO_F_VERSION_1; /* the only version served */
	d->config = dev->config;
	d->config_len = dev->config_len;
	d->ops = dev->ops;
	d->priv = dev->priv;
	d->mem = m;
	d->nqueues = dev->nqueues;
	virtio_mmio_reset(d);
}

int virtio_mmio_serve(struct virtio_mmio *d, int qi, virtio_serve_fn *serve, const char **err)
{
	struct virtq *q = &d->q[qi];
	/* What was pending at the notify, and nothing after a stop request. */
	int r = virtq_begin(q, err);
	while (r > 0 && !stop_now() && (r = virtq_pop(q, d->mem, &d->chain, err)) == 1) {
		long n = serve(d->priv, &d->chain, err);
		if (n < 0 || virtq_push(q, d->chain.head, (uint32_t)n, err))
			return -1;
	}
	return r < 0 ? -1 : 0;
}

void virtio_mmio_reset(struct virtio_mmio *d)
{
	d->status = d->features_sel = d->driver_features_sel = d->queue_sel = 0;
	d->driver_features = 0;
	memset(d->q, 0, sizeof d->q);
}

void virtio_mmio_save(const struct virtio_mmio *d, struct virtio_mmio_state *s)
{
	*s = (struct virtio_mmio_state){ .device_id = d->device_id, .status = d->status,
					 .features_sel = d->features_sel, .driver_features_sel = d->driver_features_sel,
					 .queue_sel = d->queue_sel, .nqueues = (uint32_t)d->nqueues,
					 .driver_features = d->driver_features };
	for (int i = 0; i < d->nqueues; i++) {
		const struct virtq *q = &d->q[i];
		s->q[i].desc = q->desc_gpa, s->q[i].avail = q->avail_gpa, s->q[i].used = q->used_gpa;
		s->q[i].num = q->num, s->q[i].ready = (uint16_t)q->ready;
		s->q[i].last_avail = q->last_avail, s->q[i].next_used = q->next_used;
	}
}

int virtio_mmio_restore(struct virtio_mmio *d, const struct virtio_mmio_state *s, const char **err)
{
	*err = NULL;
	if (s->device_id != d->device_id || s->nqueues != (uint32_t)d->nqueues)
		return *err = "virtio: the saved state is another device's", -1;
	if ((s->driver_features & ~d->features) || s->status > 0xff)
		return *err = "virtio: the saved state has features or a status the device has not", -1;
	virtio_mmio_reset(d);
	d->status = s->status, d->features_sel = s->features_sel, d->driver_features_sel = s->driver_features_sel;
	d->queue_sel = s->queue_sel, d->driver_features = s->driver_features;
	for (int i = 0; i < d->nqueues; i++) {
		struct virtq *q = &d->q[i];
		q->desc_gpa = s->q[i].desc, q->avail_gpa = s->q[i].avail, q->used_gpa = s->q[i].used;
		q->num = s->q[i].num;
		if (s->q[i].ready > 1 || (s->q[i].ready && virtq_enable(q, d->mem, err)))
			return *err = *err ? *err : "virtio: bad saved queue state", -1;
		q->last_avail = q->avail_end = s->q[i].last_avail;
		q->next_used = s->q[i].next_used;
	}
	return 0;
}

static uint32_t reg_read(struct virtio_mmio *d, uint64_t off)
{
	struct virtq *q = d->queue_sel < (uint32_t)d->nqueues ? &d->q[d->queue_sel] : NULL;
	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE: return VIRTIO_MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION: return 2;
	case VIRTIO_MMIO_DEVICE_ID: return d->device_id;
	case VIRTIO_MMIO_VENDOR_ID: return 0x6b737568; /* "husk" */
	case VIRTIO_MMIO_DEVICE_FEATURES:
		return d->features_sel < 2 ? (uint32_t)(d->features >> (32 * d->features_sel)) : 0;
	case VIRTIO_MMIO_QUEUE_NUM_MAX: return q ? VIRTQ_MAX_SIZE : 0;
	case VIRTIO_MMIO_QUEUE_READY: return q ? (uint32_t)q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS: return 0; /* requests complete synchronously */
	case VIRTIO_MMIO_STATUS: return d->status;
	case VIRTIO_MMIO_CONFIG_GENERATION: return 0;
	}
	return 0;
}

static void set_half(uint64_t *v, int high, uint32_t x)
{
	*v = high ? (*v & 0xffffffffull) | (uint64_t)x << 32 : (*v & ~0xffffffffull) | x;
}

static int reg_write(struct virtio_mmio *d, uint64_t off, uint32_t v, const char **err)
{
	struct virtq *q = d->queue_sel < (uint32_t)d->nqueues ? &d->q[d->queue_sel] : NULL;
	int queue_reg = off == VIRTIO_MMIO_QUEUE_NUM || off == VIRTIO_MMIO_QUEUE_READY ||
			(off >= VIRTIO_MMIO_QUEUE_DESC_LOW && off <= VIRTIO_MMIO_QUEUE_DEVICE_HIGH);
	if (queue_reg && !q)
		return *err = "virtio: queue register written for a queue that does not exist", -1;
	if (queue_reg && q->ready && off != VIRTIO_MMIO_QUEUE_READY)
		return *err = "virtio: queue changed while enabled", -1;
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL: d->features_sel = v; return 0;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL: d->driver_features_sel = v; return 0;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (d->driver_features_sel < 2)
			set_half(&d->driver_features, d->driver_features_sel, v);
		return 0;
	case VIRTIO_MMIO_QUEUE_SEL: d->queue_sel = v; return 0;
	case VIRTIO_MMIO_QUEUE_NUM:
		if (v > VIRTQ_MAX_SIZE)
			return *err = "virtio: queue size above the maximum", -1;
		q->num = (uint16_t)v;
		return 0;
	case VIRTIO_MMIO_QUEUE_READY:
		if (!v) {
			q->ready = 0;
			return 0;
		}
		return q->ready ? 0 : virtq_enable(q, d->mem, err); /* enabling twice keeps the ring state */
	case VIRTIO_MMIO_QUEUE_DESC_LOW: set_half(&q->desc_gpa, 0, v); return 0;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH: set_half(&q->desc_gpa, 1, v); return 0;
	case VIRTIO_MMIO_QUEUE_DRIVER_LOW: set_half(&q->avail_gpa, 0, v); return 0;
	case VIRTIO_MMIO_QUEUE_DRIVER_HIGH: set_half(&q->avail_gpa, 1, v); return 0;
	case VIRTIO_MMIO_QUEUE_DEVICE_LOW: set_half(&q->used_gpa, 0, v); return 0;
	case VIRTIO_MMIO_QUEUE_DEVICE_HIGH: set_half(&q->used_gpa, 1, v); return 0;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		if (v >= (uint32_t)d->nqueues)
			return *err = "virtio: notify for a queue that does not exist", -1;
		if (!(d->status & VIRTIO_STATUS_DRIVER_OK))
			return *err = "virtio: notify before the driver is ready", -1;
		return d->ops->notify(d, (int)v, err);
	case VIRTIO_MMIO_INTERRUPT_ACK: return 0;
	case VIRTIO_MMIO_STATUS:
		if (v == 0) {
			virtio_mmio_reset(d);
			return 0;
		}
		if ((v & VIRTIO_STATUS_FEATURES_OK) && !(d->status & VIRTIO_STATUS_FEATURES_OK) &&
		    ((d->driver_features & ~d->features) ||
		     !(d->driver_features & 1ull << VIRTIO_F_VERSION_1)))
			v &= ~VIRTIO_STATUS_FEATURES_OK; /* refused: the driver reads it back */
		d->status = v;
		return 0;
	}
	return *err = "virtio: write to a read-only or unknown register", -1;
}

int virtio_mmio_access(struct virtio_mmio *d, uint64_t off, uint8_t *data, uint32_t len, int is_write,
		       const char **err)
{
	if (off >= VIRTIO_MMIO_CONFIG) {
		uint64_t c = off - VIRTIO_MMIO_CONFIG;
		if (!len || len > 8 || c > d->config_len || len > d->config_len - c)
			return *err = "virtio: access outside the device's config space", -1;
		if (is_write)
			return 0; /* config space is read-only */
		memcpy(data, d->config + c, len);
		return 0;
	}
	if (len != 4 || (off & 3))
		return *err = "virtio: register access that is not 32-bit and aligned", -1;
	if (!is_write) {
		uint32_t v = reg_read(d, off);
		memcpy(data, &v, 4);
		return 0;
	}
	uint32_t v;
	memcpy(&v, data, 4);
	return reg_write(d, off, v, err);
}
