/* SPDX-License-Identifier: GPL-2.0-only */
/* The Debian images in the cache, $HUSK_CACHE/images/NAME/ (debian.h):
 * their names, manifests, `husk image ls` and `husk image rm`, and the
 * lookup for `husk run --image NAME`. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cache.h"
#include "debian/debian.h"
#include "errmsg.h"
#include "exit_codes.h"

int image_name_ok(const char *s)
{
	size_t n = strlen(s);
	return n && n <= 64 && s[0] != '.' && s[0] != '-' && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int open_up(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	if (type == FTW_D && !(st->st_mode & S_IWUSR))
		chmod(path, st->st_mode | S_IRWXU); /* a package's read-only directory (built as non-root) */
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)type, (void)f;
	remove(path);
	return 0;
}

/* rm -rf path: never following a symlink, never leaving its file system. */
void remove_tree(const char *path)
{
	nftw(path, open_up, 64, FTW_PHYS | FTW_MOUNT);
	nftw(path, remove_one, 64, FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
}

json_t *manifest_load(int images, const char *name)
{
	char path[NAME_MAX + 32];
	snprintf(path, sizeof path, "%s/manifest.json", name);
	int fd = openat(images, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	json_t *m = json_loadfd(fd, 0, NULL);
	close(fd);
	return json_is_object(m) ? m : (json_decref(m), NULL);
}

int debian_image_ls(int argc, char **argv)
{
	if (argc > 3)
		usage_error("'husk image ls' takes no arguments (got '%s')", argv[3]);
	char dir[PATH_MAX], err[PATH_MAX + 256];
	int images = cache_open("images", dir, sizeof dir, err, sizeof err);
	if (images < 0)
		die(EXIT_USAGE, "%s", err);
	DIR *d = fdopendir(images);
	struct dirent *e;
	int shown = 0;
	while (d && (e = readdir(d))) {
		json_t *m = e->d_name[0] == '.' ? NULL : manifest_load(images, e->d_name);
		if (!m)
			continue;
		if (!shown++)
			printf("%-16s %8s %9s  %-20s  %s\n", "NAME", "PACKAGES", "DISK", "BUILT", "REQUESTED");
		json_t *req = json_object_get(m, "requested"), *v;
		size_t i;
		char reqs[1024] = "";
		json_array_foreach(req, i, v)
		{
			size_t l = strlen(reqs);
			snprintf(reqs + l, sizeof reqs - l, "%s%s", i ? " " : "", json_string_value(v) ? json_string_value(v) : "?");
		}
		char disk[NAME_MAX + 16];
		snprintf(disk, sizeof disk, "%s/root.ext2", e->d_name);
		struct stat st;
		double mb = fstatat(images, disk, &st, AT_SYMLINK_NOFOLLOW) ? 0 : st.st_blocks * 512.0 / (1 << 20);
		const char *built = json_string_value(json_object_get(m, "built"));
		printf("%-16s %8zu %7.0fMB  %-20s  %s\n", e->d_name, json_array_size(json_object_get(m, "packages")), mb,
		       built ? built : "?", reqs);
		json_decref(m);
	}
	if (d)
		closedir(d);
	if (!shown)
		fprintf(stderr, "husk: no Debian images in %s (husk image build NAME PACKAGE... makes one)\n", dir);
	return 0;
}

int debian_image_rm(int argc, char **argv)
{
	if (argc < 4)
		usage_error("usage: husk image rm NAME...");
	char dir[PATH_MAX], top[PATH_MAX], err[PATH_MAX + 256];
	int images = cache_open("images", dir, sizeof dir, err, sizeof err);
	int cache = images < 0 ? -1 : cache_open(NULL, top, sizeof top, err, sizeof err);
	if (cache < 0)
		die(EXIT_USAGE, "%s", err);
	int status = 0;
	for (int i = 3; i < argc; i++) {
		struct cache_entry e = { "image", "", 0, 0 };
		struct stat st;
		if (!image_name_ok(argv[i]) || fstatat(images, argv[i], &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "husk: no Debian image '%s' in %s\n", argv[i], dir);
			status = EXIT_USAGE;
			continue;
		}
		snprintf(e.name, sizeof e.name, "images/%s", argv[i]);
		if (cache_remove(cache, &e)) { /* renamed away first: a run starting now sees it gone, or whole */
			fprintf(stderr, "husk: cannot remove %s/%s: %s\n", dir, argv[i], strerror(errno));
			status = EXIT_INTERNAL;
		}
	}
	close(images);
	close(cache);
	return status;
}

int debian_image_find(const char *name, char **disk, char **env_base, char **digest, char *err, size_t n)
{
	*digest = NULL;
	char dir[PATH_MAX];
	if (!image_name_ok(name))
		return errmsg(err, n, "bad image name '%s' (a-z, 0-9, '.', '_', '-')", name);
	int images = cache_open("images", dir, sizeof dir, err, n);
	if (images < 0)
		return -1;
	char rel[NAME_MAX + 16];
	snprintf(rel, sizeof rel, "%s/root.ext2", name);
	struct stat st;
	int r = fstatat(images, rel, &st, AT_SYMLINK_NOFOLLOW);
	json_t *m = r ? NULL : manifest_load(images, name);
	const char *d = json_string_value(json_object_get(m, "disk_sha256"));
	if (d && !(*digest = strdup(d)))
		r = -1;
	json_decref(m);
	if (!r)
		cache_touch(images, name); /* used: the last the cache's cap removes */
	close(images);
	if (r || !S_ISREG(st.st_mode))
		return errmsg(err, n, "no Debian image '%s' in %s (build it: husk image build %s PACKAGE...; husk image ls lists them)",
			      name, dir, name);
	if (asprintf(disk, "%s/%s/root.ext2", dir, name) < 0 || asprintf(env_base, "%s/%s/root", dir, name) < 0)
		return errmsg(err, n, "out of memory");
	return 0;
}
