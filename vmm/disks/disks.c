/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cache.h"
#include "disks/copyin.h"
#include "errmsg.h"
#include "disks/disks.h"

/* e2fsprogs' tools by absolute path, with an environment of their own:
 * nothing of husk's (PATH, LD_PRELOAD, locale files) reaches them. */
#define E2FSCK "/usr/sbin/e2fsck"
static char *const tool_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };

/* Runs argv quietly, with fd (if not -1) as its fd 3; returns its exit
 * status, or -1 if it could not run. */
static int run_tool(char *const argv[], int fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, fd, 3); /* also clears FD_CLOEXEC when fd is 3 */
	pid_t pid;
	int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, tool_env);
	posix_spawn_file_actions_destroy(&fa);
	if (e)
		return -1;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct disk *next_disk(struct disks *ds, char *err, size_t n)
{
	if (ds->n == MAX_DISKS) {
		errmsg(err, n, "too many disks (at most %d)", MAX_DISKS);
		return NULL;
	}
	struct disk *d = &ds->d[ds->n];
	memset(d, 0, sizeof *d);
	d->fd = -1;
	return d;
}

/* The disk is fd, already open (and checked): never reopened by name. */
static int adopt(struct disk *d, int fd, int read_only, char *err, size_t n)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return errmsg(err, n, "cannot use %s: %s", d->image, strerror(errno));
	}
	d->fd = fd;
	d->size = st.st_size & ~511ull;
	d->read_only = read_only;
	return 0;
}

