/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/copyin.c: opening directories without symlinks, and host trees
 * copied into ext2 images, checked with e2fsck -fn and read back through
 * libext2fs against the host (contents, modes, owners, times, links, the
 * record). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>
#include "disks/copyin.h"
#include "tap.h"

static char tmp[256], err[1024];

/* Declares char var[] holding tmp/name. */
#define TMP_PATH(var, name) \
	char var[1024]; \
	snprintf(var, sizeof var, "%s/%s", tmp, name)

/* Runs argv (no shell), its output dropped; its exit status. */
static int run(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1), dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void put(const char *rel, const void *data, size_t len, mode_t mode)
{
	TMP_PATH(p, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		perror(p);
	fchmod(fd, mode);
	close(fd);
}

static void mk(const char *rel)
{
	TMP_PATH(p, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		perror(p);
}

/* ---- the tree ------------------------------------------------------------------ */

static char big[5 << 20]; /* past the double-indirect blocks */
static char long_target[3000];
static char long_name[256];

static void make_tree(void)
{
	mk("t");
	mk("t/sub");
	mk("t/sub/deep");
	mk("t/sub/deep/deeper");
	mk("t/empty");
	mk("t/many");
	put("t/a.txt", "hello\n", 6, 0640);
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)(i * 2654435761u >> 13);
	put("t/sub/big", big, sizeof big, 0600);
	put("t/empty.txt", "", 0, 0444);
	put("t/name with\nnewline", "odd", 3, 0644);
	put("t/\xff\x01raw", "raw", 3, 0644);
	memset(long_name, 'n', 255);
	TMP_PATH(ln, "t/");
	strcat(ln, long_name);
	int fd = open(ln, O_WRONLY | O_CREAT, 0644);
	close(fd);
	memset(long_target, 'x', sizeof long_target - 1);
	TMP_PATH(sl, "t/long");
	TMP_PATH(ss, "t/short");
	TMP_PATH(sd, "t/sub/up");
	if (symlink(long_target, sl) || symlink("a.txt", ss) || symlink("../sub", sd))
		perror("symlink");
	TMP_PATH(a, "t/a.txt");
	TMP_PATH(h1, "t/sub/hard");
	TMP_PATH(h2, "t/sub/deep/deeper/hard2");
	if (link(a, h1) || link(a, h2))
		perror("link");
	TMP_PATH(ff, "t/fifo");
	if (mkfifo(ff, 0644))
		perror("mkfifo");
	TMP_PATH(sp, "t/sparse");
	fd = open(sp, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || pwrite(fd, "tail", 4, 40 << 20) != 4 || ftruncate(fd, 64 << 20))
		perror(sp);
	close(fd);
	for (int i = 0; i < 3000; i++) { /* a directory of many blocks */
		char n[64];
		snprintf(n, sizeof n, "t/many/file-%05d-with-a-longer-name", i);
		put(n, n, strlen(n), 0644);
	}
	if (geteuid() == 0 && chown(a, 1234, 70000))
		perror("chown");
	struct timespec times[2] = { { 2000000000, 500000000 }, { 1000000000, 123456789 } };
	utimensat(AT_FDCWD, a, times, 0);
	struct timespec old[2] = { { -100, 0 }, { 5000000000, 7 } }; /* before 1970, after 2038 */
	TMP_PATH(e, "t/empty.txt");
	utimensat(AT_FDCWD, e, old, 0);
}

/* ---- reading the image back ------------------------------------------------------- */

static int64_t decode(uint32_t sec, uint32_t extra)
{
	int64_t s = (int64_t)(int32_t)sec + ((int64_t)(extra & 3) << 32);
	return s * 1000000000 + (extra >> 2);
}

static int64_t ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static bool same_data(ext2_filsys fs, ext2_ino_t ino, const char *host, uint64_t size)
{
	ext2_file_t f;
	int fd = open(host, O_RDONLY);
	if (fd < 0 || ext2fs_file_open(fs, ino, 0, &f)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	static char a[65536], b[65536];
	bool same = true;
	for (uint64_t off = 0; same && off < size;) {
		unsigned got = 0;
		size_t want = size - off < sizeof a ? (size_t)(size - off) : sizeof a;
		same = !ext2fs_file_read(f, a, (unsigned)want, &got) && got == want &&
		       pread(fd, b, want, (off_t)off) == (ssize_t)want && !memcmp(a, b, want);
		off += want;
	}
	ext2fs_file_close(f);
	close(fd);
	return same;
}

static bool same_target(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in, const char *host)
{
	char want[4096], got[4096] = "";
	ssize_t k = readlink(host, want, sizeof want);
	if (k < 0 || EXT2_I_SIZE(in) != (uint64_t)k)
		return false;
	if (k < 60) /* a fast symlink: in i_block */
		return !memcmp(in->i_block, want, (size_t)k) && !in->i_blocks;
	ext2_file_t f;
	unsigned n = 0;
	if (ext2fs_file_open(fs, ino, 0, &f) || ext2fs_file_read(f, got, (unsigned)k, &n))
		return false;
	ext2fs_file_close(f);
	return n == (unsigned)k && !memcmp(got, want, (size_t)k);
}

/* Each record entry against the host (lstat now: the tree did not change)
 * and against the image's inode at its path. */
static int check_entry(ext2_filsys fs, const struct copyin_entry *e, const char *top)
{
	char host[8192];
	snprintf(host, sizeof host, "%s%s%s", top, *e->path ? "/" : "", e->path);
	struct stat st;
	ext2_ino_t ino = 0;
	struct ext2_inode_large in;
	if (lstat(host, &st) || ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, *e->path ? e->path : ".", &ino) ||
	    ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)&in, sizeof in))
		return printf("# %s: not found\n", e->path), 0;
	bool root = !*e->path;
	bool rec_ok = e->guest_ino == ino && e->mode == st.st_mode && e->dev == st.st_dev && e->ino == st.st_ino &&
		      e->size == (uint64_t)st.st_size && e->mtime_ns == ns(st.st_mtim) && e->ctime_ns == ns(st.st_ctim);
	bool inode_ok = in.i_mode == (st.st_mode & 0xffff) && inode_uid(in) == (root ? 0 : st.st_uid) &&
			inode_gid(in) == (root ? 0 : st.st_gid) && in.i_generation == 0 &&
			decode(in.i_mtime, in.i_mtime_extra) == ns(st.st_mtim) &&
			decode(in.i_ctime, in.i_ctime_extra) == ns(st.st_ctim);
	bool data_ok = S_ISREG(st.st_mode)   ? EXT2_I_SIZE(&in) == (uint64_t)st.st_size &&
						     same_data(fs, ino, host, (uint64_t)st.st_size) &&
						     in.i_links_count == st.st_nlink
		       : S_ISLNK(st.st_mode) ? same_target(fs, ino, &in, host)
					     : in.i_links_count == st.st_nlink;
	static int shown;
	if ((!rec_ok || !inode_ok || !data_ok) && shown++ < 5)
		printf("# %s: record %d inode %d data %d\n", e->path, rec_ok, inode_ok, data_ok);
	return rec_ok && inode_ok && data_ok;
}

