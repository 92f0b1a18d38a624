/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's ext2 driver (guest/fs/ext2.c) on RAM copies of images made
 * by mke2fs, checked against the source files, e2fsck -fn and debugfs; and
 * on corrupt images, where it must fail cleanly. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ext2.h"
#include "tap.h"

/* ---- the environment the driver expects ------------------------------- */

static bool alloc_fail; /* fs_alloc fails while set */

void *fs_alloc(size_t size)
{
	return alloc_fail ? NULL : calloc(1, size ? size : 1);
}

void fs_free(void *p, size_t size)
{
	(void)size;
	free(p);
}

static int64_t fixed_now(void)
{
	return 1700000000;
}

/* ---- a RAM block device ---------------------------------------------- */

struct ram {
	uint8_t *data;
	uint64_t size;
	long reads, writes, flushes, oob;
	struct blockdev bd;
};

static int ram_read(void *ctx, uint64_t sector, void *buf, uint32_t count)
{
	struct ram *r = ctx;
	if (sector > r->size / 512 || count > r->size / 512 - sector) {
		r->oob++;
		return -EIO;
	}
	memcpy(buf, r->data + sector * 512, (size_t)count * 512);
	r->reads++;
	return 0;
}

static int ram_write(void *ctx, uint64_t sector, const void *buf, uint32_t count)
{
	struct ram *r = ctx;
	if (r->bd.read_only)
		return -EROFS;
	if (sector > r->size / 512 || count > r->size / 512 - sector) {
		r->oob++;
		return -EIO;
	}
	memcpy(r->data + sector * 512, buf, (size_t)count * 512);
	r->writes++;
	return 0;
}

static int ram_flush(void *ctx)
{
	((struct ram *)ctx)->flushes++;
	return 0;
}

static struct ram *ram_new(const void *data, uint64_t size)
{
	struct ram *r = calloc(1, sizeof *r);
	r->data = malloc(size ? size : 1);
	memcpy(r->data, data, size);
	r->size = size;
	r->bd = (struct blockdev){ r, size / 512, 0, ram_read, ram_write, ram_flush };
	return r;
}

static struct ram *ram_load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n);
	if (fread(buf, 1, n, f) != (size_t)n)
		n = 0;
	fclose(f);
	struct ram *r = ram_new(buf, n);
	free(buf);
	return r;
}

/* Writes the image sparsely: all-zero 4 KiB pieces stay holes. */
static void ram_save(const struct ram *r, const char *path)
{
	static const uint8_t zero[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)r->size)) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return;
	}
	for (uint64_t off = 0; off < r->size; off += sizeof zero) {
		size_t n = r->size - off < sizeof zero ? r->size - off : sizeof zero;
		if (memcmp(r->data + off, zero, n) && pwrite(fd, r->data + off, n, (off_t)off) != (ssize_t)n)
			perror(path);
	}
	close(fd);
}

static void ram_free(struct ram *r)
{
	free(r->data);
	free(r);
}

static void ram_count_reset(struct ram *r)
{
	r->reads = r->writes = r->flushes = 0;
}

/* ---- host helpers ------------------------------------------------------ */

static char tmp[256];

/* Declares char var[] holding tmp/name. */
#define TMP_PATH(var, name) \
	char var[384]; \
	snprintf(var, sizeof var, "%s/%s", tmp, name)

/* Runs a shell command (e2fsprogs live in sbin); returns its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(cmd, sizeof cmd, "PATH=/usr/sbin:/sbin:$PATH; ");
	vsnprintf(cmd + n, sizeof cmd - n, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int mkfs(const char *img, int bs, unsigned kb, const char *dir)
{
	return sh("mke2fs -q -t ext2 -b %d %s%s -F %s %uk >/dev/null 2>&1", bs, dir ? "-d " : "", dir ? dir : "",
		  img, kb);
}

/* e2fsck -fn: 0 when it finds nothing wrong; the log is shown otherwise. */
static int fsck(const char *img)
{
	int st = sh("e2fsck -fn %s >%s/fsck.log 2>&1", img, tmp);
	if (st)
		sh("sed 's/^/# /' %s/fsck.log | head -40", tmp);
	return st;
}

static bool debugfs_cat_is(const char *img, const char *file, const void *want, size_t len)
{
	TMP_PATH(out, "cat.out");
	if (sh("debugfs -R 'cat %s' %s >%s 2>/dev/null", file, img, out))
		return false;
	struct ram *r = ram_load(out);
	bool same = r && r->size == len && memcmp(r->data, want, len) == 0;
	if (r)
		ram_free(r);
	return same;
}

/* A number debugfs prints after `key` for command cmd, or 0. */
static uint32_t debugfs_num(const char *img, const char *cmd, const char *key)
{
	char line[4096], full[1024];
	snprintf(full, sizeof full, "PATH=/usr/sbin:/sbin:$PATH; debugfs -R '%s' %s 2>/dev/null", cmd, img);
	FILE *p = popen(full, "r");
	uint32_t v = 0;
	while (p && fgets(line, sizeof line, p)) {
		char *k = strstr(line, key);
		if (k && !v)
			v = (uint32_t)strtoul(k + strlen(key), NULL, 0);
	}
	if (p)
		pclose(p);
	return v;
}

static void write_host_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		perror(path);
	close(fd);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull; /* EXT2_SEED=n changes it */

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void fill_pattern(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 2654435761u + seed) >> 13);
}

/* ---- driver helpers ------------------------------------------------------ */

static uint32_t lookup_path(struct ext2_fs *fs, const char *path)
{
	uint32_t ino = EXT2_ROOT_INO;
	while (*path) {
		while (*path == '/')
			path++;
		size_t n = strcspn(path, "/");
		if (n == 0)
			break;
		if (ext2_lookup(fs, ino, path, n, &ino))
			return 0;
		path += n;
	}
	return ino;
}

/* Reads a whole file through chunks of `chunk` bytes; malloc'd, or NULL. */
static uint8_t *read_all(struct ext2_fs *fs, uint32_t ino, size_t chunk, uint64_t *len)
{
	struct ext2_stat st;
	if (ext2_stat(fs, ino, &st))
		return NULL;
	uint8_t *buf = malloc(st.size + 1);
	uint64_t off = 0;
	for (;;) {
		long n = ext2_read(fs, ino, off, buf + off, chunk);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		off += n;
	}
	*len = off;
	return buf;
}

static bool file_is(struct ext2_fs *fs, const char *path, const void *want, size_t len, size_t chunk)
{
	uint32_t ino = lookup_path(fs, path);
	uint64_t got = 0;
	uint8_t *buf = ino ? read_all(fs, ino, chunk, &got) : NULL;
	bool same = buf && got == len && memcmp(buf, want, len) == 0;
	free(buf);
	return same;
}

static int count_entries(struct ext2_fs *fs, uint32_t dir)
{
	uint64_t pos = 0;
	struct ext2_dirent de;
	int n = 0, r;
	while ((r = ext2_readdir(fs, dir, &pos, &de)) == 1)
		n++;
	return r < 0 ? r : n;
}

static bool has_entry(struct ext2_fs *fs, uint32_t dir, const char *name, uint8_t type)
{
	uint64_t pos = 0;
	struct ext2_dirent de;
	while (ext2_readdir(fs, dir, &pos, &de) == 1)
		if (strcmp(de.name, name) == 0 && de.name_len == strlen(name))
			return de.type == type;
	return false;
}

static uint32_t nlink_of(struct ext2_fs *fs, uint32_t ino)
{
	struct ext2_stat st;
	return ext2_stat(fs, ino, &st) ? 0 : st.nlink;
}

static int create(struct ext2_fs *fs, uint32_t dir, const char *name, uint32_t mode, uint32_t *ino)
{
	return ext2_create(fs, dir, name, strlen(name), mode, ino);
}

static long write_str(struct ext2_fs *fs, uint32_t ino, uint64_t off, const char *s)
{
	return ext2_write(fs, ino, off, s, strlen(s));
}

static struct ext2_fs *mount_ok(struct ram *r, int ro)
{
	struct ext2_fs *fs = NULL;
	int e = ext2_mount(&fs, &r->bd, ro);
	if (e) {
		ok(0, "mount (%d)", e);
		return NULL;
	}
	ext2_set_clock(fs, fixed_now);
	return fs;
}

/* ---- prefilled images, read-only ----------------------------------------- */

#define BIG_LEN (300 * 1024 + 123)
#define SPARSE_HOLE (1u << 20)
#define NMANY 300

static uint8_t big[BIG_LEN], sparse_data[SPARSE_HOLE + 4096 + 100];
static const char long_target[] = "a/rather/long/symlink/target/that/does/not/fit/in/the/inode/itself/"
				  "so/it/needs/a/block/of/its/own/0123456789";

static void make_source_tree(const char *src)
{
	char p[1024];
	sh("rm -rf %s && mkdir -p %s/sub/nested %s/many %s/emptydir", src, src, src, src);
	snprintf(p, sizeof p, "%s/hello.txt", src);
	write_host_file(p, "hello, world\n", 13);
	snprintf(p, sizeof p, "%s/empty", src);
	write_host_file(p, "", 0);
	fill_pattern(big, sizeof big, 7);
	snprintf(p, sizeof p, "%s/big.bin", src);
	write_host_file(p, big, sizeof big);
	memset(sparse_data, 0, sizeof sparse_data);
	fill_pattern(sparse_data, 4096, 1);
	fill_pattern(sparse_data + SPARSE_HOLE + 4096, 100, 2);
	snprintf(p, sizeof p, "%s/sparse.bin", src);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (pwrite(fd, sparse_data, 4096, 0) != 4096 ||
	    pwrite(fd, sparse_data + SPARSE_HOLE + 4096, 100, SPARSE_HOLE + 4096) != 100)
		perror("sparse");
	close(fd);
	snprintf(p, sizeof p, "%s/sub/nested/deep.txt", src);
	write_host_file(p, "deep\n", 5);
	for (int i = 0; i < NMANY; i++) {
		char c[32];
		snprintf(p, sizeof p, "%s/many/file-with-a-longish-name-%03d", src, i);
		int n = snprintf(c, sizeof c, "content %d\n", i);
		write_host_file(p, c, n);
	}
	snprintf(p, sizeof p, "%s/link_short", src);
	if (symlink("hello.txt", p))
		perror(p);
	snprintf(p, sizeof p, "%s/link_long", src);
	if (symlink(long_target, p))
		perror(p);
	char q[1024];
	snprintf(p, sizeof p, "%s/hello.txt", src);
	snprintf(q, sizeof q, "%s/hardlink.txt", src);
	if (link(p, q))
		perror(q);
}

static void check_ro_refusals(struct ext2_fs *fs)
{
	uint32_t ino = lookup_path(fs, "/hello.txt"), x;
	int bad = 0;
	bad += create(fs, EXT2_ROOT_INO, "new", EXT2_S_IFREG | 0644, &x) != -EROFS;
	bad += create(fs, EXT2_ROOT_INO, "newdir", EXT2_S_IFDIR | 0755, &x) != -EROFS;
	bad += ext2_write(fs, ino, 0, "x", 1) != -EROFS;
	bad += ext2_truncate(fs, ino, 0) != -EROFS;
	bad += ext2_unlink(fs, EXT2_ROOT_INO, "hello.txt", 9) != -EROFS;
	bad += ext2_rmdir(fs, EXT2_ROOT_INO, "emptydir", 8) != -EROFS;
	bad += ext2_rename(fs, EXT2_ROOT_INO, "hello.txt", 9, EXT2_ROOT_INO, "h2", 2) != -EROFS;
	bad += ext2_symlink(fs, EXT2_ROOT_INO, "sl", 2, "t", 1, &x) != -EROFS;
	bad += ext2_link(fs, EXT2_ROOT_INO, "hl", 2, ino) != -EROFS;
	bad += ext2_set_times(fs, ino, 1, 2) != -EROFS;
	bad += ext2_chmod(fs, ino, 0600) != -EROFS;
	ok(bad == 0, "read-only mount: every change is -EROFS (%d wrong)", bad);
}