/* A file opened again, read-only: the same inode, not the name. */
static int reopen_ro(int fd)
{
	char p[40];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* --- the dataset cache --------------------------------------------------
 * $HUSK_CACHE (default /var/cache/husk): a directory of the user's own (or
 * root's), not writable by group or others, holding ro-KEY.img, each a
 * regular file of the user's.  Images are built in an unnamed file
 * (O_TMPFILE, else an O_EXCL name) and renamed into place. */

#define KEY_FORMAT "husk ro image 2" /* changes with what copyin_build makes */

uint64_t disks_ro_image_bytes(uint64_t bytes, uint64_t entries)
{
	uint64_t b = bytes + entries * 4096 + (16ull << 20);
	return (b + b / 8) & ~4095ull;
}

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

/* A cached image, if a sound one is there: a regular file of the user's,
 * not writable by others, of the size this tree's image has. */
static int open_cached(int cache, const char *name, uint64_t size)
{
	int fd = openat(cache, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
	    (uint64_t)st.st_size == size)
		return fd;
	close(fd);
	return -1;
}

static int random_name(char *tmp, size_t len)
{
	uint64_t r;
	if (getrandom(&r, sizeof r, 0) != sizeof r)
		return -1;
	snprintf(tmp, len, ".tmp-%016llx", (unsigned long long)r);
	return 0;
}

/* A new file in the cache: unnamed where the file system can (nothing is
 * left behind if husk dies), else under a random name made with O_EXCL
 * (then in tmp; tmp[0] is 0 for an unnamed one). */
static int temp_in(int cache, char *tmp, size_t len)
{
	tmp[0] = 0;
	int fd = openat(cache, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	for (int i = 0; fd < 0 && i < 8 && random_name(tmp, len) == 0; i++) {
		fd = openat(cache, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		tmp[0] = 0;
	return fd;
}

/* The image in fd goes into the cache under name, replacing whatever was
 * there: a reader sees the old file or the whole new one.  Best effort: an
 * image that cannot be stored still serves this run. */
static void store(int cache, int fd, char *tmp, size_t len, const char *name)
{
	if (!tmp[0]) {
		char proc[40];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		if (random_name(tmp, len) || linkat(AT_FDCWD, proc, cache, tmp, AT_SYMLINK_FOLLOW) < 0) {
			tmp[0] = 0;
			return;
		}
	}
	if (renameat(cache, tmp, cache, name) == 0)
		tmp[0] = 0;
}

/* Builds the image of the tree under dirfd in the cache; it is stored under
 * name only if the tree's key did not change during the copy. */
static int build_cached(struct disk *d, int cache, const char *name, int dirfd, const char *path, uint64_t size,
			uint64_t inodes, const char *key, char *err, size_t n)
{
	char tmp[64], why[1024], again[2 * SHA256_DIGEST_SIZE + 1];
	int fd = temp_in(cache, tmp, sizeof tmp);
	if (fd < 0)
		return errmsg(err, n, "dataset cache: cannot create %s: %s (set HUSK_CACHE to a directory of your own)",
			      d->image, strerror(errno));
	struct copyin_record rec;
	int r = copyin_build(dirfd, fd, size, inodes, &rec, why, sizeof why);
	if (r) {
		errmsg(err, n, "--ro %s: %s", path, why);
	} else {
		tree_key(dirfd, &rec, again);
		copyin_record_free(&rec);
		if (!strcmp(again, key))
			store(cache, fd, tmp, sizeof tmp, name);
	}
	if (tmp[0])
		unlinkat(cache, tmp, 0);
	int ro = r ? -1 : reopen_ro(fd);
	if (!r && ro < 0)
		r = errmsg(err, n, "cannot reopen the image of %s: %s", path, strerror(errno));
	close(fd);
	return r ? -1 : adopt(d, ro, 1, err, n);
}

/* A read-only image of the tree under dirfd, from the cache or built into
 * it, keyed by tree_key: a changed tree gets a new image. */
static int cached_image(struct disk *d, int dirfd, const char *path, char *err, size_t n)
{
	uint64_t bytes, entries;
	struct copyin_record rec;
	char why[1024], key[2 * SHA256_DIGEST_SIZE + 1], name[96], dir[PATH_MAX];
	if (copyin_measure(dirfd, &bytes, &entries, &rec, why, sizeof why))
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
	int fd = open_cached(cache, name, size);
	int r = fd >= 0 ? adopt(d, fd, 1, err, n)
			: build_cached(d, cache, name, dirfd, path, size, entries + 64, key, err, n);
	close(cache);
	return r;
}

/* --- read-only disks ------------------------------------------------------ */

static int is_ext2(int fd)
{
	unsigned char sb[2];
	return pread(fd, sb, 2, 1024 + 56) == 2 && sb[0] == 0x53 && sb[1] == 0xef;
}

/* e2fsck -fn: a full read-only check of the very file the guest will get
 * (fd, as the tool's /proc/self/fd/3).  A corrupt image is refused here,
 * before the guest ever sees it. */
static int check_ext2(int fd, const char *image, char *err, size_t n)
{
	if (!is_ext2(fd))
		return errmsg(err, n, "%s is neither a directory nor an ext2 image", image);
	char *argv[] = { E2FSCK, "-f", "-n", "/proc/self/fd/3", NULL };
	int st = run_tool(argv, fd);
	if (st < 0)
		return errmsg(err, n, "cannot run " E2FSCK " (is e2fsprogs installed?)");
	if (st)
		return errmsg(err, n, "%s is a corrupt ext2 image (e2fsck -fn exit %d)", image, st);
	return 0;
}

static int valid_name(const char *s, size_t len)
{
	if (!len || len > 64 || (len == 1 && s[0] == '.') || (len == 2 && !strncmp(s, "..", 2)))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]) || !s[i])
			return 0;
	return 1;
}

/* A directory given to --ro: opened with no symlink in its path, copied
 * through that fd. */
static int add_ro_dir(struct disk *d, const char *path, char *err, size_t n)
{
	char why[PATH_MAX + 100];
	int dfd = copyin_open_dir(path, why, sizeof why);
	if (dfd < 0)
		return errmsg(err, n, "--ro %s: %s", path, why);
	int r = cached_image(d, dfd, path, err, n);
	close(dfd);
	return r;
}

/* An image file given to --ro: checked and used through one fd. */
static int add_ro_image(struct disk *d, int fd, const struct stat *st, const char *path, char *err, size_t n)
{
	snprintf(d->image, sizeof d->image, "%s", path);
	int r = S_ISREG(st->st_mode) || S_ISBLK(st->st_mode)
			? check_ext2(fd, path, err, n)
			: errmsg(err, n, "%s is neither a directory nor an ext2 image", path);
	if (!r)
		r = fcntl(fd, F_SETFL, 0) < 0 ? errmsg(err, n, "--ro %s: %s", path, strerror(errno)) : 0;
	if (r) {
		close(fd);
		return -1;
	}
	return adopt(d, fd, 1, err, n);
}

int disks_add_ro(struct disks *ds, const char *spec, char *err, size_t n)
{
	const char *eq = strchr(spec, '=');
	if (!eq || !valid_name(spec, eq - spec) || !eq[1])
		return errmsg(err, n, "bad --ro '%s' (expected NAME=PATH, NAME of letters, digits, '.', '_', '-')", spec);
	struct disk *d = next_disk(ds, err, n);
	if (!d)
		return -1;
	snprintf(d->mount, sizeof d->mount, "/data/%.*s", (int)(eq - spec), spec);
	for (int i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i].mount, d->mount))
			return errmsg(err, n, "dataset name '%.*s' given twice", (int)(eq - spec), spec);
	const char *path = eq + 1;
	/* O_NONBLOCK: a fifo given by mistake must not hang husk. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return errmsg(err, n, "--ro %s: %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode))
		close(fd);
	if (S_ISDIR(st.st_mode) ? add_ro_dir(d, path, err, n) : add_ro_image(d, fd, &st, path, err, n))
		return -1;
	ds->n++;
	return 0;
}

int disks_add_system(struct disks *ds, const char *image, const char *mount, char *err, size_t n)
{
	struct disk *d = next_disk(ds, err, n);
	if (!d)
		return -1;
	snprintf(d->mount, sizeof d->mount, "%s", mount);
	snprintf(d->image, sizeof d->image, "%s", image);
	int fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errmsg(err, n, "cannot open %s: %s", image, strerror(errno));
	if (adopt(d, fd, 1, err, n))
		return -1;
	ds->n++;
	return 0;
}

/* --- the workdir ----------------------------------------------------------- */

