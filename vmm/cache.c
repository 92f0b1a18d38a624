/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cache.h"
#include "snapshot/snapshot.h"
#include "debian/debian.h"
#include "disks/copyin.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "options.h"

#define LEFTOVER_AGE (24 * 3600) /* a temporary older than this was left by a husk that died */

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

uint64_t cache_max(void)
{
	const char *s = getenv("HUSK_CACHE_MAX");
	return s && *s ? parse_bytes("HUSK_CACHE_MAX", s, 0, 1ull << 50) : CACHE_MAX_DEFAULT;
}

void cache_touch(int cache, const char *name)
{
	utimensat(cache, name, NULL, AT_SYMLINK_NOFOLLOW);
}

/* ---- listing ---------------------------------------------------------------- */

struct list {
	struct cache_entry *e;
	size_t n, cap;
	int fail;
};

static struct cache_entry *add(struct list *l, const char *kind, const char *name, uint64_t bytes, int64_t used)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct cache_entry *e = realloc(l->e, cap * sizeof *e);
		if (!e) {
			l->fail = 1;
			return NULL;
		}
		l->e = e, l->cap = cap;
	}
	struct cache_entry *e = &l->e[l->n++];
	snprintf(e->kind, sizeof e->kind, "%s", kind);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->bytes = bytes, e->used = used;
	return e;
}

static uint64_t tree_bytes; /* nftw's sum (the cache is listed by one thread) */

static int sum_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)path, (void)type, (void)f;
	tree_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

static uint64_t bytes_under(int dir, const char *name)
{
	char path[64];
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	tree_bytes = 0;
	nftw(path, sum_one, 16, FTW_PHYS | FTW_MOUNT);
	close(fd);
	return tree_bytes;
}