static void check_many_dir(struct ext2_fs *fs)
{
	uint32_t dir = lookup_path(fs, "/many");
	static char seen[NMANY];
	memset(seen, 0, sizeof seen);
	uint64_t pos = 0;
	struct ext2_dirent de;
	int n = 0, bad = 0, dots = 0;
	while (ext2_readdir(fs, dir, &pos, &de) == 1) {
		int i;
		n++;
		if (!strcmp(de.name, ".") || !strcmp(de.name, "..")) {
			dots++;
			continue;
		}
		if (sscanf(de.name, "file-with-a-longish-name-%d", &i) != 1 || i < 0 || i >= NMANY || seen[i]++ ||
		    de.type != EXT2_DT_REG)
			bad++;
	}
	ok(n == NMANY + 2 && dots == 2 && bad == 0, "many/: %d entries listed once each (%d bad)", n, bad);
	bad = 0;
	for (int i = 0; i < NMANY; i += 7) {
		char p[64], c[32];
		snprintf(p, sizeof p, "/many/file-with-a-longish-name-%03d", i);
		int len = snprintf(c, sizeof c, "content %d\n", i);
		bad += !file_is(fs, p, c, len, 4096);
	}
	ok(bad == 0, "many/: contents");
}

/* many/'s 300 small files read whole, each pass on a fresh read-only mount:
 * in the directory's order (the order they were laid out in) and
 * backwards; right both ways, and in order with fewer device reads (a
 * read-only disk's window is of disk blocks, whatever the file). */
static void check_many_in_order(struct ram *r, int bs)
{
	static int order[NMANY];
	unsigned long long reads[2];
	int n = 0, bad = 0;
	for (int pass = 0; pass < 2; pass++) {
		struct ext2_fs *fs = mount_ok(r, 1);
		if (!fs)
			return;
		uint32_t dir = lookup_path(fs, "/many");
		uint64_t pos = 0;
		struct ext2_dirent de;
		if (!pass)
			while (ext2_readdir(fs, dir, &pos, &de) == 1 && n < NMANY)
				n += sscanf(de.name, "file-with-a-longish-name-%d", &order[n]) == 1;
		ram_count_reset(r);
		for (int k = 0; k < n; k++) {
			int i = order[pass ? n - 1 - k : k];
			char p[64], c[32];
			snprintf(p, sizeof p, "/many/file-with-a-longish-name-%03d", i);
			int len = snprintf(c, sizeof c, "content %d\n", i);
			bad += !file_is(fs, p, c, len, 4096);
		}
		reads[pass] = r->reads;
		ext2_unmount(fs);
	}
	ok(n == NMANY && bad == 0, "[%d] many/'s %d files read right in the directory's order and backwards", bs, n);
	ok(reads[0] < reads[1], "[%d] in order with fewer device reads (%llu, backwards %llu)", bs, reads[0], reads[1]);
}

static void test_prefilled(int bs)
{
	TMP_PATH(src, "src");
	TMP_PATH(img, "pre.img");
	make_source_tree(src);
	ok(mkfs(img, bs, 8192, src) == 0, "[%d] mke2fs -d", bs);
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 1);
	if (!fs)
		return;
	ok(file_is(fs, "/hello.txt", "hello, world\n", 13, 100), "[%d] hello.txt", bs);
	ok(file_is(fs, "/empty", "", 0, 100), "[%d] empty file", bs);
	ok(file_is(fs, "/big.bin", big, sizeof big, 1 << 20), "[%d] big.bin (indirect blocks) in one read", bs);
	ok(file_is(fs, "/big.bin", big, sizeof big, 1000), "[%d] big.bin in 1000-byte reads", bs);
	ok(file_is(fs, "/sparse.bin", sparse_data, sizeof sparse_data, 65536), "[%d] sparse file, holes as zeros", bs);
	ok(file_is(fs, "/sub/nested/deep.txt", "deep\n", 5, 3), "[%d] nested file", bs);

	uint8_t buf[256];
	uint32_t big_ino = lookup_path(fs, "/big.bin");
	long n = ext2_read(fs, big_ino, sizeof big - 10, buf, sizeof buf);
	ok(n == 10 && !memcmp(buf, big + sizeof big - 10, 10), "[%d] read across EOF is short (%ld)", bs, n);
	ok(ext2_read(fs, big_ino, sizeof big + 5, buf, 10) == 0, "[%d] read past EOF is 0", bs);

	struct ext2_stat st;
	ok(ext2_stat(fs, lookup_path(fs, "/sparse.bin"), &st) == 0 && st.size == sizeof sparse_data &&
	   st.blocks * 512 < 64 * 1024, "[%d] sparse.bin: size %llu, %llu sectors", bs,
	   (unsigned long long)st.size, (unsigned long long)st.blocks);
	uint32_t h = lookup_path(fs, "/hello.txt");
	ok(h && h == lookup_path(fs, "/hardlink.txt") && nlink_of(fs, h) == 2, "[%d] hard link: same inode, nlink 2",
	   bs);
	ok(ext2_stat(fs, h, &st) == 0 && (st.mode & EXT2_S_IFMT) == EXT2_S_IFREG && (st.mode & 0777) == 0644,
	   "[%d] stat mode %o", bs, st.mode);

	char lbuf[300];
	long ln = ext2_readlink(fs, lookup_path(fs, "/link_short"), lbuf, sizeof lbuf);
	ok(ln == 9 && !memcmp(lbuf, "hello.txt", 9), "[%d] fast symlink", bs);
	ln = ext2_readlink(fs, lookup_path(fs, "/link_long"), lbuf, sizeof lbuf);
	ok(ln == (long)strlen(long_target) && !memcmp(lbuf, long_target, ln), "[%d] slow symlink", bs);
	ok(ext2_readlink(fs, h, lbuf, sizeof lbuf) == -EINVAL, "[%d] readlink of a file: -EINVAL", bs);

	int nroot = count_entries(fs, EXT2_ROOT_INO);
	ok(nroot == 13, "[%d] root lists 13 entries (%d)", bs, nroot);
	ok(has_entry(fs, EXT2_ROOT_INO, "sub", EXT2_DT_DIR) && has_entry(fs, EXT2_ROOT_INO, "link_long", EXT2_DT_LNK) &&
	   has_entry(fs, EXT2_ROOT_INO, "hello.txt", EXT2_DT_REG) && has_entry(fs, EXT2_ROOT_INO, "lost+found", EXT2_DT_DIR),
	   "[%d] entry types", bs);
	check_many_dir(fs);

	uint32_t x;
	ok(ext2_lookup(fs, EXT2_ROOT_INO, "nope", 4, &x) == -ENOENT, "[%d] lookup missing: -ENOENT", bs);
	ok(ext2_lookup(fs, h, "x", 1, &x) == -ENOTDIR, "[%d] lookup in a file: -ENOTDIR", bs);
	ok(ext2_read(fs, EXT2_ROOT_INO, 0, buf, 10) == -EISDIR, "[%d] read a directory: -EISDIR", bs);
	ok(ext2_lookup(fs, EXT2_ROOT_INO, "..", 2, &x) == 0 && x == EXT2_ROOT_INO, "[%d] /.. is /", bs);
	check_ro_refusals(fs);
	ok(ext2_unmount(fs) == 0 && r->writes == 0 && r->oob == 0, "[%d] read-only unmount; nothing written", bs);
	check_many_in_order(r, bs);
	ram_free(r);
}

/* ---- read-write ---------------------------------------------------------- */

/* Random writes, truncates and reads on one file against a shadow copy. */
static void test_random_io(struct ext2_fs *fs, int bs)
{
	size_t cap = bs == 1024 ? 700 * 1024 : 6 << 20;
	uint8_t *shadow = calloc(1, cap), *buf = malloc(cap), *got = malloc(cap);
	uint64_t size = 0;
	uint32_t ino;
	ok(create(fs, EXT2_ROOT_INO, "rand.bin", 0644, &ino) == 0, "[%d] create rand.bin", bs);
	int bad_w = 0, bad_r = 0, bad_t = 0, reads = 0;
	for (int op = 0; op < 600; op++) {
		uint64_t k = rnd() % 10, off = rnd() % cap, len;
		static const size_t sizes[] = { 1, 7, 511, 512, 1023, 1024, 1025, 4095, 4096, 4097, 12288, 65536 };
		if (rnd() % 3 == 0)
			off -= off % bs;
		len = rnd() % 2 ? sizes[rnd() % 12] : rnd() % 70000;
		if (off + len > cap)
			len = cap - off;
		if (k < 6) {
			fill_random(buf, len);
			long n = ext2_write(fs, ino, off, buf, len);
			bad_w += n != (long)len;
			memcpy(shadow + off, buf, len);
			if (off + len > size)
				size = off + len;
		} else if (k == 6) {
			uint64_t ns = rnd() % 2 ? rnd() % (size + 1) : rnd() % cap;
			bad_t += ext2_truncate(fs, ino, ns) != 0;
			if (ns < size)
				memset(shadow + ns, 0, size - ns);
			size = ns;
		} else {
			long n = ext2_read(fs, ino, off, got, len);
			long want = off >= size ? 0 : (long)(off + len > size ? size - off : len);
			bad_r += n != want || memcmp(got, shadow + off, want > 0 ? want : 0);
			reads++;
		}
	}
	ok(bad_w == 0 && bad_t == 0, "[%d] 600 random writes/truncates (%d, %d failed)", bs, bad_w, bad_t);
	ok(bad_r == 0, "[%d] %d random reads match the shadow copy (%d bad)", bs, reads, bad_r);
	struct ext2_stat st;
	ok(ext2_stat(fs, ino, &st) == 0 && st.size == size, "[%d] size %llu", bs, (unsigned long long)size);
	long n = ext2_read(fs, ino, 0, got, cap);
	ok(n == (long)size && !memcmp(got, shadow, size), "[%d] whole file matches", bs);
	/* keep the final contents for debugfs */
	TMP_PATH(f, "rand.expect");
	write_host_file(f, shadow, size);
	free(shadow), free(buf), free(got);
}

/* A write far out (triple indirect at 1 KiB blocks), holes around it. */
static void test_far_write(struct ext2_fs *fs, int bs)
{
	uint64_t far = bs == 1024 ? 100ull << 20 : 5ull << 30;
	uint32_t ino;
	uint64_t free0 = ext2_free_bytes(fs);
	ok(create(fs, EXT2_ROOT_INO, "far.bin", 0644, &ino) == 0, "[%d] create far.bin", bs);
	ok(ext2_write(fs, ino, far, "0123456789", 10) == 10, "[%d] write at %llu", bs, (unsigned long long)far);
	uint8_t buf[8192];
	struct ext2_stat st;
	ok(ext2_stat(fs, ino, &st) == 0 && st.size == far + 10, "[%d] far size", bs);
	ok(ext2_read(fs, ino, far - 4096, buf, 8192) == 4096 + 10 && !memcmp(buf + 4096, "0123456789", 10),
	   "[%d] read back far data", bs);
	int zeros = 1;
	for (int i = 0; i < 4096; i++)
		zeros &= buf[i] == 0;
	ok(zeros, "[%d] hole before it reads as zeros", bs);
	/* the data block and its triple, double and single indirect blocks */
	uint64_t used = free0 - ext2_free_bytes(fs);
	ok(used == (uint64_t)4 * bs, "[%d] used %llu bytes for one far block", bs,
	   (unsigned long long)used);
	ok(ext2_truncate(fs, ino, 10) == 0 && ext2_free_bytes(fs) == free0, "[%d] truncate frees the chain", bs);
	ok(ext2_truncate(fs, ino, far) == 0 && ext2_free_bytes(fs) == free0, "[%d] grow is sparse", bs);
	ok(ext2_read(fs, ino, far - 100, buf, 200) == 100, "[%d] read up to the new EOF", bs);
	ok(ext2_write(fs, ino, (bs == 1024 ? 1ull << 35 : 1ull << 44), "x", 1) == -EFBIG,
	   "[%d] write beyond the largest file: -EFBIG", bs);
	ok(ext2_unlink(fs, EXT2_ROOT_INO, "far.bin", 7) == 0, "[%d] unlink far.bin", bs);
}

