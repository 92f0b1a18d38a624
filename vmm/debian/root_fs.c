/* SPDX-License-Identifier: GPL-2.0-only */
/* The unpacked tree made ready to be a run's "/": /etc's files for the
 * guest (husk/etc_files.h), the mount points.  Everything goes through
 * root_open: a symlink in the tree (a package's absolute link) is resolved
 * inside it, never on the host. */
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
	int dfd = root_open(rootfd, ".", O_DIRECTORY | O_RDONLY, 0);
	char part[4096];
	snprintf(part, sizeof part, "%s", path);
	for (char *name = part, *next; dfd >= 0 && name && *name; name = next) {
		next = strchr(name, '/');
		if (next)
			*next++ = 0;
		if (!*name)
			continue;
		if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST) {
			close(dfd);
			return -1;
		}
		/* the directory's fd: what a symlink of that name means inside the tree */
		int sub = root_open(dfd, name, O_DIRECTORY | O_RDONLY, 0);
		close(dfd);
		dfd = sub;
	}
	return dfd;
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
