/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-mmio driver core (virtio 1.x, 3.1.1 driver initialization). */
#include <errno.h>
#include "arch/cpu.h"
#include "kernel.h"
#include "dev/virtio.h"
#include "mm/pmem.h"

static void w(struct virtio_dev *d, unsigned reg, uint32_t v) { mmio_write32(d->mmio + reg, v); }
static uint32_t r(struct virtio_dev *d, unsigned reg) { return mmio_read32(d->mmio + reg); }

int virtio_init(struct virtio_dev *d, struct virtq *qs, int nqueues, uint32_t want)
{
	uint32_t st = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
	w(d, VIRTIO_MMIO_STATUS, 0);
	w(d, VIRTIO_MMIO_STATUS, st);
	w(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	if (!(r(d, VIRTIO_MMIO_DEVICE_FEATURES) & 1u << (VIRTIO_F_VERSION_1 - 32)))
		return -ENODEV; /* not a virtio 1.x device */
	/* Driver features start at 0 after reset: write only what we take.  Each
	 * register access is an exit, so feature bits 0-31 are read only when
	 * the driver wants any. */
	if (want) {
		w(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
		w(d, VIRTIO_MMIO_DRIVER_FEATURES, want & r(d, VIRTIO_MMIO_DEVICE_FEATURES));
	}
	w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	w(d, VIRTIO_MMIO_DRIVER_FEATURES, 1u << (VIRTIO_F_VERSION_1 - 32));
	st |= VIRTIO_STATUS_FEATURES_OK;
	w(d, VIRTIO_MMIO_STATUS, st);
	if (!(r(d, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK))
		return -ENODEV;
	for (int i = 0; i < nqueues; i++) {
		struct virtq *q = &qs[i];
		w(d, VIRTIO_MMIO_QUEUE_SEL, q->index);
		if (r(d, VIRTIO_MMIO_QUEUE_NUM_MAX) < VQ_SIZE)
			return -ENODEV;
		w(d, VIRTIO_MMIO_QUEUE_NUM, VQ_SIZE);
		/* All of RAM is below 4 GiB, and the high halves reset to 0. */
		w(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)virt_to_phys(q->desc));
		w(d, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)virt_to_phys(&q->avail));
		w(d, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)virt_to_phys(&q->used));
		w(d, VIRTIO_MMIO_QUEUE_READY, 1);
	}
	w(d, VIRTIO_MMIO_STATUS, st | VIRTIO_STATUS_DRIVER_OK);
	d->ready = 1;
	return 0;
}

/* The physically contiguous piece of [p, p+len) that starts at p. */
static uint32_t piece(const char *p, uint32_t len, uint64_t *pa)
{
	*pa = virt_to_phys(p);
	uint32_t k = 0;
	while (k < len) {
		uint32_t in_page = PAGE_SIZE - (uint32_t)(((uintptr_t)p + k) & (PAGE_SIZE - 1));
		if (k && virt_to_phys(p + k) != *pa + k)
			break;
		k += in_page < len - k ? in_page : len - k;
	}
	return k;
}

size_t virtq_span(const void *p, size_t len, int pieces)
{
	size_t done = 0;
	uint64_t pa;
	while (done < len && pieces-- > 0) {
		size_t left = len - done;
		done += piece((const char *)p + done, left > UINT32_MAX ? UINT32_MAX : (uint32_t)left, &pa);
	}
	return done;
}

void virtq_post(struct virtio_dev *d, struct virtq *q, const struct vbuf *b, int n)
{
	int used = 0;
	for (int i = 0; i < n; i++) {
		const char *p = b[i].addr;
		uint32_t left = b[i].len;
		do {
			if (used == VQ_SIZE)
				panic("a virtio request needs more than %d descriptors", VQ_SIZE);
			uint64_t pa;
			uint32_t k = left ? piece(p, left, &pa) : (pa = virt_to_phys(p), 0);
			struct virtq_desc *e = &q->desc[used];
			e->addr = pa;
			e->len = k;
			e->flags = VIRTQ_DESC_F_NEXT | (b[i].device_writes ? VIRTQ_DESC_F_WRITE : 0);
			e->next = (uint16_t)(used + 1);
			used++;
			p += k, left -= k;
		} while (left);
	}
	q->desc[used - 1].flags &= (uint16_t)~VIRTQ_DESC_F_NEXT;
	q->desc[used - 1].next = 0;
	q->avail.ring[q->avail.idx % VQ_SIZE] = 0;
	__asm__ volatile("" ::: "memory");
	q->avail.idx++;
	virtq_kick(d, q);
}

void virtq_kick(struct virtio_dev *d, struct virtq *q)
{
	mmio_write32(d->mmio + VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
	__asm__ volatile("" ::: "memory");
}

int virtq_done(struct virtq *q, uint32_t *len)
{
	uint16_t head;
	return virtq_take(q, &head, len);
}

uint32_t virtq_request(struct virtio_dev *d, struct virtq *q, const struct vbuf *b, int n)
{
	uint32_t len;
	virtq_post(d, q, b, n);
	if (!virtq_done(q, &len))
		panic("virtio device at %lx did not complete a request", (unsigned long)d->mmio);
	return len;
}

void virtq_give(struct virtq *q, uint16_t desc, void *buf, uint32_t len)
{
	struct virtq_desc *e = &q->desc[desc];
	e->addr = virt_to_phys(buf);
	e->len = len;
	e->flags = VIRTQ_DESC_F_WRITE;
	e->next = 0;
	q->avail.ring[q->avail.idx % VQ_SIZE] = desc;
	__asm__ volatile("" ::: "memory");
	q->avail.idx++;
}

int virtq_take(struct virtq *q, uint16_t *head, uint32_t *len)
{
	if (*(volatile uint16_t *)&q->used.idx == q->used_seen)
		return 0;
	__asm__ volatile("" ::: "memory");
	*head = (uint16_t)q->used.ring[q->used_seen % VQ_SIZE].id;
	*len = q->used.ring[q->used_seen % VQ_SIZE].len;
	q->used_seen++;
	return 1;
}