/* Block accounting, the contiguous-run I/O and the tail zeroing. */
static void test_accounting(struct ext2_fs *fs, struct ram *r, int bs)
{
	uint32_t ino;
	uint64_t free0 = ext2_free_bytes(fs);
	size_t len = 2 << 20;
	uint8_t *buf = malloc(len), *got = malloc(len);
	fill_pattern(buf, len, 99);
	ok(create(fs, EXT2_ROOT_INO, "two_mb", 0644, &ino) == 0, "[%d] create two_mb", bs);
	ram_count_reset(r);
	ok(ext2_write(fs, ino, 0, buf, len) == (long)len, "[%d] write 2 MiB in one call", bs);
	long wcalls = r->writes;
	/* indirect blocks: IND, and at 1 KiB DIND with its INDs */
	uint64_t nblk = len / bs, meta = bs == 4096 ? 1 : 1 + 1 + (nblk - 12 - 256 + 255) / 256;
	ok(free0 - ext2_free_bytes(fs) == (nblk + meta) * bs, "[%d] free space drops by data + %llu indirect blocks",
	   bs, (unsigned long long)meta);
	ok(wcalls <= (long)meta + 2, "[%d] 2 MiB written in %ld device calls", bs, wcalls);
	ok(ext2_read(fs, ino, 0, got, 4096) == 4096, "[%d] prime", bs);
	ram_count_reset(r);
	long n = ext2_read(fs, ino, 256 << 10, got, 1 << 20);
	ok(n == 1 << 20 && !memcmp(got, buf + (256 << 10), n), "[%d] read 1 MiB at 256 KiB", bs);
	if (bs == 4096)
		ok(r->reads == 1, "[%d] ... in %ld device call(s)", bs, r->reads);
	else
		ok(r->reads <= 8, "[%d] ... in %ld device calls (indirect blocks interleave)", bs, r->reads);
	/* small sequential reads go through the read-ahead window */
	ram_count_reset(r);
	int same = 1;
	for (size_t off = 0; off < (1 << 20); off += 8192)
		same &= ext2_read(fs, ino, off, got + off, 8192) == 8192;
	ok(same && !memcmp(got, buf, 1 << 20), "[%d] 1 MiB in 8 KiB reads", bs);
	ok(r->reads <= (bs == 4096 ? 10 : 16), "[%d] ... in %ld device calls", bs, r->reads);
	ok(ext2_write(fs, ino, 8192, "new", 3) == 3 && ext2_read(fs, ino, 8190, got, 8) == 8 &&
	   !memcmp(got, buf + 8190, 2) && !memcmp(got + 2, "new", 3) && !memcmp(got + 5, buf + 8195, 3),
	   "[%d] a write drops the read-ahead window", bs);
	uint32_t small;
	struct ext2_stat st;
	ok(create(fs, EXT2_ROOT_INO, "small", 0644, &small) == 0 && ext2_write(fs, small, 0, buf, 10000) == 10000 &&
	   ext2_stat(fs, small, &st) == 0, "[%d] a 10000-byte file", bs);
	ram_count_reset(r);
	ok(ext2_read(fs, small, 0, got, 20000) == 10000 && !memcmp(got, buf, 10000) && r->reads == 1,
	   "[%d] ... read whole in %ld device call(s)", bs, r->reads);
	ok(ext2_unlink(fs, EXT2_ROOT_INO, "small", 5) == 0, "[%d] unlink it", bs);
	/* shrink mid-block, grow again: the old tail reads as zeros */
	ok(ext2_truncate(fs, ino, 5000) == 0 && ext2_truncate(fs, ino, 9000) == 0, "[%d] shrink to 5000, grow to 9000",
	   bs);
	n = ext2_read(fs, ino, 0, got, len);
	int tail0 = n == 9000 && !memcmp(got, buf, 5000);
	for (int i = 5000; i < 9000 && tail0; i++)
		tail0 = got[i] == 0;
	ok(tail0, "[%d] bytes past a shrink read as zeros after growing", bs);
	ok(ext2_truncate(fs, ino, 0) == 0 && ext2_free_bytes(fs) == free0, "[%d] truncate to 0 frees everything", bs);
	ok(ext2_write(fs, ino, 0, buf, 100000) == 100000, "[%d] rewrite 100000 bytes", bs);
	free(buf), free(got);
}

static void test_dirs(struct ext2_fs *fs, int bs)
{
	uint32_t d1, d2, d3, f, x, root_links = nlink_of(fs, EXT2_ROOT_INO);
	ok(create(fs, EXT2_ROOT_INO, "d1", EXT2_S_IFDIR | 0755, &d1) == 0, "[%d] mkdir d1", bs);
	ok(create(fs, d1, "d2", EXT2_S_IFDIR | 0755, &d2) == 0 && create(fs, d2, "d3", EXT2_S_IFDIR | 0700, &d3) == 0,
	   "[%d] mkdir d1/d2/d3", bs);
	ok(nlink_of(fs, EXT2_ROOT_INO) == root_links + 1 && nlink_of(fs, d1) == 3 && nlink_of(fs, d3) == 2,
	   "[%d] link counts after mkdir", bs);
	ok(ext2_lookup(fs, d3, "..", 2, &x) == 0 && x == d2, "[%d] d3/.. is d2", bs);
	ok(create(fs, d3, "f", 0644, &f) == 0 && write_str(fs, f, 0, "in d3") == 5, "[%d] file in d3", bs);
	ok(lookup_path(fs, "/d1/d2/d3/f") == f, "[%d] path lookup", bs);
	ok(create(fs, d1, "d2", EXT2_S_IFDIR | 0755, &x) == -EEXIST, "[%d] mkdir existing: -EEXIST", bs);
	ok(create(fs, d1, ".", 0644, &x) == -EEXIST, "[%d] create \".\": -EEXIST", bs);
	char longname[300];
	memset(longname, 'n', sizeof longname);
	ok(ext2_create(fs, d1, longname, 256, 0644, &x) == -ENAMETOOLONG, "[%d] 256-byte name: -ENAMETOOLONG", bs);
	ok(ext2_create(fs, d1, longname, 255, 0644, &x) == 0 && ext2_lookup(fs, d1, longname, 255, &x) == 0,
	   "[%d] 255-byte name", bs);
	ok(ext2_create(fs, d1, "a/b", 3, 0644, &x) == -EINVAL, "[%d] name with '/': -EINVAL", bs);
	ok(ext2_create(fs, f, "x", 1, 0644, &x) == -ENOTDIR, "[%d] create in a file: -ENOTDIR", bs);
	ok(has_entry(fs, d1, "d2", EXT2_DT_DIR) && count_entries(fs, d1) == 4, "[%d] readdir d1", bs);

	/* rmdir */
	ok(ext2_rmdir(fs, d2, "d3", 2) == -ENOTEMPTY, "[%d] rmdir non-empty: -ENOTEMPTY", bs);
	ok(ext2_rmdir(fs, d3, "f", 1) == -ENOTDIR, "[%d] rmdir a file: -ENOTDIR", bs);
	ok(ext2_rmdir(fs, d3, ".", 1) == -EINVAL, "[%d] rmdir \".\": -EINVAL", bs);
	ok(ext2_unlink(fs, d2, "d3", 2) == -EISDIR, "[%d] unlink a directory: -EISDIR", bs);
	ok(ext2_unlink(fs, d3, "nope", 4) == -ENOENT, "[%d] unlink missing: -ENOENT", bs);
	ok(ext2_unlink(fs, d3, "f", 1) == 0 && ext2_rmdir(fs, d2, "d3", 2) == 0, "[%d] unlink f, rmdir d3", bs);
	ok(nlink_of(fs, d2) == 2 && ext2_lookup(fs, d2, "d3", 2, &x) == -ENOENT, "[%d] d3 gone, d2 links 2", bs);
	ok(ext2_stat(fs, d3, &(struct ext2_stat){ 0 }) == -ENOENT, "[%d] freed inode: -ENOENT", bs);

	/* rename: files */
	uint32_t a, b, c;
	ok(create(fs, EXT2_ROOT_INO, "a.txt", 0644, &a) == 0 && write_str(fs, a, 0, "AAAA") == 4, "[%d] a.txt", bs);
	ok(ext2_rename(fs, EXT2_ROOT_INO, "a.txt", 5, d2, "moved.txt", 9) == 0, "[%d] rename across dirs", bs);
	ok(ext2_lookup(fs, EXT2_ROOT_INO, "a.txt", 5, &x) == -ENOENT && lookup_path(fs, "/d1/d2/moved.txt") == a &&
	   file_is(fs, "/d1/d2/moved.txt", "AAAA", 4, 10), "[%d] ... old name gone, new name reads", bs);
	ok(create(fs, d2, "b.txt", 0644, &b) == 0 && write_str(fs, b, 0, "BB") == 2, "[%d] b.txt", bs);
	ok(ext2_rename(fs, d2, "moved.txt", 9, d2, "b.txt", 5) == 0, "[%d] rename over an existing file", bs);
	ok(lookup_path(fs, "/d1/d2/b.txt") == a && file_is(fs, "/d1/d2/b.txt", "AAAA", 4, 10) &&
	   ext2_stat(fs, b, &(struct ext2_stat){ 0 }) == -ENOENT && count_entries(fs, d2) == 3,
	   "[%d] ... target replaced and freed", bs);
	ok(ext2_rename(fs, d2, "b.txt", 5, d2, "b.txt", 5) == 0, "[%d] rename onto itself", bs);
	ok(ext2_rename(fs, d2, "zz", 2, d2, "b.txt", 5) == -ENOENT, "[%d] rename missing: -ENOENT", bs);

	/* rename: directories */
	ok(create(fs, d2, "sub", EXT2_S_IFDIR | 0755, &c) == 0, "[%d] mkdir d1/d2/sub", bs);
	root_links = nlink_of(fs, EXT2_ROOT_INO);
	ok(ext2_rename(fs, d1, "d2", 2, EXT2_ROOT_INO, "top", 3) == 0, "[%d] move d1/d2 to /top", bs);
	ok(ext2_lookup(fs, d2, "..", 2, &x) == 0 && x == EXT2_ROOT_INO && nlink_of(fs, d1) == 2 &&
	   nlink_of(fs, EXT2_ROOT_INO) == root_links + 1 && lookup_path(fs, "/top/sub") == c,
	   "[%d] ... \"..\" and link counts follow", bs);
	ok(ext2_rename(fs, EXT2_ROOT_INO, "top", 3, c, "x", 1) == -EINVAL, "[%d] move a dir into itself: -EINVAL", bs);
	ok(ext2_rename(fs, EXT2_ROOT_INO, "top", 3, d2, "x", 1) == -EINVAL, "[%d] move a dir into itself (direct)", bs);
	uint32_t e1, e2, ef;
	ok(create(fs, EXT2_ROOT_INO, "e1", EXT2_S_IFDIR | 0755, &e1) == 0 &&
	   create(fs, EXT2_ROOT_INO, "e2", EXT2_S_IFDIR | 0755, &e2) == 0 && create(fs, e1, "ef", 0644, &ef) == 0,
	   "[%d] e1/ef, e2", bs);
	root_links = nlink_of(fs, EXT2_ROOT_INO);
	ok(ext2_rename(fs, EXT2_ROOT_INO, "e2", 2, EXT2_ROOT_INO, "e1", 2) == -ENOTEMPTY,
	   "[%d] dir over non-empty dir: -ENOTEMPTY", bs);
	ok(ext2_rename(fs, EXT2_ROOT_INO, "e1", 2, EXT2_ROOT_INO, "e2", 2) == 0, "[%d] dir over empty dir", bs);
	ok(lookup_path(fs, "/e2/ef") == ef && ext2_lookup(fs, EXT2_ROOT_INO, "e1", 2, &x) == -ENOENT &&
	   nlink_of(fs, EXT2_ROOT_INO) == root_links - 1, "[%d] ... replaced, root links %u", bs,
	   nlink_of(fs, EXT2_ROOT_INO));
	ok(ext2_rename(fs, EXT2_ROOT_INO, "e2", 2, d2, "b.txt", 5) == -ENOTDIR, "[%d] dir over file: -ENOTDIR", bs);
	ok(ext2_rename(fs, d2, "b.txt", 5, EXT2_ROOT_INO, "e2", 2) == -EISDIR, "[%d] file over dir: -EISDIR", bs);
	/* "e2" is e1's inode now */
	ok(ext2_rename(fs, EXT2_ROOT_INO, "e2", 2, d2, "e2moved", 7) == 0 && ext2_lookup(fs, e1, "..", 2, &x) == 0 &&
	   x == d2 && nlink_of(fs, d2) == 4, "[%d] move e2 under /top", bs);
	/* move a dir over an empty dir in another directory */
	uint32_t g1;
	ok(create(fs, d1, "g1", EXT2_S_IFDIR | 0755, &g1) == 0 &&
	   ext2_rename(fs, d2, "e2moved", 7, d1, "g1", 2) == 0 && nlink_of(fs, d1) == 3 && nlink_of(fs, d2) == 3,
	   "[%d] dir over empty dir across parents: link counts", bs);

	/* symlinks and hard links */
	uint32_t s1, s2;
	char target[1000];
	memset(target, 't', sizeof target);
	ok(ext2_symlink(fs, d1, "fast", 4, "../top/b.txt", 12, &s1) == 0, "[%d] fast symlink", bs);
	ok(ext2_symlink(fs, d1, "slow", 4, target, 900, &s2) == 0, "[%d] slow symlink", bs);
	char lb[1000];
	struct ext2_stat st;
	ok(ext2_readlink(fs, s1, lb, sizeof lb) == 12 && !memcmp(lb, "../top/b.txt", 12) && ext2_stat(fs, s1, &st) == 0 &&
	   st.blocks == 0 && (st.mode & EXT2_S_IFMT) == EXT2_S_IFLNK, "[%d] fast symlink reads back, no blocks", bs);
	ok(ext2_readlink(fs, s2, lb, sizeof lb) == 900 && !memcmp(lb, target, 900) && ext2_stat(fs, s2, &st) == 0 &&
	   st.blocks == (uint64_t)bs / 512, "[%d] slow symlink reads back, one block", bs);
	ok(ext2_readlink(fs, s2, lb, 10) == 10, "[%d] readlink truncates to the buffer", bs);
	ok(ext2_symlink(fs, d1, "s3", 2, "", 0, &x) == -ENOENT, "[%d] empty symlink target: -ENOENT", bs);
	ok(ext2_read(fs, s1, 0, lb, 10) == -EINVAL, "[%d] read a symlink: -EINVAL", bs);
	ok(ext2_link(fs, EXT2_ROOT_INO, "hard", 4, a) == 0 && nlink_of(fs, a) == 2, "[%d] hard link: nlink 2", bs);
	ok(ext2_link(fs, EXT2_ROOT_INO, "hard", 4, a) == -EEXIST, "[%d] hard link existing name: -EEXIST", bs);
	ok(ext2_link(fs, EXT2_ROOT_INO, "dirlink", 7, d1) == -EPERM, "[%d] hard link a directory: -EPERM", bs);
	ok(ext2_unlink(fs, d2, "b.txt", 5) == 0 && nlink_of(fs, a) == 1 && file_is(fs, "/hard", "AAAA", 4, 10),
	   "[%d] unlink one name, the other still reads", bs);
	ok(ext2_rename(fs, EXT2_ROOT_INO, "hard", 4, d1, "fast", 4) == 0 && lookup_path(fs, "/d1/fast") == a,
	   "[%d] file over symlink", bs);

	/* attributes */
	ok(ext2_chmod(fs, a, 0600 | EXT2_S_IFDIR) == 0 && ext2_stat(fs, a, &st) == 0 &&
	   st.mode == (EXT2_S_IFREG | 0600), "[%d] chmod changes permission bits only", bs);
	ok(ext2_set_times(fs, a, 1000, -1) == 0 && ext2_stat(fs, a, &st) == 0 && st.atime == 1000 &&
	   st.mtime == fixed_now() && st.ctime == fixed_now(), "[%d] set_times atime only", bs);
	ok(ext2_set_times(fs, a, -1, 2000) == 0 && ext2_stat(fs, a, &st) == 0 && st.atime == 1000 && st.mtime == 2000,
	   "[%d] set_times mtime only", bs);
	uint32_t fifo;
	ok(create(fs, d1, "fifo", EXT2_S_IFIFO | 0600, &fifo) == 0 && has_entry(fs, d1, "fifo", EXT2_DT_FIFO),
	   "[%d] mkfifo", bs);
	ok(ext2_write(fs, fifo, 0, "x", 1) == -EINVAL && ext2_write(fs, d1, 0, "x", 1) == -EISDIR,
	   "[%d] write to fifo/dir refused", bs);
}

