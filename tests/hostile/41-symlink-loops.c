/* expected: symlink loops (a<->b, self, a looping directory, a chain of 100) fail with ELOOP, a chain of 31 opens; they come back as symlinks; exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	symlink("b", "a");
	symlink("a", "b");
	symlink("self", "self");
	symlink("loopdir/loopdir/loopdir", "loopdir");
	int fd = open("end", O_WRONLY | O_CREAT, 0644);
	close(fd);
	char prev[16] = "end", name[16];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof name, "c%03d", i);
		symlink(prev, name);
		strcpy(prev, name);
	}
	static const char *tries[] = { "a", "self", "loopdir/x", "c099", "c030", 0 };
	for (int i = 0; tries[i]; i++) {
		errno = 0;
		fd = open(tries[i], O_RDONLY);
		printf("%s: %s\n", tries[i], fd >= 0 ? "opened" : errno == ELOOP ? "ELOOP" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