/* The entries of one directory of the cache (prefix: "" or "images/"...). */
static void list_dir(struct list *l, int dir, const char *prefix, int64_t now)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		const char *s = de->d_name;
		struct stat st;
		char name[320];
		if (!strcmp(s, ".") || !strcmp(s, "..") || fstatat(dir, s, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(name, sizeof name, "%s%s", prefix, s);
		int64_t used = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		size_t len = strlen(s);
		if (s[0] == '.') { /* a temporary, or an image being removed */
			if (now - st.st_mtim.tv_sec > LEFTOVER_AGE || !strncmp(s, ".rm-", 4))
				add(l, "leftover", name, S_ISDIR(st.st_mode) ? bytes_under(dir, s) : (uint64_t)st.st_blocks * 512, used);
		} else if (!*prefix && S_ISREG(st.st_mode) && !strncmp(s, "ro-", 3) && len > 7 &&
			   !strcmp(s + len - 4, ".img")) {
			char map[NAME_MAX + 1];
			struct stat ms;
			snprintf(map, sizeof map, "%.*s.map", (int)(len - 4), s);
			uint64_t bytes = (uint64_t)st.st_blocks * 512;
			if (!fstatat(dir, map, &ms, AT_SYMLINK_NOFOLLOW)) {
				bytes += (uint64_t)ms.st_blocks * 512;
				used = (int64_t)ms.st_mtim.tv_sec * 1000000000 + ms.st_mtim.tv_nsec; /* a run touches the map */
			}
			name[strlen(name) - 4] = 0;
			add(l, "dataset", name, bytes, used);
		} else if (!*prefix && S_ISREG(st.st_mode) && !strncmp(s, "ro-", 3) && len > 7 &&
			   !strcmp(s + len - 4, ".map")) {
			char img[NAME_MAX + 1];
			snprintf(img, sizeof img, "%.*s.img", (int)(len - 4), s);
			if (faccessat(dir, img, F_OK, AT_SYMLINK_NOFOLLOW)) /* a map whose image went */
				add(l, "leftover", name, (uint64_t)st.st_blocks * 512, used);
		} else if (!strcmp(prefix, "images/") && S_ISDIR(st.st_mode)) {
			add(l, "image", name, bytes_under(dir, s), used);
		} else if (!strcmp(prefix, "debs/") && S_ISREG(st.st_mode)) {
			add(l, "package", name, (uint64_t)st.st_blocks * 512, used);
		} else if (!strcmp(prefix, "snapshots/") && S_ISREG(st.st_mode) && len > 5 && !strcmp(s + len - 5, ".snap")) {
			/* its .lock's mtime is when a run last used it (the file's own
			 * times are in its stamp: vmm/snapshot/snapshot_file.h) */
			char lock[NAME_MAX + 8];
			struct stat ls;
			snprintf(lock, sizeof lock, "%s.lock", s);
			if (!fstatat(dir, lock, &ls, AT_SYMLINK_NOFOLLOW))
				used = (int64_t)ls.st_mtim.tv_sec * 1000000000 + ls.st_mtim.tv_nsec;
			add(l, "snapshot", name, (uint64_t)st.st_blocks * 512, used);
		}
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

static int by_use(const void *a, const void *b)
{
	int64_t x = ((const struct cache_entry *)a)->used, y = ((const struct cache_entry *)b)->used;
	return x < y ? -1 : x > y;
}

int cache_list(struct cache_entry **e, size_t *n, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int cache = cache_open(NULL, path, sizeof path, err, errlen);
	if (cache < 0)
		return -1;
	struct list l = { 0 };
	int64_t now = time(NULL);
	list_dir(&l, cache, "", now);
	const char *subs[] = { "images", "debs", "snapshots" };
	for (int i = 0; i < 3; i++) {
		char prefix[16];
		int sub = openat(cache, subs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		snprintf(prefix, sizeof prefix, "%s/", subs[i]);
		if (sub >= 0) {
			list_dir(&l, sub, prefix, now);
			close(sub);
		}
	}
	close(cache);
	if (l.fail) {
		free(l.e);
		return errmsg(err, errlen, "husk's cache: out of memory");
	}
	qsort(l.e, l.n, sizeof *l.e, by_use);
	*e = l.e, *n = l.n;
	return 0;
}

/* ---- removing -------------------------------------------------------------- */

int cache_remove(int cache, const struct cache_entry *e)
{
	char name[340];
	if (!strcmp(e->kind, "dataset")) {
		snprintf(name, sizeof name, "%s.map", e->name); /* the map first: an image is used only with its map */
		if (unlinkat(cache, name, 0) && errno != ENOENT)
			return -1;
		snprintf(name, sizeof name, "%s.img", e->name);
		return unlinkat(cache, name, 0) && errno != ENOENT ? -1 : 0;
	}
	if (!strcmp(e->kind, "snapshot")) /* with its stamp, working set and lock */
		return snapshot_remove(cache, e->name) && errno != ENOENT ? -1 : 0;
	struct stat st;
	if (fstatat(cache, e->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(cache, e->name, 0) && errno != ENOENT ? -1 : 0;
	/* a directory: renamed away first (a run starting now sees it gone, or
	 * whole), then removed by its path, never following a link */
	const char *slash = strrchr(e->name, '/'), *base = slash ? slash + 1 : e->name;
	char what[400], proc[40], real[PATH_MAX + 400];
	if (strncmp(base, ".rm-", 4)) {
		snprintf(what, sizeof what, "%.*s.rm-%s-%d", (int)(base - e->name), e->name, base, (int)getpid());
		if (renameat(cache, e->name, cache, what))
			return -1;
	} else {
		snprintf(what, sizeof what, "%s", e->name);
	}
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", cache);
	ssize_t k = readlink(proc, real, PATH_MAX - 1);
	if (k <= 0)
		return -1;
	snprintf(real + k, sizeof real - (size_t)k, "/%s", what);
	remove_tree(real);
	return 0;
}

void cache_trim(const char *keep)
{
	char err[512], path[PATH_MAX];
	struct cache_entry *e;
	size_t n;
	uint64_t max = cache_max(), total = 0;
	if (cache_list(&e, &n, err, sizeof err))
		return;
	for (size_t i = 0; i < n; i++)
		total += e[i].bytes;
	int cache = total > max ? cache_open(NULL, path, sizeof path, err, sizeof err) : -1;
	for (size_t i = 0; cache >= 0 && i < n && total > max; i++) {
		if (keep && !strcmp(e[i].name, keep))
			continue;
		if (cache_remove(cache, &e[i]) == 0)
			total -= e[i].bytes;
	}
	if (cache >= 0)
		close(cache);
	free(e);
}

/* ---- husk cache ls | clear ---------------------------------------------------- */

static void show_bytes(char *buf, size_t n, uint64_t b)
{
	if (b >= 10ull << 30)
		snprintf(buf, n, "%.1fG", b / 1073741824.0);
	else if (b >= 10ull << 20)
		snprintf(buf, n, "%.0fM", b / 1048576.0);
	else
		snprintf(buf, n, "%.0fK", b / 1024.0);
}

static int kind_ok(const char *k)
{
	return !strcmp(k, "dataset") || !strcmp(k, "image") || !strcmp(k, "package") || !strcmp(k, "snapshot") ||
	       !strcmp(k, "leftover");
}

int cache_command(int argc, char **argv)
{
	int ls = argc >= 3 && !strcmp(argv[2], "ls"), clear = argc >= 3 && !strcmp(argv[2], "clear");
	if (!ls && !clear)
		usage_error("usage: husk cache ls | husk cache clear [dataset|image|package|snapshot|leftover...]");
	if (ls && argc > 3)
		usage_error("'husk cache ls' takes no arguments (got '%s')", argv[3]);
	for (int i = 3; i < argc; i++)
		if (!kind_ok(argv[i]))
			usage_error("unknown kind '%s' (expected dataset, image, package, snapshot or leftover)", argv[i]);
	char err[PATH_MAX + 256], path[PATH_MAX], size[32];
	struct cache_entry *e;
	size_t n;
	uint64_t max = cache_max(), total = 0;
	if (cache_list(&e, &n, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	int cache = cache_open(NULL, path, sizeof path, err, sizeof err);
	if (cache < 0)
		die(EXIT_USAGE, "%s", err);
	int status = 0;
	size_t kept = 0;
	if (ls && n)
		printf("%-9s %8s  %-19s  %s\n", "KIND", "SIZE", "LAST USED", "NAME");
	for (size_t i = 0; i < n; i++) {
		int chosen = argc == 3;
		for (int k = 3; k < argc; k++)
			chosen |= !strcmp(argv[k], e[i].kind);
		if (clear && chosen) {
			if (cache_remove(cache, &e[i])) {
				fprintf(stderr, "husk: cannot remove %s/%s: %s\n", path, e[i].name, strerror(errno));
				status = EXIT_INTERNAL;
			}
			continue;
		}
		total += e[i].bytes;
		kept++;
		if (ls) {
			char when[32];
			time_t t = (time_t)(e[i].used / 1000000000);
			strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&t));
			show_bytes(size, sizeof size, e[i].bytes);
			printf("%-9s %8s  %-19s  %s\n", e[i].kind, size, when, e[i].name);
		}
	}
	char cap[32];
	show_bytes(size, sizeof size, total);
	show_bytes(cap, sizeof cap, max);
	printf("%s: %s in %zu entries, cap %s (HUSK_CACHE_MAX)\n", path, size, kept, cap);
	close(cache);
	free(e);
	return status;
}
