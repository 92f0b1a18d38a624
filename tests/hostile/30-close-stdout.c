/* expected: after close(1), write(1) returns -1 with EBADF: stderr says so, stdout is empty, exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	close(1);
	errno = 0;
	ssize_t r = write(1, "lost\n", 5);
	int e = errno;
	fprintf(stderr, "write to closed stdout: %zd %s\n", r, e == EBADF ? "EBADF" : strerror(e));
	errno = 0;
	r = write(1000, "x", 1);
	fprintf(stderr, "write to fd 1000: %zd %s\n", r, errno == EBADF ? "EBADF" : strerror(errno));
	return 0;
}