static void test_big_dir(struct ext2_fs *fs, int bs)
{
	uint32_t dir, ino;
	int bad = 0;
	ok(create(fs, EXT2_ROOT_INO, "bigdir", EXT2_S_IFDIR | 0755, &dir) == 0, "[%d] mkdir bigdir", bs);
	for (int i = 0; i < 2000; i++) {
		char name[64];
		snprintf(name, sizeof name, "entry-%04d", i);
		bad += create(fs, dir, name, 0644, &ino) != 0;
		if (i % 100 == 1)
			bad += write_str(fs, ino, 0, name) != (long)strlen(name);
	}
	ok(bad == 0, "[%d] 2000 files created", bs);
	ok(count_entries(fs, dir) == 2002, "[%d] readdir lists 2002", bs);
	ok(file_is(fs, "/bigdir/entry-1901", "entry-1901", 10, 64) && lookup_path(fs, "/bigdir/entry-1999"),
	   "[%d] lookups", bs);
	for (int i = 0; i < 2000; i += 2) {
		char name[64];
		snprintf(name, sizeof name, "entry-%04d", i);
		bad += ext2_unlink(fs, dir, name, strlen(name)) != 0;
	}
	ok(bad == 0 && count_entries(fs, dir) == 1002, "[%d] every other one unlinked", bs);
	for (int i = 0; i < 300; i++) {
		char name[64];
		snprintf(name, sizeof name, "again-%d", i);
		bad += create(fs, dir, name, 0644, &ino) != 0;
	}
	ok(bad == 0 && count_entries(fs, dir) == 1302, "[%d] re-created into the gaps", bs);
	/* readdir with a cookie taken mid-way keeps going after a removal */
	uint64_t pos = 0;
	struct ext2_dirent de;
	for (int i = 0; i < 10; i++)
		ext2_readdir(fs, dir, &pos, &de);
	int rest = 0;
	ext2_unlink(fs, dir, "entry-1999", 10);
	while (ext2_readdir(fs, dir, &pos, &de) == 1)
		rest++;
	ok(rest == 1302 - 10 - 1, "[%d] readdir resumes from its cookie (%d)", bs, rest);
}

static void test_rw(int bs)
{
	TMP_PATH(img, "rw.img");
	ok(mkfs(img, bs, bs == 1024 ? 16384 : 32768, NULL) == 0, "[%d] mke2fs", bs);
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	ok(r->data[1024 + 58] == 0, "[%d] superblock says not clean while mounted", bs);
	uint32_t ino;
	ok(create(fs, EXT2_ROOT_INO, "hello", 0644, &ino) == 0 && write_str(fs, ino, 0, "hello") == 5 &&
	   file_is(fs, "/hello", "hello", 5, 100), "[%d] create, write, read", bs);
	test_accounting(fs, r, bs); /* first: on an unfragmented disk */
	test_random_io(fs, bs);
	test_far_write(fs, bs);
	test_dirs(fs, bs);
	test_big_dir(fs, bs);

	ok(ext2_sync(fs) == 0 && r->flushes > 0, "[%d] sync", bs);
	ram_save(r, img);
	ok(fsck(img) == 0, "[%d] e2fsck -fn after sync, still mounted", bs);
	ok(ext2_unmount(fs) == 0 && r->oob == 0, "[%d] unmount", bs);
	ok(r->data[1024 + 58] == 1, "[%d] superblock says clean after unmount", bs);
	ram_save(r, img);
	ok(fsck(img) == 0, "[%d] e2fsck -fn: clean", bs);
	TMP_PATH(expect, "rand.expect");
	struct ram *exp = ram_load(expect);
	ok(exp && debugfs_cat_is(img, "/rand.bin", exp->data, exp->size), "[%d] debugfs cat rand.bin matches", bs);
	ram_free(exp);
	ok(debugfs_cat_is(img, "/d1/fast", "AAAA", 4), "[%d] debugfs cat /d1/fast", bs);
	ok(debugfs_cat_is(img, "/bigdir/entry-1901", "entry-1901", 10), "[%d] debugfs cat bigdir entry", bs);
	uint8_t *p = malloc(100000);
	fill_pattern(p, 100000, 99);
	ok(debugfs_cat_is(img, "/two_mb", p, 100000), "[%d] debugfs cat two_mb", bs);
	free(p);

	/* mount again: everything is still there */
	fs = mount_ok(r, 0);
	if (!fs)
		return;
	ok(lookup_path(fs, "/top/sub") && count_entries(fs, lookup_path(fs, "/bigdir")) == 1301,
	   "[%d] remount: tree intact", bs);
	ok(ext2_unmount(fs) == 0, "[%d] unmount again", bs);
	ram_save(r, img);
	ok(fsck(img) == 0, "[%d] e2fsck -fn after remount", bs);
	ram_free(r);
}

/* An htree-indexed directory (mke2fs -d makes one for a big directory). */
static void test_htree(void)
{
	TMP_PATH(src, "hsrc");
	TMP_PATH(img, "htree.img");
	sh("rm -rf %s && mkdir -p %s/h", src, src);
	for (int i = 0; i < 400; i++) {
		char p[1024];
		snprintf(p, sizeof p, "%s/h/name-that-is-fairly-long-%04d", src, i);
		write_host_file(p, "x", 1);
	}
	ok(mkfs(img, 1024, 8192, src) == 0, "htree: mke2fs -d with a 400-entry directory");
	sh("e2fsck -fyD %s >/dev/null 2>&1", img); /* makes sure it is indexed */
	uint32_t flags = debugfs_num(img, "stat /h", "Flags: ");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	uint32_t h = lookup_path(fs, "/h"), x;
	ok(flags & 0x1000, "htree: /h is indexed (flags %#x)", flags);
	ok(count_entries(fs, h) == 402 && lookup_path(fs, "/h/name-that-is-fairly-long-0399"),
	   "htree: read as a linear directory");
	ok(create(fs, h, "newfile", 0644, &x) == 0 && ext2_unlink(fs, h, "name-that-is-fairly-long-0007", 29) == 0,
	   "htree: add and remove entries");
	ok(count_entries(fs, h) == 402, "htree: count after changes");
	ok(ext2_unmount(fs) == 0, "htree: unmount");
	ram_save(r, img);
	ok(fsck(img) == 0, "htree: e2fsck -fn clean");
	flags = debugfs_num(img, "stat /h", "Flags: ");
	ok(!(flags & 0x1000), "htree: index flag cleared (flags %#x)", flags);
	ram_free(r);
}

