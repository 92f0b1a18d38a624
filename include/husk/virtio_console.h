/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-console (virtio 1.x, 5.3) as husk uses it: one port per device,
 * no feature bits beyond VERSION_1. */
#ifndef HUSK_VIRTIO_CONSOLE_ABI_H
#define HUSK_VIRTIO_CONSOLE_ABI_H
#include <stdint.h>

/* Port 0's queues (5.3.2). */
#define VIRTIO_CONSOLE_RECEIVEQ  0
#define VIRTIO_CONSOLE_TRANSMITQ 1

/* The device configuration (5.3.4); husk offers none of the features that
 * give its fields meaning, so it reads as zeros. */
struct virtio_console_config {
	uint16_t cols, rows;
	uint32_t max_nr_ports;
	uint32_t emerg_wr;
};

_Static_assert(sizeof(struct virtio_console_config) == 12, "virtio-console config is 12 bytes");
#endif
