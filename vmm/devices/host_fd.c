/* SPDX-License-Identifier: GPL-2.0-only */
#include <sys/select.h>
#include "devices/host_fd.h"

unsigned host_fds_wait(const int *fds, int n, int writing, int64_t ms)
{
	fd_set set;
	int top = -1;
	FD_ZERO(&set);
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0) {
			FD_SET(fds[i], &set);
			top = fds[i] > top ? fds[i] : top;
		}
	struct timespec t = { ms / 1000, ms % 1000 * 1000000 };
	if (pselect(top + 1, writing ? 0 : &set, writing ? &set : 0, 0, ms < 0 ? 0 : &t, 0) <= 0)
		return 0;
	unsigned ready = 0;
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0 && FD_ISSET(fds[i], &set))
			ready |= 1u << i;
	return ready;
}

int host_fd_wait(int fd, int writing, int64_t ms)
{
	return host_fds_wait(&fd, 1, writing, ms) != 0;
}
