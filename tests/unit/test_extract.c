/* The workdir write-back (vmm/extract.c) on images made with mke2fs -d:
 * a round trip, host symlinks in the way, and corrupt images. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "extract.h"
#include "tap.h"

static char tmp[64];

/* A shell command with $T set to the scratch directory. */
static void sh(const char *cmd)
{
	if (system(cmd))
		printf("# command failed: %s\n", cmd);
}

static int extract(const char *image, const char *dir, char *err)
{
	struct extract_limits lim = { 1000, 1 << 30 };
	struct extract_stats st;
	char img[256], out[256];
	snprintf(img, sizeof img, "%s/%s", tmp, image);
	snprintf(out, sizeof out, "%s/%s", tmp, dir);
	mkdir(out, 0755);
	return workdir_extract(img, out, &lim, &st, err, 256);
}

static int file_is(const char *path, const char *content)
{
	char p[256], buf[256] = "";
	snprintf(p, sizeof p, "%s/%s", tmp, path);
	int fd = open(p, O_RDONLY | O_NOFOLLOW);
	ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	return k >= 0 && !strcmp(buf, content);
}

static int is_link(const char *path, const char *target)
{
	char p[256], buf[256];
	snprintf(p, sizeof p, "%s/%s", tmp, path);
	ssize_t k = readlink(p, buf, sizeof buf - 1);
	if (k < 0)
		return 0;
	buf[k] = 0;
	return !strcmp(buf, target);
}

int main(void)
{
	char err[256];
	strcpy(tmp, "/tmp/husk-extract-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	setenv("T", tmp, 1);
	sh("mkdir -p $T/src/d/e && printf one > $T/src/a && printf two > $T/src/d/e/b");
	sh("cd $T/src && ln -s /etc/passwd pw && ln -s ../../outside d/up");
	sh("mke2fs -q -t ext2 -F -d $T/src $T/good.img 4M");
	ok(extract("good.img", "out", err) == 0, "a valid image is written back (%s)", err);
	ok(file_is("out/a", "one") && file_is("out/d/e/b", "two"), "files arrive with their contents");
	ok(is_link("out/pw", "/etc/passwd") && is_link("out/d/up", "../../outside"), "symlinks arrive as symlinks");
	struct stat st;
	char p[256];
	snprintf(p, sizeof p, "%s/out/lost+found", tmp);
	ok(lstat(p, &st) < 0, "mke2fs's lost+found is not written back");

	/* A host symlink where the image has a directory or a file: replaced, not followed. */
	sh("mkdir -p $T/victim && mkdir -p $T/out2 && ln -s $T/victim $T/out2/d");
	sh("ln -s $T/victim/a $T/out2/a");
	ok(extract("good.img", "out2", err) == 0, "extraction over host symlinks (%s)", err);
	snprintf(p, sizeof p, "%s/victim", tmp);
	ok(rmdir(p) == 0, "nothing was written through the symlinks");
	ok(file_is("out2/a", "one") && file_is("out2/d/e/b", "two"), "the symlinks were replaced by the image's entries");

	/* Files the image does not have are removed from the directory. */
	sh("printf stale > $T/out/stale");
	ok(extract("good.img", "out", err) == 0 && !file_is("out/stale", "stale"), "entries deleted in the guest are removed");

	sh("head -c 4194304 /dev/urandom > $T/garbage.img");
	ok(extract("garbage.img", "out3", err) == -1 && *err, "a garbage image fails cleanly: %s", err);
	sh("head -c 70000 $T/good.img > $T/short.img");
	ok(extract("short.img", "out4", err) == -1 && *err, "a truncated image fails cleanly: %s", err);
	sh("cp $T/good.img $T/bad.img && printf '\\377\\377\\377\\377' | dd of=$T/bad.img bs=1 seek=1028 conv=notrunc 2>/dev/null");
	ok(extract("bad.img", "out5", err) == -1 && *err, "a corrupt superblock fails cleanly: %s", err);
	sh("rm -rf $T");
	return tap_done();
}
