/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <unistd.h>
#include "full_io.h"

/* off < 0: at the file position. */
static int whole(int fd, char *p, size_t n, off_t off, int writing)
{
	while (n) {
		ssize_t k = off < 0 ? (writing ? write(fd, p, n) : read(fd, p, n))
				    : (writing ? pwrite(fd, p, n, off) : pread(fd, p, n, off));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = 0;
			return -1;
		}
		p += k, n -= (size_t)k;
		if (off >= 0)
			off += k;
	}
	return 0;
}

int full_read(int fd, void *p, size_t n)
{
	return whole(fd, p, n, -1, 0);
}

int full_write(int fd, const void *p, size_t n)
{
	return whole(fd, (char *)p, n, -1, 1);
}

int full_pread(int fd, void *p, size_t n, off_t off)
{
	return whole(fd, p, n, off, 0);
}

int full_pwrite(int fd, const void *p, size_t n, off_t off)
{
	return whole(fd, (char *)p, n, off, 1);
}

int full_skip(int fd, uint64_t n)
{
	static char sink[65536];
	while (n) {
		size_t k = n < sizeof sink ? n : sizeof sink;
		if (full_read(fd, sink, k))
			return -1;
		n -= k;
	}
	return 0;
}
