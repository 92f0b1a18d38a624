/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/debian/root_fs.c: a package's files moved into an image's tree
 * (root_merge) and directories made in it (root_mkdirs) go through the
 * tree's links inside the tree only: Debian's /lib64 -> usr/lib64 as
 * Debian means it, an absolute link from the tree's top, a relative one
 * with too many "..", a link to a host directory: nothing lands outside. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "debian/debian.h"
#include "tap.h"

static char tmp[256], err[1024];

static void put(const char *rel, const char *text)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int has(const char *rel, const char *text)
{
	char p[1024], buf[64] = "";
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return !strcmp(buf, text);
}

static int exists(const char *rel)
{
	char p[1024];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	return lstat(p, &st) == 0;
}

static void sh(const char *fmt)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, fmt, tmp, tmp, tmp, tmp);
	if (system(cmd))
		fprintf(stderr, "# failed: %s\n", cmd);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/husk-merge-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	/* the tree: merged /usr, and links a package might ship */
	sh("mkdir -p %s/root/usr/lib64 %s/root/usr/bin %s/outside %s/root/outside");
	sh("cd %s/root && ln -s usr/lib64 lib64 && ln -s usr/bin bin");
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd %s/root && ln -s %s/outside hostdir && ln -s /usr/lib64 abs && "
		 "ln -s ../../../../../../outside climb && mkdir -p usr/share && ln -s /usr/bin usr/share/absbin", tmp, tmp);
	if (system(cmd))
		return 1;
	/* a package whose paths go through those links */
	sh("mkdir -p %s/pkg/lib64 %s/pkg/abs %s/pkg/climb %s/pkg/usr/share/absbin");
	sh("mkdir -p %s/pkg/var/tmp && chmod 1777 %s/pkg/var/tmp");
	put("pkg/lib64/ld.so", "loader");
	put("pkg/abs/y", "y");
	put("pkg/climb/z", "z");
	put("pkg/usr/share/absbin/tool", "tool");
	char rootp[512], pkgp[512];
	snprintf(rootp, sizeof rootp, "%s/root", tmp);
	snprintf(pkgp, sizeof pkgp, "%s/pkg", tmp);
	int rootfd = open(rootp, O_RDONLY | O_DIRECTORY), pkgfd = open(pkgp, O_RDONLY | O_DIRECTORY);
	int r = root_merge(rootfd, pkgfd, err, sizeof err);
	ok(r == 0, "root_merge: %s", r ? err : "done");
	ok(has("root/usr/lib64/ld.so", "loader"), "/lib64/ld.so lands in usr/lib64 (Debian's merged /usr)");
	ok(has("root/usr/lib64/y", "y"), "through an absolute link (/usr/lib64): the tree's own usr/lib64");
	ok(has("root/usr/bin/tool", "tool"), "through an absolute link below the top: resolved from the tree's top");
	ok(has("root/outside/z", "z") && !exists("outside/z"), "a relative link with too many \"..\" stops at the tree's top");
	struct stat st;
	char vt[512];
	snprintf(vt, sizeof vt, "%s/root/var/tmp", tmp);
	ok(stat(vt, &st) == 0 && (st.st_mode & 07777) == 01777, "a directory gets the package's mode (1777)");
	close(pkgfd);
	/* a link to a host directory: that path does not exist in the tree, so the merge stops there */
	sh("rm -rf %s/pkg && mkdir -p %s/pkg/hostdir/sub");
	put("pkg/hostdir/x", "x");
	pkgfd = open(pkgp, O_RDONLY | O_DIRECTORY);
	r = root_merge(rootfd, pkgfd, err, sizeof err);
	ok(r == -1 && strstr(err, "/hostdir"), "through a link to a host directory: refused (%s)", err);
	ok(!exists("outside/x") && !exists("outside/sub"), "nothing lands in the host directory");
	int d = root_mkdirs(rootfd, "hostdir/made");
	ok(d < 0 && !exists("outside/made"), "root_mkdirs through it: refused, nothing made on the host");
	if (d >= 0)
		close(d);
	close(pkgfd);
	close(rootfd);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
	if (system(cmd))
		return 1;
	return tap_done();
}
