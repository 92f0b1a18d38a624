/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cache.h"
#include "disks/copyin.h"
#include "errmsg.h"
#include "progress.h"
#include "disks/dataset.h"
#include "disks/disks.h"
#include "disks/mapped.h"

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
	d->fd = d->top_fd = -1;
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

uint64_t disks_ro_image_bytes(uint64_t bytes, uint64_t entries)
{
	uint64_t b = bytes + entries * 4096 + (16ull << 20);
	return (b + b / 8) & ~4095ull;
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
	int r = dataset_attach(d, dfd, path, err, n);
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

/* The workdir's image: a temporary sparse file (deleted after the run) of
 * the tree's metadata under ds->workdir_fd, its record in
 * ds->workdir_record; its data blocks map to the host files, read from
 * there until the guest writes them.  The dirty bits are shared memory:
 * the write-back helper, forked before the run, reads them after it. */
static int workdir_image(struct disks *ds, struct disk *d, uint64_t size, uint64_t entries, char *err, size_t n)
{
	const char *tmpdir = getenv("TMPDIR");
	snprintf(d->image, sizeof d->image, "%s/husk-workdir-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkostemp(d->image, O_CLOEXEC);
	if (fd < 0)
		return errmsg(err, n, "cannot create the workdir image: %s", strerror(errno));
	uint64_t inodes = size / 8192 > entries + 1024 ? size / 8192 : entries + 1024;
	char why[1024];
	d->dirty_bytes = mapped_dirty_bytes(size);
	d->dirty = mmap(NULL, d->dirty_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (d->dirty == MAP_FAILED) {
		d->dirty = NULL;
		snprintf(why, sizeof why, "cannot map its dirty blocks' bits: %s", strerror(errno));
	} else if (copyin_build_mapped(ds->workdir_fd, fd, size, inodes, &ds->workdir_record, &d->map, why, sizeof why))
		; /* why says why */
	else if ((d->top_fd = fcntl(ds->workdir_fd, F_DUPFD_CLOEXEC, 0)) < 0)
		snprintf(why, sizeof why, "%s", strerror(errno));
	if (d->top_fd < 0) {
		close(fd);
		unlink(d->image);
		return errmsg(err, n, "workdir %s: %s", ds->workdir_path, why);
	}
	d->mapped = 1;
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
	char label[PATH_MAX + 16];
	snprintf(label, sizeof label, "workdir %s", dir);
	progress_begin(label);
	int r = copyin_measure(ds->workdir_fd, &bytes, &entries, NULL, why, sizeof why);
	if (r)
		errmsg(err, n, "workdir %s: %s", dir, why);
	else if (bytes + entries * 4096 + (8ull << 20) > size)
		r = errmsg(err, n, "workdir %s holds more than the %llu MiB disk (--disk)", dir,
			   (unsigned long long)(size >> 20));
	else
		r = workdir_image(ds, d, size, entries, err, n);
	progress_end();
	return r;
}

void disks_release(struct disks *ds)
{
	for (int i = 0; i < ds->n; i++) {
		if (ds->d[i].fd >= 0)
			close(ds->d[i].fd);
		if (ds->d[i].temporary)
			unlink(ds->d[i].image);
		if (ds->d[i].top_fd >= 0)
			close(ds->d[i].top_fd);
		copyin_map_free(&ds->d[i].map);
		if (ds->d[i].dirty)
			munmap(ds->d[i].dirty, ds->d[i].dirty_bytes);
	}
	if (ds->workdir_fd >= 0)
		close(ds->workdir_fd);
	if (ds->workdir >= 0)
		copyin_record_free(&ds->workdir_record);
	ds->workdir_fd = ds->workdir = -1;
	ds->n = 0;
}
