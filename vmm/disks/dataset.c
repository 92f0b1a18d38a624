/* SPDX-License-Identifier: GPL-2.0-only */
/* Read-only datasets (--ro NAME=DIR) attached without copying their data.
 * The tree is walked once for its key (copyin_measure: every entry's path,
 * type, size, inode and times); the cache holds, under that key, an ext2
 * image of the tree's metadata only (its data blocks allocated, never
 * written: a sparse file) and a map from those blocks to pieces of the host
 * files (ro-KEY.img, ro-KEY.map).  The guest's reads of mapped blocks are
 * served from the files themselves (virtio_blk.c), opened on demand by the
 * file server (file_server.c) by path under the dataset's top, without
 * following a symlink, and only if still the inode walked.  So attaching
 * costs time and cache space in proportion to the number of files, not to
 * their bytes, and a changed tree gets a new key. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cache.h"
#include "disks/dataset.h"
#include "disks/map_file.h"
#include "errmsg.h"
#include "progress.h"

#define KEY_FORMAT "husk ro image 3" /* changes with what copyin_build_mapped makes */

/* SHA-256 over what identifies the tree's contents: the top's path, and
 * each entry's path, type and mode, size, device, inode, mtime and ctime
 * (ns; the top's device and inode are its entry "").  A ctime cannot be set
 * back, so an edit whose mtime was restored still changes the key. */