/* The workdir's image: a temporary file (deleted after the run), built from
 * the tree under ds->workdir_fd, its record in ds->workdir_record. */
static int workdir_image(struct disks *ds, struct disk *d, uint64_t size, uint64_t entries, char *err, size_t n)
{
	const char *tmpdir = getenv("TMPDIR");
	snprintf(d->image, sizeof d->image, "%s/husk-workdir-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkostemp(d->image, O_CLOEXEC);
	if (fd < 0)
		return errmsg(err, n, "cannot create the workdir image: %s", strerror(errno));
	uint64_t inodes = size / 8192 > entries + 1024 ? size / 8192 : entries + 1024;
	char why[1024];
	if (copyin_build(ds->workdir_fd, fd, size, inodes, &ds->workdir_record, why, sizeof why)) {
		close(fd);
		unlink(d->image);
		return errmsg(err, n, "workdir %s: %s", ds->workdir_path, why);
	}
	if (adopt(d, fd, 0, err, n)) {
		unlink(d->image);
		return -1;
	}
	d->temporary = 1;
	snprintf(d->mount, sizeof d->mount, "/workdir");
	ds->workdir = ds->n++;
	return 0;
}

int disks_add_workdir(struct disks *ds, const char *dir, uint64_t size, char *err, size_t n)
{
	struct disk *d = next_disk(ds, err, n);
	if (!d)
		return -1;
	snprintf(ds->workdir_path, sizeof ds->workdir_path, "%s", dir);
	char why[PATH_MAX + 100];
	ds->workdir_fd = copyin_make_dir(dir, why, sizeof why);
	if (ds->workdir_fd < 0)
		return errmsg(err, n, "workdir %s: %s", dir, why);
	uint64_t bytes, entries;
	if (copyin_measure(ds->workdir_fd, &bytes, &entries, NULL, why, sizeof why))
		return errmsg(err, n, "workdir %s: %s", dir, why);
	if (bytes + entries * 4096 + (8ull << 20) > size)
		return errmsg(err, n, "workdir %s holds more than the %llu MiB disk (--disk)", dir,
			      (unsigned long long)(size >> 20));
	return workdir_image(ds, d, size, entries, err, n);
}

void disks_release(struct disks *ds)
{
	for (int i = 0; i < ds->n; i++) {
		if (ds->d[i].fd >= 0)
			close(ds->d[i].fd);
		if (ds->d[i].temporary)
			unlink(ds->d[i].image);
	}
	if (ds->workdir_fd >= 0)
		close(ds->workdir_fd);
	if (ds->workdir >= 0)
		copyin_record_free(&ds->workdir_record);
	ds->workdir_fd = ds->workdir = -1;
	ds->n = 0;
}
