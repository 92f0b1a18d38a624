/* expected: 100,000 files created in /workdir/many: "made 100000 files", exit 0; all of them come back to the host, nothing else */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	char name[32], data[16];
	int made = 0;
	if (mkdir("many", 0755) != 0) {
		perror("mkdir");
		return 1;
	}
	for (int i = 0; i < 100000; i++) {
		snprintf(name, sizeof name, "many/f%06d", i);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			perror(name);
			return 1;
		}
		int len = snprintf(data, sizeof data, "%d\n", i);
		if (write(fd, data, len) != len) {
			perror("write");
			return 1;
		}
		close(fd);
		made++;
	}
	printf("made %d files\n", made);
	return 0;
}