static void tree_key(int dirfd, const struct copyin_record *rec, char hex[2 * SHA256_DIGEST_SIZE + 1])
{
	char top[PATH_MAX + 1], proc[40];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
	ssize_t k = readlink(proc, top, sizeof top - 1);
	top[k > 0 ? k : 0] = 0;
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, sizeof KEY_FORMAT, (const uint8_t *)KEY_FORMAT);
	sha256_update(&c, strlen(top) + 1, (const uint8_t *)top);
	for (size_t i = 0; i < rec->n; i++) {
		const struct copyin_entry *e = &rec->e[i];
		uint64_t f[6] = { e->mode, e->dev, e->ino, e->size, (uint64_t)e->mtime_ns, (uint64_t)e->ctime_ns };
		sha256_update(&c, strlen(e->path) + 1, (const uint8_t *)e->path);
		sha256_update(&c, sizeof f, (const uint8_t *)f);
	}
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&c, sizeof d, d);
	for (size_t i = 0; i < sizeof d; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* ---- the cache ----------------------------------------------------------- */

/* A cached file, if a sound one is there: a regular file of the user's,
 * not writable by others (and of the given size, unless 0). */
static int open_cached(int cache, const char *name, uint64_t size)
{
	int fd = openat(cache, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
	    (!size || (uint64_t)st.st_size == size) && fcntl(fd, F_SETFL, 0) == 0)
		return fd;
	close(fd);
	return -1;
}

/* A new file in the cache under a random name made with O_EXCL (the name
 * in tmp). */
static int temp_in(int cache, char *tmp, size_t len)
{
	for (int i = 0; i < 8; i++) {
		uint64_t r;
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			break;
		snprintf(tmp, len, ".tmp-%016llx", (unsigned long long)r);
		int fd = openat(cache, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* A file opened again, read-only: the same inode, not the name. */
static int reopen_ro(int fd)
{
	char p[40];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* Builds the metadata image and the map of the tree under dirfd; both are
 * stored (map first: an image is used only with its map) if the tree's key
 * did not change during the walk.  Best effort: what cannot be stored still
 * serves this run. */
static int build(struct disk *d, int cache, const char *key, int dirfd, const char *path, uint64_t size,
		 uint64_t inodes, char *err, size_t n)
{
	char img_tmp[64], map_tmp[64], why[1024], name[96];
	int img = temp_in(cache, img_tmp, sizeof img_tmp);
	int map = img < 0 ? -1 : temp_in(cache, map_tmp, sizeof map_tmp);
	if (map < 0) {
		int e = errno;
		if (img >= 0) {
			close(img);
			unlinkat(cache, img_tmp, 0);
		}
		return errmsg(err, n, "dataset cache: cannot create %s: %s (set HUSK_CACHE to a directory of your own)",
			      d->image, strerror(e));
	}
	struct copyin_record rec;
	int built = copyin_build_mapped(dirfd, img, size, inodes, &rec, &d->map, why, sizeof why) == 0, r = 0;
	if (!built) {
		r = errmsg(err, n, "--ro %s: %s", path, why);
	} else if (!map_file_valid(&d->map, size)) {
		r = errmsg(err, n, "--ro %s: the map of its image is inconsistent (a bug)", path);
	} else if (map_file_save(map, img, &d->map, size) == 0) { /* no fsync: a torn map is refused by map_file_load */
		char again[2 * SHA256_DIGEST_SIZE + 1];
		tree_key(dirfd, &rec, again);
		snprintf(name, sizeof name, "ro-%s.map", key);
		if (!strcmp(again, key) && renameat(cache, map_tmp, cache, name) == 0) {
			map_tmp[0] = 0;
			snprintf(name, sizeof name, "ro-%s.img", key);
			if (renameat(cache, img_tmp, cache, name) == 0)
				img_tmp[0] = 0;
		}
	}
	if (built)
		copyin_record_free(&rec);
	close(map);
	if (map_tmp[0])
		unlinkat(cache, map_tmp, 0);
	if (img_tmp[0])
		unlinkat(cache, img_tmp, 0);
	int ro = r ? -1 : reopen_ro(img);
	close(img);
	if (!r && ro < 0)
		r = errmsg(err, n, "cannot reopen the image of %s: %s", path, strerror(errno));
	if (r) {
		copyin_map_free(&d->map);
		return -1;
	}
	d->fd = ro;
	d->size = size;
	return 0;
}

int dataset_attach(struct disk *d, int dirfd, const char *path, char *err, size_t n)
{
	uint64_t bytes, entries;
	struct copyin_record rec;
	char why[1024], key[2 * SHA256_DIGEST_SIZE + 1], name[96], dir[PATH_MAX], label[PATH_MAX + 32];
	snprintf(label, sizeof label, "--ro %s", path);
	progress_begin(label);
	int m = copyin_measure(dirfd, &bytes, &entries, &rec, why, sizeof why);
	progress_end();
	if (m)
		return errmsg(err, n, "--ro %s: %s", path, why);
	tree_key(dirfd, &rec, key);
	copyin_record_free(&rec);
	int cache = cache_open(NULL, dir, sizeof dir, err, n);
	if (cache < 0)
		return -1;
	snprintf(name, sizeof name, "ro-%s.img", key);
	if (snprintf(d->image, sizeof d->image, "%s/%s", dir, name) >= (int)sizeof d->image) {
		close(cache);
		return errmsg(err, n, "dataset cache: %s: path too long", dir);
	}
	uint64_t size = disks_ro_image_bytes(bytes, entries);
	int img = open_cached(cache, name, size), r = -1;
	snprintf(name, sizeof name, "ro-%s.map", key);
	int map = img < 0 ? -1 : open_cached(cache, name, 0);
	if (map >= 0 && map_file_load(map, img, &d->map, size) == 0) {
		d->fd = img, img = -1;
		d->size = size;
		r = 0;
		cache_touch(cache, name); /* used: the last the cache's cap removes */
	}
	if (img >= 0)
		close(img);
	if (map >= 0)
		close(map);
	if (r) {
		progress_begin(label);
		r = build(d, cache, key, dirfd, path, size, entries + 64, err, n);
		progress_end();
		name[strlen(name) - 4] = 0; /* the entry: ro-KEY */
		if (!r)
			cache_trim(name);
	}
	close(cache);
	if (!r && (d->top_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		copyin_map_free(&d->map);
		close(d->fd);
		d->fd = -1;
		return errmsg(err, n, "--ro %s: %s", path, strerror(errno));
	}
	d->read_only = 1;
	d->mapped = !r;
	return r;
}
