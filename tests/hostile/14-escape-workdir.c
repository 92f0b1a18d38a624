/* expected: names climbing out of /workdir fail in the guest (ENOENT/EROFS); symlinks to /etc/passwd, ../../.. and a host path come back as symlinks; nothing is written outside the workdir on the host; exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

/* what: the attempt; r: its result; must_fail: 1 if it has to fail */
static void attempt(const char *what, int r, int must_fail)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
	if (must_fail && r >= 0)
		failures++;
}

int main(int argc, char **argv)
{
	const char *tok = argc > 1 ? argv[1] : "husk-hostile";
	char path[256];
	int fd;

	/* climbing names: from /workdir they land in the guest's read-only / */
	attempt("create ../escape-file", open("../escape-file", O_WRONLY | O_CREAT, 0644), 1);
	attempt("mkdir ../escape-dir", mkdir("../escape-dir", 0755), 1);
	attempt("symlink ../escape-link", symlink("/etc/passwd", "../escape-link"), 1);
	fd = open("inside", O_WRONLY | O_CREAT, 0644);
	close(fd);
	attempt("rename inside ../moved", rename("inside", "../moved"), 1);
	attempt("link inside ../linked", link("inside", "../linked"), 1);
	attempt("create /escape-root", open("/escape-root", O_WRONLY | O_CREAT, 0644), 1);

	/* symlinks left for the host's extraction to follow */
	attempt("symlink passwd-link -> /etc/passwd", symlink("/etc/passwd", "passwd-link"), 0);
	attempt("symlink up -> ../../..", symlink("../../..", "up"), 0);
	snprintf(path, sizeof path, "../../../../../../tmp/%s", tok);
	attempt("symlink target -> /tmp/TOKEN", symlink(path, "target"), 0);
	attempt("write through passwd-link", open("passwd-link", O_WRONLY | O_APPEND), 1);

	/* inside the guest these resolve to the guest's own RAM /tmp: harmless */
	snprintf(path, sizeof path, "up/tmp/%s-up", tok);
	attempt("create through up", fd = open(path, O_WRONLY | O_CREAT, 0644), 0);
	close(fd);
	attempt("create through target", fd = open("target", O_WRONLY | O_CREAT, 0644), 0);
	if (fd >= 0) {
		write(fd, "owned\n", 6);
		close(fd);
	}
	/* a directory whose name looks like an escape once decoded */
	mkdir("dir", 0755);
	attempt("create dir/..%2f..%2fowned", fd = open("dir/..%2f..%2fowned", O_WRONLY | O_CREAT, 0644), 0);
	close(fd);
	printf("%d climbing attempts succeeded\n", failures);
	return failures != 0;
}
