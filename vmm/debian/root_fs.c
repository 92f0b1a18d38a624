/* SPDX-License-Identifier: GPL-2.0-only */
/* The unpacked tree made ready to be a run's "/": /etc's files for the
 * guest (husk/etc_files.h), the mount points.  Everything goes through
 * root_open: a symlink in the tree (a package's absolute link) is resolved
 * inside it, never on the host. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "debian/debian.h"
#include "errmsg.h"
#include "husk/etc_files.h"

int root_open(int rootfd, const char *path, int flags, unsigned mode)
{
	struct open_how how = { .flags = (unsigned)flags | O_CLOEXEC, .mode = mode, .resolve = RESOLVE_IN_ROOT };
	if (!(flags & O_CREAT))
		how.mode = 0;
	return (int)syscall(SYS_openat2, rootfd, *path ? path : ".", &how, sizeof how);
}

int root_mkdirs(int rootfd, const char *path)
{
	char part[4096];
	if (snprintf(part, sizeof part, "%s", path) >= (int)sizeof part) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int dfd = root_open(rootfd, "", O_DIRECTORY | O_RDONLY, 0);
	for (char *p = part; dfd >= 0 && *p;) {
		char *end = p + strcspn(p, "/"), saved = *end;
		*end = 0;
		int made = !*p || mkdirat(dfd, p, 0755) == 0 || errno == EEXIST;
		close(dfd);
		/* the path so far, from the tree's top: a link in it (Debian's
		 * lib64 -> usr/lib64, an absolute one) resolves inside the tree */
		dfd = made ? root_open(rootfd, part, O_DIRECTORY | O_RDONLY, 0) : -1;
		*end = saved;
		p = *end ? end + 1 : end;
	}
	return dfd;
}

#define MERGE_DEPTH 64

/* srcfd's entries into rel (a directory path inside rootfd), which then
 * gets mode (0: left as it is; set last, so a read-only one is filled
 * first). */
static int merge_dir(int rootfd, int srcfd, char *rel, size_t len, unsigned mode, int depth, char *err, size_t n)
{
	int dst = depth > MERGE_DEPTH ? -1 : root_mkdirs(rootfd, rel);
	if (dst < 0)
		return errmsg(err, n, "cannot make the image's /%s: %s", rel, depth > MERGE_DEPTH ? "too deep" : strerror(errno));
	int dupfd = dup(srcfd);
	DIR *d = dupfd < 0 ? NULL : fdopendir(dupfd);
	if (!d) {
		close(dst);
		return errmsg(err, n, "cannot read a package's /%s: %s", rel, strerror(errno));
	}
	int r = 0;
	struct dirent *e;
	while (!r && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(srcfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errmsg(err, n, "a package's /%s/%s: %s", rel, e->d_name, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			size_t l = strlen(rel), k = strlen(e->d_name);
			int sub = openat(srcfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 || l + k + 2 > len) {
				r = errmsg(err, n, "a package's /%s/%s: %s", rel, e->d_name, sub < 0 ? strerror(errno) : "path too long");
			} else {
				snprintf(rel + l, len - l, "%s%s", l ? "/" : "", e->d_name);
				r = merge_dir(rootfd, sub, rel, len, st.st_mode & 07777, depth + 1, err, n);
				rel[l] = 0;
			}
			if (sub >= 0)
				close(sub);
		} else if (renameat(srcfd, e->d_name, dst, e->d_name) < 0) {
			r = errmsg(err, n, "cannot put /%s/%s into the image: %s", rel, e->d_name, strerror(errno));
		}
	}
	closedir(d);
	if (!r && mode) /* the package's mode (dpkg gives a shared directory the last one's) */
		fchmod(dst, mode);
	close(dst);
	return r;
}

int root_merge(int rootfd, int srcfd, char *err, size_t n)
{
	char rel[4096] = "";
	return merge_dir(rootfd, srcfd, rel, sizeof rel, 0, 0, err, n);
}

/* /etc/NAME, replacing what a package put there. */
static int put_etc(int etc, const char *name, const char *text, size_t len)
{
	unlinkat(etc, name, 0);
	int fd = openat(etc, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t k = write(fd, text, len);
	return close(fd) || k != (ssize_t)len ? -1 : 0;
}

/* The host's /etc/services (netbase's, as the guest kernel's own /etc has
 * it) when no package of the image gave one. */
static int copy_services(int etc)
{
	if (faccessat(etc, "services", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	int in = open("/etc/services", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return 0; /* the host has none either: getservbyname fails in the guest as on the host */
	char buf[1 << 16];
	ssize_t k = read(in, buf, sizeof buf);
	close(in);
	return k > 0 ? put_etc(etc, "services", buf, k) : 0;
}

int root_fs_complete(int rootfd, char *err, size_t n)
{
	static const struct { const char *name, *text; } files[] = {
		{ "passwd", HUSK_ETC_PASSWD }, { "group", HUSK_ETC_GROUP }, { "hosts", HUSK_ETC_HOSTS },
		{ "hostname", HUSK_ETC_HOSTNAME }, { "resolv.conf", HUSK_ETC_RESOLV_CONF }, { "timezone", "Etc/UTC\n" },
	};
	int etc = root_mkdirs(rootfd, "etc");
	if (etc < 0)
		return errmsg(err, n, "cannot make the image's /etc: %s", strerror(errno));
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (put_etc(etc, files[i].name, files[i].text, strlen(files[i].text))) {
			close(etc);
			return errmsg(err, n, "cannot write the image's /etc/%s: %s", files[i].name, strerror(errno));
		}
	int r = copy_services(etc);
	unlinkat(etc, "localtime", 0);
	unlinkat(etc, "mtab", 0);
	if (!r && (symlinkat("/usr/share/zoneinfo/Etc/UTC", etc, "localtime") || symlinkat("../proc/self/mounts", etc, "mtab")))
		r = -1;
	close(etc);
	if (r)
		return errmsg(err, n, "cannot complete the image's /etc: %s", strerror(errno));
	/* the mount points, so that `ls /` shows them (the guest mounts over them) */
	static const char *const dirs[] = { "workdir", "data", "tmp", "proc", "dev", "root", "run" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		int fd = root_mkdirs(rootfd, dirs[i]);
		if (fd < 0)
			return errmsg(err, n, "cannot make the image's /%s: %s", dirs[i], strerror(errno));
		if (!strcmp(dirs[i], "tmp"))
			fchmod(fd, 01777);
		close(fd);
	}
	return 0;
}
