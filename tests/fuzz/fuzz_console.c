/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/virtio_mmio.c and vmm/virtio_console.c driven by a byte program
 * (mmio_prog.h).  Flags byte: bit 0, the console reads /dev/zero (else it
 * has no input, as stdout and stderr); bit 1, an output limit of
 * (flags >> 3) * 64 bytes; bit 2, output goes to a pipe nobody reads
 * (EPIPE: the reader went away), else to /dev/null.  Under a limit, no
 * more than the limit comes out, and the run is stopped for output only
 * once the limit is full. */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include "mmio_prog.h"
#include "sandbox/stop.h"
#include "devices/virtio_console.h"

static struct console con;
static struct output_limit limit;
static int null_fd = -1, zero_fd = -1, broken_fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!mem.host) {
		heap_guest_mem(&mem, RAM);
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		int p[2];
		CHECK(null_fd >= 0 && zero_fd >= 0 && pipe2(p, O_CLOEXEC) == 0, "cannot open /dev/null, /dev/zero, a pipe");
		close(p[0]);
		broken_fd = p[1];
		signal(SIGPIPE, SIG_IGN); /* as husk: EPIPE instead */
	}
	uint8_t flags = size ? data[0] : 0;
	stop_reset(); /* a new run */
	console_init(&con, 0xd0000000ull, &mem, flags & 1 ? zero_fd : -1, flags & 4 ? broken_fd : null_fd);
	if (flags & 2) {
		/* cut already set: the one-line notice would go to stderr on every run */
		limit = (struct output_limit){ .limit = (uint64_t)(flags >> 3) * 64, .cut = 1 };
		con.limit = &limit;
	}
	mmio_run(&con.mmio, data, size);
	if (flags & 2) {
		CHECK(limit.used <= limit.limit && con.bytes_out <= limit.used, "output limit %llu, %llu bytes let through, %llu out",
		      (unsigned long long)limit.limit, (unsigned long long)limit.used, (unsigned long long)con.bytes_out);
		CHECK(stop_requested() != STOP_OUTPUT || limit.used == limit.limit,
		      "stopped for output with %llu bytes of %llu used", (unsigned long long)limit.used,
		      (unsigned long long)limit.limit);
	}
	return 0;
}