static bool all_generations_zero(ext2_filsys fs)
{
	ext2_inode_scan scan;
	ext2_ino_t ino;
	struct ext2_inode in;
	bool zero = !ext2fs_open_inode_scan(fs, 0, &scan);
	while (zero && !ext2fs_get_next_inode(scan, &ino, &in) && ino)
		zero = in.i_generation == 0;
	ext2fs_close_inode_scan(scan);
	return zero;
}

static void test_tree(void)
{
	make_tree();
	TMP_PATH(top, "t");
	TMP_PATH(img, "t.img");
	int dir = copyin_open_dir(top, err, sizeof err);
	ok(dir >= 0, "the tree opens (%s)", dir < 0 ? err : "");
	uint64_t bytes = 0, entries = 0;
	struct copyin_record m, rec;
	ok(copyin_measure(dir, &bytes, &entries, &m, err, sizeof err) == 0, "measured");
	ok(entries == 3018 && m.n == entries, "every entry counted but the fifo (%llu)", (unsigned long long)entries);
	ok(bytes >= sizeof big + (64 << 20), "bytes include the files' sizes");
	int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	uint64_t size = (bytes + entries * 4096 + (16 << 20)) & ~4095ull;
	int built = copyin_build(dir, fd, size, entries + 64, &rec, err, sizeof err);
	ok(built == 0, "copyin_build %s", built ? err : "");
	close(fd);
	ok(run((char *[]){ "/usr/sbin/e2fsck", "-fn", img, NULL }) == 0, "e2fsck -fn finds nothing wrong");

	ext2_filsys fs;
	ok(ext2fs_open(img, 0, 0, 0, unix_io_manager, &fs) == 0, "libext2fs opens it");
	struct ext2_super_block *s = fs->super;
	ok(s->s_log_block_size == 2 && s->s_inode_size == 256 && ext2fs_r_blocks_count(s) == 0,
	   "4 KiB blocks, 256-byte inodes, no reserved blocks");
	ok(s->s_feature_incompat == EXT2_FEATURE_INCOMPAT_FILETYPE && s->s_feature_compat == 0 &&
		   s->s_feature_ro_compat == (EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE),
	   "ext2: filetype, sparse_super, large_file; no journal, no dir_index");
	ext2_ino_t lf;
	ok(ext2fs_lookup(fs, EXT2_ROOT_INO, "lost+found", 10, NULL, &lf) == EXT2_ET_FILE_NOT_FOUND, "no lost+found");
	ok(all_generations_zero(fs), "every inode's i_generation is 0");

	int good = 0, sorted = 1;
	for (size_t i = 0; i < rec.n; i++) {
		good += check_entry(fs, &rec.e[i], top);
		sorted &= !i || strcmp(rec.e[i - 1].path, rec.e[i].path) < 0;
	}
	ok(rec.n == m.n && good == (int)rec.n, "all %zu entries: record, inode and data match the host", rec.n);
	ok(sorted, "the record is sorted by path");
	ok(rec.n && !*rec.e[0].path && rec.e[0].guest_ino == EXT2_ROOT_INO, "the top is \"\", inode 2");
	const struct copyin_entry *a = copyin_find(&rec, "a.txt"), *h1 = copyin_find(&rec, "sub/hard"),
				  *h2 = copyin_find(&rec, "sub/deep/deeper/hard2");
	ok(a && h1 && h2 && a->guest_ino == h1->guest_ino && a->guest_ino == h2->guest_ino,
	   "three names of one host file share one guest inode");
	ok(!copyin_find(&rec, "fifo") && !copyin_find(&rec, "nope") && copyin_find(&rec, "many/file-02999-with-a-longer-name"),
	   "copyin_find: nothing for the fifo, every other name found");
	ext2_ino_t ai;
	struct ext2_inode_large in;
	ok(!ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, "a.txt", &ai) &&
		   !ext2fs_read_inode_full(fs, ai, (struct ext2_inode *)&in, sizeof in) &&
		   decode(in.i_atime, in.i_atime_extra) == 2000000000500000000 &&
		   decode(in.i_mtime, in.i_mtime_extra) == 1000000000123456789 && inode_uid(in) == 1234 &&
		   inode_gid(in) == 70000 && in.i_links_count == 3,
	   "a.txt: atime and mtime to the ns, 32-bit owner, three links");
	struct ext2_inode_large od;
	ok(!ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, "empty.txt", &ai) &&
		   !ext2fs_read_inode_full(fs, ai, (struct ext2_inode *)&od, sizeof od) &&
		   decode(od.i_atime, od.i_atime_extra) == -100000000000 &&
		   decode(od.i_mtime, od.i_mtime_extra) == 5000000000000000007,
	   "times before 1970 and after 2038 survive (epoch bits)");
	ok(m.e[0].guest_ino == 0 && !strcmp(m.e[m.n - 1].path, rec.e[rec.n - 1].path), "the measure's record: same paths");
	ext2fs_close_free(&fs);
	copyin_record_free(&rec);
	copyin_record_free(&m);
	ok(rec.n == 0 && rec.e == NULL, "copyin_record_free empties it");

	fd = open(img, O_RDWR | O_TRUNC);
	ok(copyin_build(dir, fd, 16 << 20, 4000, NULL, err, sizeof err) == -1 && strstr(err, "Could not allocate"),
	   "an image too small: one line (%s)", err);
	close(fd);
	close(dir);
}

