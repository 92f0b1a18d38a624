/* SPDX-License-Identifier: GPL-2.0-only */
/* fill_disk: writes 1 MiB blocks to /workdir/fill until the disk is full;
 * prints the errno that stopped it and how many bytes were written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	static char block[1 << 20];
	memset(block, 'z', sizeof block);
	int fd = open("/workdir/fill", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("open");
		return 2;
	}
	long long total = 0;
	for (;;) {
		ssize_t k = write(fd, block, sizeof block);
		if (k < 0) {
			printf("%s after %lld bytes\n", errno == ENOSPC ? "ENOSPC" : strerror(errno), total);
			return close(fd) == 0 ? 0 : 3;
		}
		total += k;
	}
}
