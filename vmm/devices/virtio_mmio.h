/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-mmio transport, version 2 registers (virtio 1.x, 4.2.2).  A device
 * (console, ...) supplies its ID, features, config space and a notify
 * handler; requests are served synchronously inside the notify exit.  The
 * transport owns what every device would otherwise repeat (kvmtool's
 * shape): the set-up of its fields, the pop -> serve -> push loop, and the
 * buffer a popped chain is described in. */
#ifndef HUSK_VIRTIO_MMIO_H
#define HUSK_VIRTIO_MMIO_H
#include <stdint.h>
#include "guest_mem.h"
#include "devices/virtq.h"

#define VIRTIO_MAX_QUEUES 2

struct virtio_mmio;

struct virtio_device_ops {
	/* Serve queue q.  Returns 0, or -1 with *err set (the run ends). */
	int (*notify)(struct virtio_mmio *d, int q, const char **err);
};

/* What a device tells the transport at set-up. */
struct virtio_device {
	uint32_t id;                 /* VIRTIO_ID_* */
	int nqueues;                 /* at most VIRTIO_MAX_QUEUES */
	uint64_t features;           /* offered; VIRTIO_F_VERSION_1 is added */
	const void *config;          /* config space, read-only to the driver */
	uint32_t config_len;
	const struct virtio_device_ops *ops;
	void *priv;                  /* the device, for its handlers */
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
	/* The chain being served.  One per device, not on the stack: it holds
	 * VIRTQ_MAX_SIZE segments (4 KiB), and a notify serves one at a time. */
	struct virtq_chain chain;
};

/* A transport's state as a snapshot keeps it: plain data, the rings by
 * their guest addresses. */
struct virtio_mmio_state {
	uint32_t device_id, status, features_sel, driver_features_sel, queue_sel, nqueues;
	uint64_t driver_features;
	struct {
		uint64_t desc, avail, used;
		uint16_t num, last_avail, next_used, ready;
	} q[VIRTIO_MAX_QUEUES];
};

/* Sets the transport's fields for the device at base and resets it. */
void virtio_mmio_init(struct virtio_mmio *d, uint64_t base, const struct guest_mem *m,
		      const struct virtio_device *dev);
void virtio_mmio_reset(struct virtio_mmio *d);
void virtio_mmio_save(const struct virtio_mmio *d, struct virtio_mmio_state *s);
/* On a device set up as the saved one was (virtio_mmio_init), guest memory
 * restored: the rings are checked again as when the driver enabled them.
 * 0, or -1 with *err (the saved state is not this device's, or bad). */
int virtio_mmio_restore(struct virtio_mmio *d, const struct virtio_mmio_state *s, const char **err);
/* Serves one chain: the bytes written into it, or -1 with *err (the run
 * ends: the chain is malformed). */
typedef long virtio_serve_fn(void *priv, struct virtq_chain *c, const char **err);
/* At a notify of queue qi: pops, serves and pushes back the chains that were
 * pending when it came (virtq_begin), and no more after a stop request.
 * Returns 0, or -1 with *err. */
int virtio_mmio_serve(struct virtio_mmio *d, int qi, virtio_serve_fn *serve, const char **err);
/* An MMIO exit at offset off of the device's window.  Returns 0, or -1 with
 * *err when the guest broke the protocol. */
int virtio_mmio_access(struct virtio_mmio *d, uint64_t off, uint8_t *data, uint32_t len, int is_write,
		       const char **err);
#endif
