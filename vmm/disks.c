#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "errmsg.h"
#include "disks.h"

extern char **environ;

/* Runs argv quietly; returns its exit status, or -1 if it could not run. */
static int run_tool(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
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
	if (ds->n == MAX_DISKS)
		return errmsg(err, n, "too many disks (at most %d)", MAX_DISKS), NULL;
	struct disk *d = &ds->d[ds->n];
	memset(d, 0, sizeof *d);
	d->fd = -1;
	return d;
}

static int open_image(struct disk *d, int read_only, char *err, size_t n)
{
	d->fd = open(d->image, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	struct stat st;
	if (d->fd < 0 || fstat(d->fd, &st) < 0)
		return errmsg(err, n, "cannot open %s: %s", d->image, strerror(errno));
	d->size = st.st_size & ~511ull;
	d->read_only = read_only;
	return 0;
}

/* --- directory -> ext2 image ------------------------------------------- */

struct tree_sum {
	uint64_t hash, bytes, entries;
};
static struct tree_sum walk_sum;

static void mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		*h = (*h ^ c[i]) * 0x100000001b3ull; /* FNV-1a */
}

static int sum_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)type, (void)ftw;
	mix(&walk_sum.hash, path, strlen(path) + 1);
	uint64_t meta[5] = { st->st_mode, st->st_size, st->st_ino, st->st_mtim.tv_sec, st->st_mtim.tv_nsec };
	mix(&walk_sum.hash, meta, sizeof meta);
	walk_sum.bytes += (st->st_size + 4095) & ~4095ull;
	walk_sum.entries++;
	return 0;
}

static int summarize(const char *dir, struct tree_sum *out, char *err, size_t n)
{
	walk_sum = (struct tree_sum){ 0xcbf29ce484222325ull, 0, 0 };
	if (nftw(dir, sum_entry, 64, FTW_PHYS) < 0)
		return errmsg(err, n, "cannot read %s: %s", dir, strerror(errno));
	*out = walk_sum;
	return 0;
}

static const char *cache_dir(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("HUSK_CACHE");
	snprintf(path, sizeof path, "%s", env && *env ? env : "/var/cache/husk");
	mkdir(path, 0700);
	return path;
}

/* mke2fs -d DIR into IMAGE of `bytes` (sparse), with `inodes` inodes. */
static int make_ext2(const char *dir, const char *image, uint64_t bytes, uint64_t inodes, char *err, size_t n)
{
	char size[32], nin[32], src[PATH_MAX + 8];
	snprintf(size, sizeof size, "%lluk", (unsigned long long)(bytes >> 10));
	snprintf(nin, sizeof nin, "%llu", (unsigned long long)inodes);
	snprintf(src, sizeof src, "%s", dir);
	char *argv[] = { "mke2fs", "-q", "-F", "-t", "ext2", "-b", "4096", "-m", "0", "-N", nin,
			 "-E", "root_owner=0:0", "-d", src, (char *)image, size, NULL };
	int st = run_tool(argv);
	if (st < 0)
		return errmsg(err, n, "cannot run mke2fs (is e2fsprogs installed?)");
	if (st)
		return errmsg(err, n, "mke2fs could not build an ext2 image of %s", dir);
	return 0;
}

/* A read-only image of dir, cached under the cache dir by a digest of the
 * tree's names, sizes, inode numbers and times. */
static int cached_image(const char *dir, char *image, size_t len, char *err, size_t n)
{
	struct tree_sum t;
	char real[PATH_MAX];
	if (!realpath(dir, real))
		return errmsg(err, n, "cannot resolve %s: %s", dir, strerror(errno));
	if (summarize(real, &t, err, n))
		return -1;
	mix(&t.hash, real, strlen(real));
	const char *cache = cache_dir();
	if (snprintf(image, len, "%s/ro-%016llx.img", cache, (unsigned long long)t.hash) >= (int)len)
		return errmsg(err, n, "cache path too long");
	if (access(image, R_OK) == 0)
		return 0;
	char tmp[PATH_MAX + 32];
	if (snprintf(tmp, sizeof tmp, "%s.%d", image, (int)getpid()) >= (int)sizeof tmp)
		return errmsg(err, n, "cache path too long");
	uint64_t bytes = t.bytes + t.entries * 4096 + (16ull << 20);
	if (make_ext2(real, tmp, bytes + bytes / 8, t.entries + 64, err, n)) {
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, image) < 0) {
		unlink(tmp);
		return errmsg(err, n, "cannot store %s: %s", image, strerror(errno));
	}
	return 0;
}

