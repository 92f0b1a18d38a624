/* expected: names with newlines, escapes, non-UTF-8 bytes, shell syntax and 255 bytes are created ("made 14") and come back byte for byte, but control characters, which become _; a 256-byte name is refused (ENAMETOOLONG); exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	static const char *names[] = {
		"new\nline", "tab\there", "esc\033[31mred", "\xff\xfe-not-utf8", " leading space", "-dash",
		"...", ".hidden", "*?[glob]", "back\\slash", "$(touch owned)", "`touch owned2`", "trailing ", 0,
	};
	char name[257];
	int made = 0;
	for (int i = 0; names[i]; i++) {
		int fd = open(names[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0) {
			write(fd, names[i], strlen(names[i]));
			close(fd);
			made++;
		}
	}
	memset(name, 'L', 255);
	name[255] = 0;
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd >= 0) {
		close(fd);
		made++;
	}
	name[255] = 'X';
	name[256] = 0;
	errno = 0;
	fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
	printf("made %d, 256-byte name: %s\n", made, fd < 0 && errno == ENAMETOOLONG ? "ENAMETOOLONG" : "created?");
	return 0;
}
