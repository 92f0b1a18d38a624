/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cache.h"
#include "disks/copyin.h"
#include "errmsg.h"

int cache_open(const char *sub, char *path, size_t len, char *err, size_t n)
{
	const char *env = getenv("HUSK_CACHE");
	const char *top = env && *env ? env : "/var/cache/husk";
	char why[4096 + 100];
	int fd = copyin_own_dir(top, 0700, why, sizeof why);
	if (fd >= 0 && sub) {
		char full[4096];
		snprintf(full, sizeof full, "%s/%s", top, sub);
		close(fd);
		fd = copyin_own_dir(full, 0700, why, sizeof why);
	}
	if (fd < 0)
		return errmsg(err, n, "husk's cache: %s (set HUSK_CACHE to a directory of your own)", why);
	if ((size_t)snprintf(path, len, "%s%s%s", top, sub ? "/" : "", sub ? sub : "") >= len) {
		close(fd);
		return errmsg(err, n, "husk's cache: %s: path too long", top);
	}
	return fd;
}