/* ---- limits ------------------------------------------------------------------------- */

static void test_depth(void)
{
	TMP_PATH(p, "d");
	size_t len = strlen(p);
	for (int i = 0; i <= COPYIN_MAX_DEPTH + 1; i++) { /* the top and 129 below */
		mkdir(p, 0755);
		len += (size_t)snprintf(p + len, sizeof p - len, "/d");
	}
	TMP_PATH(topd, "d");
	int dir = copyin_open_dir(topd, err, sizeof err);
	TMP_PATH(img, "d.img");
	int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ok(copyin_build(dir, fd, 32 << 20, 1000, NULL, err, sizeof err) == -1 && strstr(err, "deeper than 128"),
	   "129 levels: refused (%s)", err);
	uint64_t b, e;
	ok(copyin_measure(dir, &b, &e, NULL, err, sizeof err) == -1, "copyin_measure refuses it too");
	close(fd);
	close(dir);
}

/* ---- opening without symlinks ----------------------------------------------------------- */

static void test_open(void)
{
	mk("real");
	mk("real/in");
	TMP_PATH(link, "link");
	TMP_PATH(real, "real");
	if (symlink(real, link))
		perror("symlink");
	TMP_PATH(via, "link/in");
	TMP_PATH(want, "link is a symlink (give the real path)");
	ok(copyin_open_dir(via, err, sizeof err) == -1 && !strcmp(err, want), "a symlink in a component: %s", err);
	ok(copyin_open_dir(link, err, sizeof err) == -1 && !strcmp(err, want), "a symlink at the end: %s", err);
	TMP_PATH(in, "real/in");
	int fd = copyin_open_dir(in, err, sizeof err);
	ok(fd >= 0, "the real path opens");
	close(fd);
	TMP_PATH(none, "real/none");
	ok(copyin_open_dir(none, err, sizeof err) == -1 && strstr(err, "No such file"), "a missing one: %s", err);
	TMP_PATH(make, "real/new/a/b");
	fd = copyin_make_dir(make, err, sizeof err);
	struct stat st;
	ok(fd >= 0 && stat(make, &st) == 0 && S_ISDIR(st.st_mode), "copyin_make_dir makes what is missing");
	close(fd);
	TMP_PATH(through, "link/made");
	TMP_PATH(target, "real/made");
	ok(copyin_make_dir(through, err, sizeof err) == -1 && strstr(err, "is a symlink") && stat(target, &st) < 0,
	   "copyin_make_dir makes nothing through a symlink");
}

