/* expected: 150 nested directories in /workdir: the write-back stops at its 128-level cap, husk exits 123 ("nested deeper than 128 levels"); the first 128 levels come back */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	int depth = 0;
	while (depth < 150 && mkdir("d", 0755) == 0 && chdir("d") == 0)
		depth++;
	int fd = open("bottom", O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		write(fd, "deep\n", 5);
		close(fd);
	}
	printf("depth %d\n", depth);
	return 0;
}