/* Two file systems mounted at once share nothing. */
static void test_two_mounts(void)
{
	TMP_PATH(img1, "two1.img");
	TMP_PATH(img2, "two2.img");
	mkfs(img1, 1024, 2048, NULL);
	mkfs(img2, 4096, 8192, NULL);
	struct ram *r1 = ram_load(img1), *r2 = ram_load(img2);
	struct ext2_fs *a = mount_ok(r1, 0), *b = mount_ok(r2, 0);
	if (!a || !b)
		return;
	uint32_t ia, ib;
	ok(create(a, EXT2_ROOT_INO, "same", 0644, &ia) == 0 && create(b, EXT2_ROOT_INO, "same", 0644, &ib) == 0 &&
	   write_str(a, ia, 0, "on a") == 4 && write_str(b, ib, 0, "on b, longer") == 12,
	   "two mounts: a file of the same name on each");
	ok(file_is(a, "/same", "on a", 4, 100) && file_is(b, "/same", "on b, longer", 12, 100), "two mounts: independent");
	ok(ext2_unmount(a) == 0 && ext2_unmount(b) == 0, "two mounts: unmount both");
	ram_save(r1, img1);
	ram_save(r2, img2);
	ok(fsck(img1) == 0 && fsck(img2) == 0, "two mounts: both e2fsck clean");
	ram_free(r1);
	ram_free(r2);
}

/* Revision 0 (no features: no file types in entries, 128-byte inodes). */
static void test_rev0(void)
{
	TMP_PATH(img, "r0.img");
	ok(sh("mke2fs -q -t ext2 -r 0 -F %s 2048k >/dev/null 2>&1", img) == 0, "rev 0: mke2fs -r 0");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	uint32_t d, f, x;
	ok(create(fs, EXT2_ROOT_INO, "dir", EXT2_S_IFDIR | 0755, &d) == 0 && create(fs, d, "file", 0644, &f) == 0 &&
	   write_str(fs, f, 0, "rev0") == 4 && ext2_symlink(fs, d, "ln", 2, "file", 4, &x) == 0,
	   "rev 0: mkdir, create, write, symlink");
	ok(has_entry(fs, d, "file", EXT2_DT_REG) && has_entry(fs, d, "ln", EXT2_DT_LNK) &&
	   has_entry(fs, EXT2_ROOT_INO, "dir", EXT2_DT_DIR), "rev 0: readdir types come from the inodes");
	ok(ext2_write(fs, f, 1u << 31, "x", 1) == -EFBIG, "rev 0: no files past 2 GiB");
	ok(ext2_rename(fs, d, "file", 4, EXT2_ROOT_INO, "moved", 5) == 0 && file_is(fs, "/moved", "rev0", 4, 10),
	   "rev 0: rename");
	ok(ext2_unmount(fs) == 0, "rev 0: unmount");
	ram_save(r, img);
	ok(fsck(img) == 0, "rev 0: e2fsck -fn clean");
	ram_free(r);
}

/* A file with an extended attribute block: unlink frees that block too. */
static void test_xattr_block(void)
{
	TMP_PATH(img, "ea.img");
	TMP_PATH(val, "ea.val");
	TMP_PATH(data, "ea.data");
	char v[300];
	memset(v, 'v', sizeof v);
	write_host_file(val, v, sizeof v);
	write_host_file(data, "hi\n", 3);
	sh("mke2fs -q -t ext2 -I 128 -b 1024 -F %s 2048k >/dev/null 2>&1", img);
	sh("debugfs -w -R 'write %s f' %s >/dev/null 2>&1", data, img);
	sh("debugfs -w -R 'ea_set -f %s /f user.big' %s >/dev/null 2>&1", val, img);
	uint32_t acl = debugfs_num(img, "stat /f", "File ACL: ");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	uint64_t free0 = ext2_free_bytes(fs);
	ok(acl != 0 && file_is(fs, "/f", "hi\n", 3, 10), "xattr: file with an EA block (%u)", acl);
	ok(ext2_unlink(fs, EXT2_ROOT_INO, "f", 1) == 0 && ext2_free_bytes(fs) == free0 + 2 * 1024,
	   "xattr: unlink frees the data and EA blocks");
	ok(ext2_unmount(fs) == 0, "xattr: unmount");
	ram_save(r, img);
	ok(fsck(img) == 0, "xattr: e2fsck -fn clean");
	ram_free(r);
}

/* ---- running out of space -------------------------------------------------- */

static void test_enospc(void)
{
	TMP_PATH(img, "small.img");
	ok(mkfs(img, 1024, 1024, NULL) == 0, "enospc: 1 MiB file system");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	uint64_t free0 = ext2_free_bytes(fs);
	size_t len = 2 << 20;
	uint8_t *buf = malloc(len), *got = malloc(len);
	fill_pattern(buf, len, 5);
	uint32_t ino, x;
	ok(create(fs, EXT2_ROOT_INO, "fill", 0644, &ino) == 0, "enospc: create");
	long n = ext2_write(fs, ino, 0, buf, len);
	ok(n > 0 && n < (long)len && n % 1024 == 0, "enospc: partial write of %ld bytes (free was %llu)", n,
	   (unsigned long long)free0);
	ok(ext2_free_bytes(fs) < 2 * 1024, "enospc: %llu bytes left", (unsigned long long)ext2_free_bytes(fs));
	ok(ext2_write(fs, ino, n, buf, 1) == -ENOSPC, "enospc: the next write: -ENOSPC");
	ok(ext2_read(fs, ino, 0, got, len) == n && !memcmp(got, buf, n), "enospc: written part reads back");
	int r1 = create(fs, EXT2_ROOT_INO, "dir", EXT2_S_IFDIR | 0755, &x);
	ok(r1 == -ENOSPC || (r1 == 0 && ext2_free_bytes(fs) == 0), "enospc: mkdir without space (%d)", r1);
	/* fill the root directory's blocks too: names until -ENOSPC */
	int made = 0, e = 0;
	for (int i = 0; i < 5000 && !e; i++) {
		char name[64];
		snprintf(name, sizeof name, "file-with-a-rather-long-name-to-fill-blocks-%05d", i);
		e = create(fs, EXT2_ROOT_INO, name, 0644, &x);
		made += e == 0;
	}
	ok(e == -ENOSPC, "enospc: creating files stops with -ENOSPC after %d", made);
	ok(ext2_unmount(fs) == 0, "enospc: unmount");
	ram_save(r, img);
	ok(fsck(img) == 0, "enospc: e2fsck -fn clean when full");
	fs = mount_ok(r, 0);
	if (!fs)
		return;
	ok(ext2_unlink(fs, EXT2_ROOT_INO, "fill", 4) == 0, "enospc: unlink the big file");
	ok(ext2_free_bytes(fs) > free0 - 64 * 1024, "enospc: space is back (%llu)",
	   (unsigned long long)ext2_free_bytes(fs));
	ok(ext2_unmount(fs) == 0, "enospc: unmount");
	ram_save(r, img);
	ok(fsck(img) == 0, "enospc: e2fsck -fn clean after freeing");
	ram_free(r);
	free(buf), free(got);
}

/* ---- corrupt images --------------------------------------------------------- */

static int try_mount(struct ram *r, int ro)
{
	struct ext2_fs *fs = NULL;
	int e = ext2_mount(&fs, &r->bd, ro);
	if (!e)
		ext2_unmount(fs);
	return e;
}

static void put32(struct ram *r, uint64_t off, uint32_t v)
{
	memcpy(r->data + off, &v, 4);
}

static void put16(struct ram *r, uint64_t off, uint16_t v)
{
	memcpy(r->data + off, &v, 2);
}

static void test_bad_superblocks(void)
{
	TMP_PATH(img, "sb.img");
	mkfs(img, 1024, 2048, NULL);
	struct ram *good = ram_load(img);
	ok(try_mount(good, 1) == 0, "bad sb: the good image mounts");

	uint8_t *junk = malloc(1 << 20);
	fill_random(junk, 1 << 20);
	struct ram *r = ram_new(junk, 1 << 20);
	ok(try_mount(r, 1) < 0 && try_mount(r, 0) < 0, "random bytes: refused");
	put16(r, 1024 + 56, 0xEF53);
	ok(try_mount(r, 1) < 0, "random bytes with the magic: refused");
	ram_free(r);
	free(junk);
	r = ram_new(good->data, 1024);
	ok(try_mount(r, 1) < 0, "1 KiB device: refused");
	ram_free(r);
	r = ram_new(good->data, good->size / 2);
	ok(try_mount(r, 1) < 0 && try_mount(r, 0) < 0, "truncated image: refused");
	ram_free(r);

	static const struct { const char *what; unsigned off, size; uint32_t v; } patches[] = {
		{ "s_blocks_per_group 0", 32, 4, 0 },
		{ "s_blocks_per_group 3", 32, 4, 3 },
		{ "s_log_block_size 20", 24, 4, 20 },
		{ "s_inodes_count 0", 0, 4, 0 },
		{ "s_inodes_per_group 0", 40, 4, 0 },
		{ "s_inodes_per_group huge", 40, 4, 0x7fffffff },
		{ "s_blocks_count huge", 4, 4, 0xffffffff },
		{ "s_blocks_count 1", 4, 4, 1 },
		{ "s_first_data_block 7", 20, 4, 7 },
		{ "s_inode_size 100", 88, 2, 100 },
		{ "s_inode_size 8192", 88, 2, 8192 },
		{ "s_first_ino 0", 84, 4, 0 },
		{ "s_rev_level 9", 76, 4, 9 },
		{ "s_free_blocks_count huge", 12, 4, 0xfffffff0 },
		{ "s_feature_incompat extents", 96, 4, 0x42 },
		{ "s_feature_incompat unknown", 96, 4, 0x80000002 },
		{ "s_reserved_gdt_blocks huge", 206, 2, 60000 },
		{ "bg_inode_table past the end", 1024 + 8, 4, 0xfffff000 },
		{ "bg_block_bitmap 0", 1024 + 0, 4, 0 },
		{ "bg_free_blocks_count huge", 1024 + 12, 2, 60000 },
	};
	for (size_t i = 0; i < sizeof patches / sizeof patches[0]; i++) {
		r = ram_new(good->data, good->size);
		if (patches[i].size == 4)
			put32(r, 1024 + patches[i].off, patches[i].v);
		else
			put16(r, 1024 + patches[i].off, (uint16_t)patches[i].v);
		int e1 = try_mount(r, 1), e2 = try_mount(r, 0);
		ok(e1 < 0 && e2 < 0 && r->oob == 0, "%s: refused (%d, %d)", patches[i].what, e1, e2);
		ram_free(r);
	}
	r = ram_new(good->data, good->size);
	put32(r, 1024 + 100, 0x8 | 0x1); /* RO_COMPAT huge_file */
	ok(try_mount(r, 1) == 0 && try_mount(r, 0) == -EINVAL, "unknown RO_COMPAT: read-only yes, read-write -EINVAL");
	ram_free(r);
	r = ram_new(good->data, good->size);
	r->bd.read_only = 1;
	ok(try_mount(r, 0) == -EROFS && try_mount(r, 1) == 0, "read-only device: rw mount -EROFS");
	ram_free(r);

	TMP_PATH(img4, "ext4.img");
	sh("mke2fs -q -t ext4 -F %s 8192k >/dev/null 2>&1", img4);
	r = ram_load(img4);
	ok(r && try_mount(r, 1) == -EINVAL && try_mount(r, 0) == -EINVAL, "ext4 image: -EINVAL");
	ram_free(r);
	ram_free(good);
}