static void test_own_dir(void)
{
	TMP_PATH(c, "cache");
	int fd = copyin_own_dir(c, 0700, err, sizeof err);
	ok(fd >= 0 && stat(c, &(struct stat){ 0 }) == 0, "copyin_own_dir makes a missing one");
	close(fd);
	chmod(c, 0777);
	ok(copyin_own_dir(c, 0700, err, sizeof err) == -1 && strstr(err, "writable by group or others"), "%s", err);
	chmod(c, 0755);
	TMP_PATH(l, "cache-link");
	if (symlink(c, l))
		perror("symlink");
	ok(copyin_own_dir(l, 0700, err, sizeof err) == -1 && strstr(err, "is a symlink"), "%s", err);
	if (geteuid() == 0) {
		if (chown(c, 65534, 65534))
			perror("chown");
		ok(copyin_own_dir(c, 0700, err, sizeof err) == -1 && strstr(err, "owned by uid 65534"), "%s", err);
	} else {
		ok(1, "# SKIP another owner needs root");
	}
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/test_copyin.XXXXXX");
	if (!mkdtemp(tmp))
		return perror("mkdtemp"), 1;
	test_open();
	test_own_dir();
	test_tree();
	test_depth();
	run((char *[]){ "/bin/rm", "-rf", tmp, NULL });
	return tap_done();
}
