/* SPDX-License-Identifier: GPL-2.0-only */
/* hostile_workdir [NFILES]: fills /workdir with what an attacker would leave
 * for the host to extract: symlinks to host paths, names that try to climb
 * out, a symlinked directory to write through, a fifo, and many files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		write(fd, data, strlen(data));
		close(fd);
	}
}

int main(int argc, char **argv)
{
	int nfiles = argc > 1 ? atoi(argv[1]) : 1000;
	symlink("/etc/passwd", "passwd-link");
	symlink("/", "rootlink");
	symlink("../../../../../../tmp", "escape");
	mkdir("escape2", 0755);
	file("escape2/..%2f..%2fowned", "x");
	file("..data", "not a parent");
	symlink("/tmp/husk-hostile-target", "target"); /* a file written later "through" it */
	mkfifo("fifo", 0644);
	mkdir("many", 0755);
	char name[64];
	for (int i = 0; i < nfiles; i++) {
		snprintf(name, sizeof name, "many/f%06d", i);
		file(name, "payload");
	}
	printf("left %d files\n", nfiles);
	return 0;
}