/* An image with a few files whose metadata the tests below corrupt. */
static struct ram *corruptible(const char *img, uint32_t *dirblk, uint32_t *indblk, uint32_t *dindblk)
{
	TMP_PATH(src, "csrc");
	sh("rm -rf %s && mkdir -p %s/d", src, src);
	char p[1024];
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof p, "%s/d/f%d", src, i);
		write_host_file(p, "data", 4);
	}
	snprintf(p, sizeof p, "%s/big.bin", src);
	write_host_file(p, big, sizeof big);
	snprintf(p, sizeof p, "%s/hello.txt", src);
	write_host_file(p, "hello", 5);
	mkfs(img, 1024, 4096, src);
	*dirblk = debugfs_num(img, "bmap /d 0", "");
	*indblk = debugfs_num(img, "stat /big.bin", "(IND):");
	*dindblk = debugfs_num(img, "stat /big.bin", "(DIND):");
	return ram_load(img);
}

/* Exercises a corrupt image every way; all that matters is a clean return. */
static void poke(struct ext2_fs *fs)
{
	uint8_t buf[4096];
	uint32_t x;
	struct ext2_dirent de;
	uint64_t pos = 0;
	for (int i = 0; i < 100 && ext2_readdir(fs, lookup_path(fs, "/d"), &pos, &de) == 1; i++)
		;
	uint32_t b = lookup_path(fs, "/big.bin");
	for (uint64_t off = 0; off < BIG_LEN + 5000; off += sizeof buf)
		ext2_read(fs, b, off, buf, sizeof buf);
	ext2_create(fs, lookup_path(fs, "/d"), "new", 3, 0644, &x);
	ext2_write(fs, b, 100000, buf, sizeof buf);
	ext2_truncate(fs, b, 1000);
	ext2_unlink(fs, EXT2_ROOT_INO, "big.bin", 7);
	ext2_rename(fs, EXT2_ROOT_INO, "d", 1, EXT2_ROOT_INO, "d2", 2);
}

static void test_corrupt_files(void)
{
	TMP_PATH(img, "c.img");
	uint32_t dirblk, ind, dind, x;
	struct ram *good = corruptible(img, &dirblk, &ind, &dind);
	ok(good && dirblk && ind && dind, "corrupt: image (dir block %u, IND %u, DIND %u)", dirblk, ind, dind);
	if (!good || !dirblk || !ind || !dind)
		return;
	struct ext2_fs *fs;
	uint64_t pos = 0;
	struct ext2_dirent de;

	struct { const char *what; unsigned off; uint16_t v; } dirs[] = {
		{ "rec_len 0", 4, 0 }, { "rec_len past the block", 12 + 4, 1200 }, { "rec_len 5", 4, 5 },
		{ "name_len past rec_len", 6, 0x00ff },
	};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		struct ram *r = ram_new(good->data, good->size);
		put16(r, (uint64_t)dirblk * 1024 + dirs[i].off, dirs[i].v);
		fs = mount_ok(r, 0);
		if (!fs)
			continue;
		uint32_t d = lookup_path(fs, "/d");
		pos = 0;
		int e1 = ext2_lookup(fs, d, "f3", 2, &x), e2 = ext2_readdir(fs, d, &pos, &de);
		int e3 = ext2_create(fs, d, "n", 1, 0644, &x);
		ok(d && e1 == -EIO && e2 == -EIO && e3 == -EIO, "dir block %s: -EIO (%d %d %d)", dirs[i].what, e1, e2, e3);
		poke(fs);
		ok(ext2_unmount(fs) == 0 && r->oob == 0, "dir block %s: unmount", dirs[i].what);
		ram_free(r);
	}

	/* an inode entry pointing past the inode count */
	struct ram *r = ram_new(good->data, good->size);
	put32(r, (uint64_t)dirblk * 1024 + 24, 0x7fffffff); /* the first name after . and .. */
	fs = mount_ok(r, 1);
	pos = 0;
	ok(fs && ext2_readdir(fs, lookup_path(fs, "/d"), &pos, &de) == -EIO, "dir entry with inode past the count: -EIO");
	ext2_unmount(fs);
	ram_free(r);

	/* block pointers past the device: via debugfs set_inode_field */
	TMP_PATH(bad, "c2.img");
	ram_save(good, bad);
	sh("debugfs -w -R 'sif /hello.txt block[0] 0x7ffffff0' %s >/dev/null 2>&1", bad);
	sh("debugfs -w -R 'sif /big.bin block[IND] 4000000' %s >/dev/null 2>&1", bad);
	r = ram_load(bad);
	fs = mount_ok(r, 0);
	uint8_t buf[4096];
	if (fs) {
		uint32_t h = lookup_path(fs, "/hello.txt"), b = lookup_path(fs, "/big.bin");
		ok(ext2_read(fs, h, 0, buf, 10) == -EIO, "block pointer past the device: read -EIO");
		ok(ext2_write(fs, h, 0, buf, 10) == -EIO, "... write -EIO");
		ok(ext2_read(fs, b, 0, buf, 4096) == 4096 && ext2_read(fs, b, 20 * 1024, buf, 10) == -EIO,
		   "IND pointer past the device: direct blocks read, the rest -EIO");
		int e = ext2_unlink(fs, EXT2_ROOT_INO, "hello.txt", 9);
		ok(e == -EIO, "... unlink: -EIO (%d)", e);
		ok(ext2_lookup(fs, EXT2_ROOT_INO, "hello.txt", 9, &x) == -ENOENT, "... but the name is gone");
		poke(fs);
		ok(ext2_unmount(fs) == 0 && r->oob == 0, "block pointer past the device: unmount, no stray I/O");
	}
	ram_free(r);

	/* indirect loops: IND's first entry is IND itself; DIND's first is DIND */
	r = ram_new(good->data, good->size);
	put32(r, (uint64_t)ind * 1024, ind);
	put32(r, (uint64_t)dind * 1024, dind);
	fs = mount_ok(r, 0);
	if (fs) {
		uint32_t b = lookup_path(fs, "/big.bin");
		long n1 = ext2_read(fs, b, 12 * 1024, buf, 1024), n2 = ext2_read(fs, b, 268 * 1024, buf, 1024);
		ok((n1 == 1024 || n1 == -EIO) && (n2 == 1024 || n2 == -EIO), "indirect loops: reads return (%ld, %ld)", n1,
		   n2);
		uint64_t got;
		uint8_t *all = read_all(fs, b, 1 << 20, &got);
		free(all);
		int e = ext2_truncate(fs, b, 0);
		ok(e == -EIO || e == 0, "indirect loops: truncate returns (%d)", e);
		poke(fs);
		ok(ext2_unmount(fs) == 0 && r->oob == 0, "indirect loops: unmount");
	}
	ram_free(r);

	/* the root directory's inode made a regular file */
	r = ram_new(good->data, good->size);
	uint32_t itable = debugfs_num(img, "imap <2>", "located at block ");
	put16(r, (uint64_t)itable * 1024 + 256 * 1, EXT2_S_IFREG | 0644);
	ok(try_mount(r, 1) < 0, "root inode not a directory: refused");
	ram_free(r);
	ram_free(good);
}

/* Random byte flips over the metadata: nothing may crash, hang or stray.
 * EXT2_FUZZ=n runs n images instead of 400. */
static void test_fuzz(void)
{
	TMP_PATH(img, "f.img");
	uint32_t dirblk, ind, dind;
	struct ram *good = corruptible(img, &dirblk, &ind, &dind);
	if (!good)
		return;
	long oob = 0, iters = getenv("EXT2_FUZZ") ? atol(getenv("EXT2_FUZZ")) : 400;
	int mounted = 0;
	uint32_t itable = debugfs_num(img, "imap <2>", "located at block ");
	for (long it = 0; it < iters; it++) {
		struct ram *r = ram_new(good->data, good->size);
		int flips = 1 + (int)(rnd() % 8);
		for (int k = 0; k < flips; k++) {
			uint64_t off;
			switch (rnd() % 4) {
			case 0: off = 1024 + rnd() % 2048; break;                     /* superblock, descriptors */
			case 1: off = (uint64_t)itable * 1024 + rnd() % 8192; break;   /* the first inodes */
			case 2: off = (uint64_t)dirblk * 1024 + rnd() % 1024; break;   /* a directory block */
			default: off = 1024 + rnd() % ((uint64_t)(dind + 2) * 1024 - 1024); break;
			}
			r->data[off] ^= (uint8_t)(1u << (rnd() % 8));
			if (rnd() % 4 == 0)
				r->data[off] = (uint8_t)rnd();
		}
		if (rnd() % 3 == 0)
			put32(r, (uint64_t)(rnd() % 2 ? ind : dind) * 1024 + 4 * (rnd() % 256), (uint32_t)(rnd() % 5000));
		struct ext2_fs *fs;
		int ro = it % 3 == 0;
		if (ext2_mount(&fs, &r->bd, ro) == 0) {
			mounted++;
			poke(fs);
			uint32_t x;
			ext2_create(fs, EXT2_ROOT_INO, "dd", 2, EXT2_S_IFDIR | 0755, &x);
			ext2_symlink(fs, EXT2_ROOT_INO, "sl", 2, long_target, strlen(long_target), &x);
			ext2_rmdir(fs, EXT2_ROOT_INO, "d2", 2);
			ext2_rename(fs, EXT2_ROOT_INO, "dd", 2, lookup_path(fs, "/d2"), "dd", 2);
			ext2_unlink(fs, EXT2_ROOT_INO, "sl", 2);
			ext2_unmount(fs);
		}
		oob += r->oob;
		ram_free(r);
	}
	ok(oob == 0, "fuzz: %ld corrupted images, %d mounted, no out-of-range device access", iters, mounted);
	ram_free(good);
}

/* ---- the directory index against a model ------------------------------------- */

#define MD_DIRS 10   /* more than the driver indexes at once */
#define MD_NAMES 600

struct mnode {
	uint32_t ino;
	char kind; /* 'f'ile, 'd'irectory, 'l'ink; 0: absent */
};

static void md_name(char *buf, size_t size, int d, int i)
{
	snprintf(buf, size, "a-name-long-enough-to-fill-blocks-%d-%04d", d, i);
}

/* Every name of the model looks up as it should, and readdir of each
 * directory lists exactly the model's names.  Returns the mismatches. */
static int md_check(struct ext2_fs *fs, const uint32_t *dirs, struct mnode (*m)[MD_NAMES])
{
	int bad = 0;
	char name[96];
	for (int d = 0; d < MD_DIRS; d++) {
		int want = 2;
		for (int i = 0; i < MD_NAMES; i++) {
			uint32_t x = 0;
			md_name(name, sizeof name, d, i);
			int e = ext2_lookup(fs, dirs[d], name, strlen(name), &x);
			int b1 = m[d][i].kind ? e != 0 || x != m[d][i].ino : e != -ENOENT;
			if (b1 && bad < 5)
				printf("# dx check: %s: %d (%u), model %c %u\n", name, e, x, m[d][i].kind ? m[d][i].kind : '-',
				       m[d][i].ino);
			bad += b1;
			want += m[d][i].kind != 0;
		}
		uint64_t pos = 0;
		struct ext2_dirent de;
		int listed = 0, e;
		static uint8_t seen[MD_NAMES];
		memset(seen, 0, sizeof seen);
		while ((e = ext2_readdir(fs, dirs[d], &pos, &de)) == 1) {
			int dd, i;
			listed++;
			if (de.name[0] == '.')
				continue;
			if (sscanf(de.name, "a-name-long-enough-to-fill-blocks-%d-%d", &dd, &i) != 2 || dd != d || i < 0 ||
			    i >= MD_NAMES || seen[i]++ || !m[d][i].kind || m[d][i].ino != de.ino)
				bad++;
		}
		if ((e != 0 || listed != want) && bad < 5)
			printf("# dx check: readdir of big%d: %d, %d listed, want %d\n", d, e, listed, want);
		bad += e != 0 || listed != want;
	}
	return bad;
}

