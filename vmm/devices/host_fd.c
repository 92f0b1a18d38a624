/* SPDX-License-Identifier: GPL-2.0-only */
#include <sys/select.h>
#include "devices/host_fd.h"

int host_fd_wait(int fd, int writing, int64_t ms)
{
	fd_set set;
	FD_ZERO(&set);
	FD_SET(fd, &set);
	struct timespec t = { ms / 1000, ms % 1000 * 1000000 };
	return pselect(fd + 1, writing ? 0 : &set, writing ? &set : 0, 0, ms < 0 ? 0 : &t, 0) > 0;
}
