/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-console (virtio 1.x, 5.3), one port: receiveq is fed from a host
 * fd, transmitq is written to a host fd.  husk attaches three, one per
 * standard fd, so the program's stdout and stderr stay apart on the host. */
#ifndef HUSK_VIRTIO_CONSOLE_H
#define HUSK_VIRTIO_CONSOLE_H
#include <stdint.h>
#include "husk/virtio_console.h"
#include "devices/virtio_mmio.h"

/* stdout and stderr together: output up to the limit is written; a write
 * past it ends the run (stop request STOP_OUTPUT). */
struct output_limit {
	uint64_t limit, used;
	int cut;            /* the limit was reached (the marker is on stderr) */
};

struct console {
	struct output_limit *limit; /* shared by the output consoles; may be NULL */
	struct virtio_mmio mmio;
	int in_fd, out_fd;  /* host fds; in_fd < 0: no input (always EOF), out_fd < 0: none */
	uint64_t bytes_out;
	int out_closed;     /* the host side of out_fd went away (EPIPE) */
	int rx_held;        /* a receive buffer waits for input (rx) */
	struct virtq_chain rx;
	struct virtio_console_config config;
};

void console_init(struct console *c, uint64_t base, const struct guest_mem *m, int in_fd, int out_fd);
/* A receive buffer the guest posted is held (rx_held) until input comes,
 * never waited for inside its notify: the guest's other threads go on
 * running.  While the guest sleeps its host thread waits for in_fd, then
 * fills the buffer if input (or its end) is there.  0, or -1 with *err. */
int console_input(struct console *c, const char **err);
/* The console's transport state for a snapshot: a receive buffer held for
 * input goes back to the queue (popped again after a restore). */
void console_save(const struct console *c, struct virtio_mmio_state *s);
#endif