/* Random creates, mkdirs, symlinks, links, unlinks, rmdirs and renames
 * (within and between directories, over existing names) in big
 * directories, with the index's memory failing now and then: every result
 * is what the model says, and the directories stay right on disk. */
static void test_dir_index(int bs)
{
	TMP_PATH(img, "dx.img");
	ok(mkfs(img, bs, 65536, NULL) == 0, "[%d] dx: mke2fs", bs);
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	static struct mnode m[MD_DIRS][MD_NAMES];
	memset(m, 0, sizeof m);
	uint32_t dirs[MD_DIRS];
	char name[96], name2[96];
	int bad = 0;
	for (int d = 0; d < MD_DIRS; d++) {
		snprintf(name, sizeof name, "big%d", d);
		bad += create(fs, EXT2_ROOT_INO, name, EXT2_S_IFDIR | 0755, &dirs[d]) != 0;
		for (int i = 0; i < MD_NAMES; i += 1 + (int)(rnd() % 4)) { /* the indexes grow later */
			md_name(name, sizeof name, d, i);
			bad += create(fs, dirs[d], name, 0644, &m[d][i].ino) != 0;
			m[d][i].kind = 'f';
		}
	}
	ok(bad == 0, "[%d] dx: %d directories filled", bs, MD_DIRS);
	long ops = getenv("EXT2_DX_OPS") ? atol(getenv("EXT2_DX_OPS")) : 12000;
	int wrong = 0, checks = 0, failing_ops = 0;
	bool failing = false;
	for (long op = 0; op < ops; op++) {
		if (op % 300 == 0)
			failing = rnd() % 3 == 0; /* then half of the operations cannot allocate */
		alloc_fail = failing && rnd() % 2 == 0;
		failing_ops += alloc_fail;
		int d = (int)(rnd() % MD_DIRS), i = (int)(rnd() % MD_NAMES);
		int d2 = rnd() % 3 ? d : (int)(rnd() % MD_DIRS), i2 = (int)(rnd() % MD_NAMES);
		struct mnode *a = &m[d][i], *b = &m[d2][i2];
		md_name(name, sizeof name, d, i);
		md_name(name2, sizeof name2, d2, i2);
		size_t len = strlen(name), len2 = strlen(name2);
		uint32_t x = 0;
		int e, want;
		switch (rnd() % 10) {
		case 0: case 1: /* create */
			e = create(fs, dirs[d], name, 0644, &x);
			want = a->kind ? -EEXIST : 0;
			if (!e)
				*a = (struct mnode){ x, 'f' };
			break;
		case 2: /* mkdir */
			e = create(fs, dirs[d], name, EXT2_S_IFDIR | 0755, &x);
			want = a->kind ? -EEXIST : 0;
			if (!e)
				*a = (struct mnode){ x, 'd' };
			break;
		case 3: /* symlink */
			e = ext2_symlink(fs, dirs[d], name, len, "target", 6, &x);
			want = a->kind ? -EEXIST : 0;
			if (!e)
				*a = (struct mnode){ x, 'l' };
			break;
		case 4: /* link to a file elsewhere */
			if (b->kind != 'f')
				continue;
			e = ext2_link(fs, dirs[d], name, len, b->ino);
			want = a->kind ? -EEXIST : 0;
			if (!e)
				*a = *b;
			break;
		case 5: /* unlink */
			e = ext2_unlink(fs, dirs[d], name, len);
			want = !a->kind ? -ENOENT : a->kind == 'd' ? -EISDIR : 0;
			if (!e)
				a->kind = 0;
			break;
		case 6: /* rmdir */
			e = ext2_rmdir(fs, dirs[d], name, len);
			want = !a->kind ? -ENOENT : a->kind != 'd' ? -ENOTDIR : 0;
			if (!e)
				a->kind = 0;
			break;
		case 7: case 8: /* rename, maybe over an existing name */
			e = ext2_rename(fs, dirs[d], name, len, dirs[d2], name2, len2);
			if (!a->kind)
				want = -ENOENT;
			else if (!b->kind)
				want = 0;
			else if (a->ino == b->ino)
				want = 0; /* the same inode (or the same name): nothing changes */
			else if (a->kind == 'd' && b->kind != 'd')
				want = -ENOTDIR;
			else if (a->kind != 'd' && b->kind == 'd')
				want = -EISDIR;
			else
				want = 0;
			if (!e && a->kind && !(b->kind && a->ino == b->ino)) {
				*b = *a;
				a->kind = 0;
			}
			break;
		default: /* lookups, of names that may be there and of names never there */
			e = ext2_lookup(fs, dirs[d], name, len, &x);
			want = a->kind ? 0 : -ENOENT;
			if (!e && x != a->ino)
				e = -1000;
			snprintf(name2, sizeof name2, "never-there-%ld", op);
			if (ext2_lookup(fs, dirs[d], name2, strlen(name2), &x) != -ENOENT)
				e = -1001;
			break;
		}
		if (e != want && wrong++ < 5)
			printf("# dx op %ld: %s -> %s: %d, want %d\n", op, name, name2, e, want);
		if (op % 2000 == 1999) {
			int b2 = md_check(fs, dirs, m);
			checks += b2 == 0;
			wrong += b2;
		}
	}
	alloc_fail = false;
	ok(wrong == 0, "[%d] dx: %ld operations (%d with memory failing) as the model says, %d full checks",
	   bs, ops, failing_ops, checks);
	ok(md_check(fs, dirs, m) == 0, "[%d] dx: every name and every listing right", bs);
	ok(ext2_unmount(fs) == 0 && r->oob == 0, "[%d] dx: unmount", bs);
	ram_save(r, img);
	ok(fsck(img) == 0, "[%d] dx: e2fsck -fn clean", bs);
	fs = mount_ok(r, 1);
	if (fs) {
		ok(md_check(fs, dirs, m) == 0, "[%d] dx: remounted, the disk agrees", bs);
		ext2_unmount(fs);
	}
	ram_free(r);
}

/* Indexed directories removed, and their inode numbers used again. */
static void test_dir_index_reuse(void)
{
	TMP_PATH(img, "dxr.img");
	ok(mkfs(img, 1024, 8192, NULL) == 0, "dx reuse: mke2fs");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	char name[96];
	uint32_t x, big, again, dst, src;
	int bad = 0;
	for (int round = 0; round < 2; round++) {
		const char *dname = round ? "dst" : "big";
		bad += create(fs, EXT2_ROOT_INO, dname, EXT2_S_IFDIR | 0755, round ? &dst : &big) != 0;
		for (int i = 0; i < 200; i++) {
			md_name(name, sizeof name, round, i);
			bad += create(fs, round ? dst : big, name, 0644, &x) != 0;
		}
		for (int i = 0; i < 200; i++) {
			md_name(name, sizeof name, round, i);
			bad += ext2_unlink(fs, round ? dst : big, name, strlen(name)) != 0;
		}
		bad += count_entries(fs, round ? dst : big) != 2;
	}
	ok(bad == 0, "dx reuse: two big directories filled and emptied");
	ok(ext2_rmdir(fs, EXT2_ROOT_INO, "big", 3) == 0, "dx reuse: rmdir the first");
	ok(create(fs, EXT2_ROOT_INO, "again", EXT2_S_IFDIR | 0755, &again) == 0 && create(fs, again, "one", 0644, &x) == 0,
	   "dx reuse: a new directory (inode %u, was %u)", again, big);
	md_name(name, sizeof name, 0, 7);
	ok(ext2_lookup(fs, again, name, strlen(name), &x) == -ENOENT && ext2_lookup(fs, again, "one", 3, &x) == 0 &&
	   count_entries(fs, again) == 3, "dx reuse: it holds just its own names");
	ok(create(fs, EXT2_ROOT_INO, "src", EXT2_S_IFDIR | 0755, &src) == 0 &&
	   ext2_rename(fs, EXT2_ROOT_INO, "src", 3, EXT2_ROOT_INO, "dst", 3) == 0 &&
	   ext2_lookup(fs, EXT2_ROOT_INO, "dst", 3, &x) == 0 && x == src, "dx reuse: rename over the second");
	ok(create(fs, EXT2_ROOT_INO, "third", EXT2_S_IFDIR | 0755, &x) == 0 && create(fs, x, "f", 0644, NULL) == 0 &&
	   count_entries(fs, x) == 3, "dx reuse: another new directory (inode %u, was %u)", x, dst);
	ok(ext2_unmount(fs) == 0, "dx reuse: unmount");
	ram_save(r, img);
	ok(fsck(img) == 0, "dx reuse: e2fsck -fn clean");
	ram_free(r);
}

/* A directory block that goes bad after the directory was indexed: -EIO,
 * and from then on the directory behaves as it did without an index. */
static void test_dir_index_corrupt(void)
{
	TMP_PATH(img, "dxc.img");
	ok(mkfs(img, 1024, 8192, NULL) == 0, "dx corrupt: mke2fs");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	uint32_t dir, x;
	char name[96];
	int bad = create(fs, EXT2_ROOT_INO, "big", EXT2_S_IFDIR | 0755, &dir) != 0;
	for (int i = 0; i < 300; i++) {
		md_name(name, sizeof name, 0, i);
		bad += create(fs, dir, name, 0644, &x) != 0;
	}
	ok(bad == 0 && ext2_unmount(fs) == 0, "dx corrupt: 300 names made");
	struct ram *good = ram_new(r->data, r->size);
	fs = mount_ok(r, 0);
	if (!fs)
		return;
	ok(lookup_path(fs, "/big/a-name-long-enough-to-fill-blocks-0-0001") != 0, "dx corrupt: a lookup (indexes)");
	md_name(name, sizeof name, 0, 150);
	uint8_t *hit = memmem(r->data, r->size, name, strlen(name));
	ok(hit != NULL, "dx corrupt: found the record of entry 150");
	if (!hit) {
		ext2_unmount(fs);
		ram_free(r);
		ram_free(good);
		return;
	}
	put16(r, (uint64_t)(hit - r->data) - 8 + 4, 3); /* its rec_len */
	uint32_t first = 0;
	int e1 = ext2_lookup(fs, dir, name, strlen(name), &x);
	md_name(name, sizeof name, 0, 1);
	int e2 = ext2_lookup(fs, dir, name, strlen(name), &first);
	md_name(name, sizeof name, 0, 299);
	int e3 = ext2_lookup(fs, dir, name, strlen(name), &x);
	int e4 = ext2_create(fs, dir, "new", 3, 0644, &x);
	ok(e1 == -EIO && e2 == 0 && first && e3 == -EIO && e4 == -EIO,
	   "dx corrupt: -EIO for it; a name before it still found, one after and a create -EIO, as by a scan "
	   "(%d %d %d %d)", e1, e2, e3, e4);
	ok(ext2_unmount(fs) == 0 && r->oob == 0 && (r->data[1024 + 58] & 2), "dx corrupt: unmount marks errors");
	ram_free(r);

	/* random damage to an indexed directory's blocks, before or after the
	 * index is built: nothing may crash or stray */
	ram_save(good, img);
	uint32_t blocks[64];
	int nb = 0;
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "PATH=/usr/sbin:/sbin:$PATH; debugfs -R 'blocks /big' %s 2>/dev/null", img);
	FILE *p = popen(cmd, "r");
	while (p && nb < 64 && fscanf(p, "%u", &blocks[nb]) == 1)
		nb++;
	if (p)
		pclose(p);
	ok(nb >= 8, "dx corrupt: /big has %d blocks", nb);
	long iters = getenv("EXT2_FUZZ") ? atol(getenv("EXT2_FUZZ")) / 2 : 200, oob = 0;
	for (long it = 0; it < iters && nb; it++) {
		r = ram_new(good->data, good->size);
		fs = mount_ok(r, 0);
		if (!fs)
			break;
		bool early = it % 2;
		if (early)
			lookup_path(fs, "/big/a-name-long-enough-to-fill-blocks-0-0007");
		for (int k = 1 + (int)(rnd() % 6); k > 0; k--) {
			uint64_t off = (uint64_t)blocks[rnd() % nb] * 1024 + rnd() % 1024;
			r->data[off] ^= (uint8_t)(1u << (rnd() % 8));
			if (rnd() % 3 == 0)
				r->data[off] = (uint8_t)rnd();
		}
		if (early) { /* the cache may hold good copies: push them out with small writes */
			uint32_t f;
			if (ext2_create(fs, EXT2_ROOT_INO, "filler", 6, 0644, &f) == 0)
				for (uint64_t b = 0; b < 1200; b++)
					ext2_write(fs, f, b * 1024, "x", 1);
		}
		for (int op = 0; op < 40; op++) {
			int i = (int)(rnd() % 320), j = (int)(rnd() % 320);
			char n2[96];
			md_name(name, sizeof name, 0, i);
			md_name(n2, sizeof n2, 0, j);
			switch (rnd() % 5) {
			case 0: ext2_lookup(fs, dir, name, strlen(name), &x); break;
			case 1: ext2_create(fs, dir, name, strlen(name), 0644, &x); break;
			case 2: ext2_unlink(fs, dir, name, strlen(name)); break;
			case 3: ext2_rename(fs, dir, name, strlen(name), dir, n2, strlen(n2)); break;
			default: count_entries(fs, dir); break;
			}
		}
		ext2_unmount(fs);
		oob += r->oob;
		ram_free(r);
	}
	ok(oob == 0, "dx corrupt: %ld damaged directories, no out-of-range device access", iters);
	ram_free(good);
}