/* --- read-only disks ------------------------------------------------------ */

static int is_ext2(const char *image)
{
	unsigned char sb[2];
	int fd = open(image, O_RDONLY | O_CLOEXEC);
	int ok = fd >= 0 && pread(fd, sb, 2, 1024 + 56) == 2 && sb[0] == 0x53 && sb[1] == 0xef;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* e2fsck -fn: a full read-only check.  A corrupt image is refused here,
 * before the guest ever sees it. */
static int check_ext2(const char *image, char *err, size_t n)
{
	if (!is_ext2(image))
		return errmsg(err, n, "%s is neither a directory nor an ext2 image", image);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", image);
	char *argv[] = { "e2fsck", "-f", "-n", path, NULL };
	int st = run_tool(argv);
	if (st < 0)
		return errmsg(err, n, "cannot run e2fsck (is e2fsprogs installed?)");
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
	struct stat st;
	if (stat(path, &st) < 0)
		return errmsg(err, n, "--ro %s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (cached_image(path, d->image, sizeof d->image, err, n))
			return -1;
	} else {
		snprintf(d->image, sizeof d->image, "%s", path);
		if (check_ext2(path, err, n))
			return -1;
	}
	if (open_image(d, 1, err, n))
		return -1;
	ds->n++;
	return 0;
}

int disks_add_system(struct disks *ds, const char *image, char *err, size_t n)
{
	struct disk *d = next_disk(ds, err, n);
	if (!d)
		return -1;
	snprintf(d->mount, sizeof d->mount, "/usr");
	snprintf(d->image, sizeof d->image, "%s", image);
	if (open_image(d, 1, err, n))
		return -1;
	ds->n++;
	return 0;
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		*p = '/';
		if (r < 0 && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int disks_add_workdir(struct disks *ds, const char *dir, uint64_t size, char *err, size_t n)
{
	struct disk *d = next_disk(ds, err, n);
	if (!d)
		return -1;
	snprintf(ds->workdir_path, sizeof ds->workdir_path, "%s", dir);
	struct stat st;
	if (mkdir_p(ds->workdir_path) < 0 || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return errmsg(err, n, "workdir %s: %s", dir, errno ? strerror(errno) : "not a directory");
	struct tree_sum t;
	if (summarize(dir, &t, err, n))
		return -1;
	if (t.bytes + t.entries * 4096 + (8ull << 20) > size)
		return errmsg(err, n, "workdir %s holds more than the %llu MiB disk (--disk)", dir,
			    (unsigned long long)(size >> 20));
	const char *tmpdir = getenv("TMPDIR");
	snprintf(d->image, sizeof d->image, "%s/husk-workdir-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkstemp(d->image);
	if (fd < 0)
		return errmsg(err, n, "cannot create the workdir image: %s", strerror(errno));
	close(fd);
	d->temporary = 1;
	snprintf(d->mount, sizeof d->mount, "/workdir");
	ds->workdir = ds->n++;
	uint64_t inodes = size / 8192 > t.entries + 1024 ? size / 8192 : t.entries + 1024;
	if (make_ext2(dir, d->image, size, inodes, err, n) || open_image(d, 0, err, n))
		return -1;
	return 0;
}

void disks_release(struct disks *ds)
{
	for (int i = 0; i < ds->n; i++) {
		if (ds->d[i].fd >= 0)
			close(ds->d[i].fd);
		if (ds->d[i].temporary)
			unlink(ds->d[i].image);
	}
	ds->n = 0;
}
