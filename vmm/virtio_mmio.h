/* virtio-mmio transport, version 2 registers (virtio 1.x, 4.2.2).  A device
 * (console, ...) supplies its ID, features, config space and a notify
 * handler; requests are served synchronously inside the notify exit. */
#ifndef HUSK_VIRTIO_MMIO_H
#define HUSK_VIRTIO_MMIO_H
#include <stdint.h>
#include "guest_mem.h"
#include "virtq.h"

#define VIRTIO_MAX_QUEUES 2

struct virtio_mmio;

struct virtio_device_ops {
	/* Serve queue q.  Returns 0, or -1 with *err set (the run ends). */
	int (*notify)(struct virtio_mmio *d, int q, const char **err);
};

struct virtio_mmio {
	uint64_t base;
	uint32_t device_id;
	uint64_t features;
	const uint8_t *config;
	uint32_t config_len;
	const struct virtio_device_ops *ops;
	void *priv;
	const struct guest_mem *mem;
	int nqueues;
	/* transport state */
	uint32_t status, features_sel, driver_features_sel, queue_sel;
	uint64_t driver_features;
	struct virtq q[VIRTIO_MAX_QUEUES];
};

void virtio_mmio_reset(struct virtio_mmio *d);
/* An MMIO exit at offset off of the device's window.  Returns 0, or -1 with
 * *err when the guest broke the protocol. */
int virtio_mmio_access(struct virtio_mmio *d, uint64_t off, uint8_t *data, uint32_t len, int is_write,
		       const char **err);
#endif