/* ---- one huge directory ---------------------------------------------------- */

static double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void huge_name(char *name, size_t size, long i)
{
	snprintf(name, size, "file-%06ld", i);
}

/* 100,000 files (EXT2_HUGE=n for another count) in one directory, each
 * with a little data: creates, lookups, unlinks and re-creates must not
 * slow down with the size of the directory, and the image stays clean.
 * Device calls and host time are reported as TAP comments. */
static void test_huge_dir(void)
{
	long n = getenv("EXT2_HUGE") ? atol(getenv("EXT2_HUGE")) : 100000;
	TMP_PATH(img, "huge.img");
	ok(sh("mke2fs -q -t ext2 -b 4096 -N 120000 -F %s 524288k >/dev/null 2>&1", img) == 0,
	   "huge: mke2fs 512 MiB, 4 KiB blocks, 120000 inodes");
	struct ram *r = ram_load(img);
	struct ext2_fs *fs = mount_ok(r, 0);
	if (!fs)
		return;
	uint32_t *inos = calloc(n, sizeof *inos), dir;
	uint8_t *seen = calloc(n, 1);
	char name[64], data[64], got[64];
	ok(create(fs, EXT2_ROOT_INO, "huge", EXT2_S_IFDIR | 0755, &dir) == 0, "huge: mkdir");

	/* create, each with a small write */
	int bad = 0;
	ram_count_reset(r);
	double t0 = now_sec(), t20k = 0;
	long r20k = 0, w20k = 0;
	for (long i = 0; i < n; i++) {
		huge_name(name, sizeof name, i);
		int len = snprintf(data, sizeof data, "data of %ld", i);
		bad += create(fs, dir, name, 0644, &inos[i]) != 0;
		bad += ext2_write(fs, inos[i], 0, data, len) != len;
		if (i + 1 == 20000) {
			t20k = now_sec() - t0;
			r20k = r->reads, w20k = r->writes;
		}
	}
	double tc = now_sec() - t0;
	long rc = r->reads, wc = r->writes;
	ok(bad == 0, "huge: %ld files created and written", n);
	if (n >= 20000)
		printf("# huge: first 20000 creates+writes: %.2f s, %ld device reads, %ld device writes\n", t20k, r20k,
		       w20k);
	printf("# huge: %ld creates+writes: %.2f s, %ld device reads, %ld device writes\n", n, tc, rc, wc);
	ok(tc < 20, "huge: %ld creates in %.2f s (limit 20 s)", n, tc);

	/* every name, then names that are not there */
	ram_count_reset(r);
	t0 = now_sec();
	bad = 0;
	for (long i = 0; i < n; i++) {
		uint32_t x = 0;
		huge_name(name, sizeof name, i);
		bad += ext2_lookup(fs, dir, name, strlen(name), &x) != 0 || x != inos[i];
	}
	printf("# huge: %ld lookups: %.2f s, %ld device reads\n", n, now_sec() - t0, r->reads);
	ok(bad == 0, "huge: every name looks up to its inode");
	ram_count_reset(r);
	t0 = now_sec();
	bad = 0;
	for (long i = 0; i < n; i++) {
		uint32_t x;
		snprintf(name, sizeof name, "missing-%ld", i);
		bad += ext2_lookup(fs, dir, name, strlen(name), &x) != -ENOENT;
	}
	printf("# huge: %ld lookups of missing names: %.2f s, %ld device reads\n", n, now_sec() - t0, r->reads);
	ok(bad == 0 && r->reads <= 50, "huge: missing names: -ENOENT, %ld device reads", r->reads);

	/* unlink every third, re-create every ninth */
	ram_count_reset(r);
	t0 = now_sec();
	bad = 0;
	long live = n;
	for (long i = 0; i < n; i += 3) {
		huge_name(name, sizeof name, i);
		bad += ext2_unlink(fs, dir, name, strlen(name)) != 0;
		live--;
	}
	printf("# huge: %ld unlinks: %.2f s, %ld device reads, %ld device writes\n", n - live, now_sec() - t0,
	       r->reads, r->writes);
	ok(bad == 0, "huge: every third unlinked");
	bad = 0;
	for (long i = 0; i < n; i++) {
		uint32_t x;
		huge_name(name, sizeof name, i);
		int e = ext2_lookup(fs, dir, name, strlen(name), &x);
		bad += i % 3 ? e != 0 || x != inos[i] : e != -ENOENT;
	}
	ok(bad == 0, "huge: unlinked names are gone, the others stay");
	ram_count_reset(r);
	t0 = now_sec();
	bad = 0;
	for (long i = 0; i < n; i += 9) {
		huge_name(name, sizeof name, i);
		int len = snprintf(data, sizeof data, "again %ld", i);
		bad += create(fs, dir, name, 0644, &inos[i]) != 0;
		bad += ext2_write(fs, inos[i], 0, data, len) != len;
		bad += create(fs, dir, name, 0644, NULL) != -EEXIST;
		live++;
	}
	printf("# huge: %ld re-creates: %.2f s, %ld device reads, %ld device writes\n", (n + 8) / 9, now_sec() - t0,
	       r->reads, r->writes);
	ok(bad == 0, "huge: every ninth re-created (and a second create: -EEXIST)");

	/* readdir lists each live name exactly once */
	ram_count_reset(r);
	t0 = now_sec();
	uint64_t pos = 0;
	struct ext2_dirent de;
	long listed = 0, wrong = 0;
	int e;
	while ((e = ext2_readdir(fs, dir, &pos, &de)) == 1) {
		long i;
		char c;
		listed++;
		if (!strcmp(de.name, ".") || !strcmp(de.name, ".."))
			continue;
		if (sscanf(de.name, "file-%ld%c", &i, &c) != 1 || i < 0 || i >= n || seen[i]++ || de.ino != inos[i] ||
		    (i % 3 == 0 && i % 9))
			wrong++;
	}
	printf("# huge: readdir of %ld entries: %.2f s, %ld device reads\n", listed, now_sec() - t0, r->reads);
	ok(e == 0 && listed == live + 2 && wrong == 0, "huge: readdir lists %ld entries (want %ld), %ld wrong", listed,
	   live + 2, wrong);

	/* the data, before and after a sync */
	bad = 0;
	for (long i = 0; i < n; i++) {
		if (i % 3 == 0 && i % 9)
			continue;
		int len = snprintf(data, sizeof data, i % 9 ? "data of %ld" : "again %ld", i);
		bad += ext2_read(fs, inos[i], 0, got, sizeof got) != len || memcmp(got, data, len);
	}
	ok(bad == 0, "huge: every file reads back its data");
	ram_count_reset(r);
	t0 = now_sec();
	ok(ext2_sync(fs) == 0, "huge: sync");
	printf("# huge: sync: %.2f s, %ld device writes\n", now_sec() - t0, r->writes);
	ram_save(r, img);
	ok(fsck(img) == 0, "huge: e2fsck -fn clean after sync");
	ok(debugfs_cat_is(img, "/huge/file-000001", "data of 1", 9) && debugfs_cat_is(img, "/huge/file-000009", "again 9", 7),
	   "huge: debugfs cat two files");

	/* again from the disk alone */
	ok(ext2_unmount(fs) == 0 && r->oob == 0, "huge: unmount");
	fs = mount_ok(r, 0);
	if (fs) {
		ram_count_reset(r);
		t0 = now_sec();
		bad = 0;
		for (long i = 0; i < n; i += 7) {
			uint32_t x = 0;
			huge_name(name, sizeof name, i);
			int e2 = ext2_lookup(fs, dir, name, strlen(name), &x);
			bad += i % 3 == 0 && i % 9 ? e2 != -ENOENT : e2 != 0 || x != inos[i];
		}
		printf("# huge: remount, %ld lookups: %.2f s, %ld device reads\n", (n + 6) / 7, now_sec() - t0, r->reads);
		ok(bad == 0 && count_entries(fs, dir) == live + 2, "huge: remount: lookups and readdir agree");
		for (long i = 1; i < n; i += 3) {
			huge_name(name, sizeof name, i);
			bad += ext2_unlink(fs, dir, name, strlen(name)) != 0;
			live--;
		}
		ok(bad == 0 && count_entries(fs, dir) == live + 2, "huge: remount: unlink another third");
		ok(ext2_unmount(fs) == 0, "huge: unmount again");
		ram_save(r, img);
		ok(fsck(img) == 0, "huge: e2fsck -fn clean after the remount");
	}
	free(inos);
	free(seen);
	ram_free(r);
}

int main(void)
{
	alarm(900); /* a hang fails the test */
	if (getenv("EXT2_SEED"))
		rng_state ^= strtoull(getenv("EXT2_SEED"), NULL, 0) * 0x2545f4914f6cdd1dull;
	snprintf(tmp, sizeof tmp, "%s/husk-ext2-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	if (sh("command -v mke2fs >/dev/null && command -v e2fsck >/dev/null && command -v debugfs >/dev/null")) {
		printf("1..0 # SKIP e2fsprogs not installed\n");
		return 0;
	}
	const char *only = getenv("EXT2_ONLY"); /* e.g. EXT2_ONLY=huge: just that test */
#define RUN(name, call) do { if (!only || !strcmp(only, name)) call; } while (0)
	RUN("prefilled", test_prefilled(1024));
	RUN("prefilled", test_prefilled(4096));
	RUN("rw", test_rw(1024));
	RUN("rw", test_rw(4096));
	RUN("htree", test_htree());
	RUN("two_mounts", test_two_mounts());
	RUN("rev0", test_rev0());
	RUN("xattr_block", test_xattr_block());
	RUN("enospc", test_enospc());
	RUN("bad_superblocks", test_bad_superblocks());
	RUN("corrupt_files", test_corrupt_files());
	RUN("fuzz", test_fuzz());
	RUN("dir_index", test_dir_index(1024));
	RUN("dir_index", test_dir_index(4096));
	RUN("dir_index_reuse", test_dir_index_reuse());
	RUN("dir_index_corrupt", test_dir_index_corrupt());
	RUN("huge_dir", test_huge_dir());
#undef RUN
	if (!getenv("KEEP")) sh("rm -rf %s", tmp);
	return tap_done();
}
