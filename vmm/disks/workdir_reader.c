/* SPDX-License-Identifier: GPL-2.0-only */
/* The workdir reader: a child process that parses the guest's ext2 image
 * (untrusted) with libext2fs and streams its tree to the writer.  It keeps
 * only the image and the stream pipe, confines itself before it reads a
 * byte of the image, and streams entries as it finds them: its memory is a
 * block buffer per directory level plus a table of multi-link files, all
 * within the entry budget. */
#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "disks/extract_stream.h"
#include "husk/abi.h"
#include "disks/workdir_reader.h"

#define IMAGE_FD 3
#define STREAM_FD 4
#define CHUNK 65536
/* The reader's address space: libext2fs' tables for a 1 TiB image and the
 * walk's buffers fit many times over. */
#define READER_AS (512ull << 20)

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* The raw system call: a sanitizer's _exit would make calls the filter forbids. */
static _Noreturn void child_exit(int code)
{
	for (;;)
		syscall(SYS_exit_group, code);
}

static void put(const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(STREAM_FD, p, n);
		if (k <= 0)
			child_exit(3);
		p = (const char *)p + k, n -= k;
	}
}

static void emit(uint8_t type, const char *name, size_t len, ext2_ino_t ino, const struct ext2_inode *in,
		 uint64_t size)
{
	struct rec r = { .type = type, .name_len = (uint16_t)len, .size = size, .ino = ino };
	if (in) {
		r.mode = in->i_mode;
		r.mtime = in->i_mtime;
		r.touched = in->i_generation == HUSK_EXT2_TOUCHED;
	}
	put(&r, sizeof r);
	put(name, len);
}

static _Noreturn void give_up(enum reader_error why)
{
	emit(R_ERROR, "", 0, 0, NULL, why);
	child_exit(0);
}

/* ---- budgets ------------------------------------------------------------ */

static struct extract_limits budget;
static uint64_t entries, bytes;

/* Bytes sent, and bytes the reader keeps (first paths of linked files). */
static void charge(uint64_t n)
{
	if (n > budget.max_bytes - bytes)
		give_up(RE_BYTES);
	bytes += n;
}

/* Every record counts, whatever the writer will make of it. */
static void count(uint64_t data)
{
	if (++entries > budget.max_files)
		give_up(RE_ENTRIES);
	charge(data);
}

/* ---- sets: directories seen (a loop is corruption), files with several
 * names (sent once, then as links to the first path), and the names of
 * the directory being walked (a name twice is corruption) ---------------- */

struct seen {
	uint64_t ino; /* the key: an inode number, or a name's hash; 0: free */
	char *path;   /* first path, for files with several names */
};
struct seen_set {
	struct seen *t;
	size_t n, cap;
};
static struct seen_set dirs_seen, linked;

static struct seen *seen_slot(struct seen_set *s, uint64_t ino)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct seen *t = calloc(cap, sizeof *t);
		if (!t)
			give_up(RE_MEMORY);
		for (size_t i = 0; i < s->cap; i++)
			if (s->t[i].ino) {
				size_t j = s->t[i].ino % cap;
				while (t[j].ino)
					j = (j + 1) % cap;
				t[j] = s->t[i];
			}
		free(s->t);
		s->t = t, s->cap = cap;
	}
	size_t j = ino % s->cap;
	while (s->t[j].ino && s->t[j].ino != ino)
		j = (j + 1) % s->cap;
	return &s->t[j];
}

/* ---- entries ------------------------------------------------------------ */

static char cur_path[MAX_PATH]; /* the entry being walked, from the top */

static void emit_file(ext2_filsys fs, ext2_ino_t ino, const char *name, size_t len, struct ext2_inode *in)
{
	uint64_t size = EXT2_I_SIZE(in);
	count(size);
	emit(R_FILE, name, len, ino, in, size);
	ext2_file_t f;
	static char buf[CHUNK];
	uint64_t sent = 0;
	if (ext2fs_file_open(fs, ino, 0, &f) == 0) {
		while (sent < size) {
			unsigned int got = 0;
			if (ext2fs_file_read(f, buf, CHUNK, &got) || !got)
				break;
			if (got > size - sent)
				got = (unsigned)(size - sent);
			put(buf, got);
			sent += got;
		}
		ext2fs_file_close(f);
	}
	if (sent < size) /* unreadable: the writer drops the partial file */
		give_up(RE_CORRUPT);
}

static void emit_symlink(ext2_filsys fs, ext2_ino_t ino, const char *name, size_t len, struct ext2_inode *in)
{
	uint64_t size = EXT2_I_SIZE(in);
	char target[4096] = "";
	if (size >= sizeof target || size == 0)
		give_up(RE_CORRUPT);
	if (ext2fs_is_fast_symlink(in)) {
		memcpy(target, in->i_block, size < sizeof in->i_block ? size : sizeof in->i_block);
	} else {
		char *block = malloc(fs->blocksize);
		if (!block)
			give_up(RE_MEMORY);
		if (io_channel_read_blk64(fs->io, in->i_block[0], 1, block))
			give_up(RE_CORRUPT);
		memcpy(target, block, size < fs->blocksize ? size : fs->blocksize);
		free(block);
	}
	count(size);
	emit(R_SYMLINK, name, len, ino, in, size);
	put(target, size);
}

/* A file with several names: the first is sent whole, the others as links. */
static int emit_if_link(ext2_ino_t ino, const char *name, size_t len, struct ext2_inode *in, size_t plen)
{
	if (in->i_links_count < 2)
		return 0;
	struct seen *l = seen_slot(&linked, ino);
	if (l->ino) {
		size_t n = strlen(l->path);
		count(n);
		emit(R_LINK, name, len, ino, in, n);
		put(l->path, n);
		return 1;
	}
	charge(plen);
	if (!(l->path = strndup(cur_path, plen)))
		give_up(RE_MEMORY);
	l->ino = ino;
	linked.n++;
	return 0;
}

static void walk_dir(ext2_filsys fs, ext2_ino_t dir, int depth, size_t plen);

struct walk {
	ext2_filsys fs;
	int depth;
	size_t plen; /* the length of cur_path: the directory's path */
	struct seen_set names;
};

static uint64_t name_key(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: a set key, not a digest */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h | 1;
}

/* One directory entry, sent as soon as it is found (nothing is collected). */
static int entry(struct ext2_dir_entry *d, int off, int bs, char *buf, void *priv)
{
	(void)off, (void)bs, (void)buf;
	struct walk *w = priv;
	size_t len = ext2fs_dirent_name_len(d);
	const char *name = d->name;
	if (!d->inode || (len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	if (w->depth == 0 && len == 14 && !memcmp(name, ".husk-unlinked", 14))
		return 0; /* the guest's open unlinked files */
	struct seen *twice = seen_slot(&w->names, name_key(name, len));
	if (twice->ino)
		give_up(RE_CORRUPT);
	twice->ino = name_key(name, len);
	w->names.n++;
	struct ext2_inode in;
	if (d->inode > w->fs->super->s_inodes_count || ext2fs_read_inode(w->fs, d->inode, &in))
		give_up(RE_CORRUPT);
	size_t sub = w->plen + (w->plen != 0) + len; /* "dir/name" */
	if (sub >= MAX_PATH)
		give_up(RE_DEPTH);
	if (w->plen)
		cur_path[w->plen] = '/';
	memcpy(cur_path + w->plen + (w->plen != 0), name, len);
	if (LINUX_S_ISDIR(in.i_mode)) {
		count(0);
		emit(R_DIR, name, len, d->inode, &in, 0);
		walk_dir(w->fs, d->inode, w->depth + 1, sub);
		emit(R_UP, "", 0, 0, NULL, 0);
	} else if (LINUX_S_ISREG(in.i_mode)) {
		if (!emit_if_link(d->inode, name, len, &in, sub))
			emit_file(w->fs, d->inode, name, len, &in);
	} else if (LINUX_S_ISLNK(in.i_mode)) {
		emit_symlink(w->fs, d->inode, name, len, &in);
	} else {
		count(0);
		emit(R_OTHER, name, len, d->inode, &in, 0);
	}
	return 0;
}

static void walk_dir(ext2_filsys fs, ext2_ino_t dir, int depth, size_t plen)
{
	if (depth > MAX_DEPTH)
		give_up(RE_DEPTH);
	struct seen *s = seen_slot(&dirs_seen, dir);
	if (s->ino)
		give_up(RE_LOOP);
	s->ino = dir;
	dirs_seen.n++;
	struct walk w = { fs, depth, plen, { 0 } };
	if (ext2fs_dir_iterate(fs, dir, 0, NULL, entry, &w))
		give_up(RE_CORRUPT);
	free(w.names.t);
}

/* ---- confinement ------------------------------------------------------- */

/* Only the image and the stream pipe stay open; stdio goes to /dev/null
 * (sanitizer builds keep stderr for their reports). */
static void keep_two_fds(int image, int stream)
{
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", image);
	int ro = open(self, O_RDONLY | O_CLOEXEC); /* the image, read-only from here */
	if (ro >= 0)
		image = ro;
	if (dup2(image, IMAGE_FD + 16) < 0 || dup2(stream, STREAM_FD + 16) < 0 ||
	    dup2(IMAGE_FD + 16, IMAGE_FD) < 0 || dup2(STREAM_FD + 16, STREAM_FD) < 0)
		child_exit(2);
	close_range(STREAM_FD + 1, ~0u, 0);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		child_exit(2);
	dup2(null, 0), dup2(null, 1);
#ifndef SANITIZED
	dup2(null, 2);
#endif
	close(null);
}

static void confine(void)
{
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);
	setrlimit(RLIMIT_NOFILE, &(struct rlimit){ STREAM_FD + 1, STREAM_FD + 1 });
#ifndef SANITIZED /* the sanitizers' shadow memory needs terabytes of address space */
	setrlimit(RLIMIT_AS, &(struct rlimit){ READER_AS, READER_AS });
#endif
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	const int anyfd[] = { SCMP_SYS(close), SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
			      SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
			      SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid) /* unixfd_open */,
			      SCMP_SYS(sigaltstack) /* sanitizer builds, at exit */ };
	const int imagefd[] = { SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(lseek), SCMP_SYS(fstat),
				SCMP_SYS(newfstatat), SCMP_SYS(fcntl), SCMP_SYS(fadvise64), SCMP_SYS(fsync) /* at open */ };
	int ok = ctx && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
	for (size_t i = 0; ok && i < sizeof anyfd / sizeof anyfd[0]; i++)
		ok = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, anyfd[i], 0) == 0;
	for (size_t i = 0; ok && i < sizeof imagefd / sizeof imagefd[0]; i++)
		ok = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, imagefd[i], 1, SCMP_A0(SCMP_CMP_EQ, IMAGE_FD)) == 0;
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, STREAM_FD)) == 0;
	/* libext2fs probes the image for block-device features: it is a file */
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 0) == 0;
	/* libext2fs asks whether it may trust the environment */
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_DUMPABLE)) == 0;
	if (!ok || seccomp_load(ctx))
		child_exit(2);
	seccomp_release(ctx);
}

static _Noreturn void reader(int image, int stream, const struct extract_limits *lim)
{
	signal(SIGPIPE, SIG_DFL);
	keep_two_fds(image, stream);
	budget = *lim;
	initialize_ext2_error_table();
	confine();
	ext2_filsys fs;
	char name[16];
	snprintf(name, sizeof name, "%d", IMAGE_FD);
	if (ext2fs_open(name, EXT2_FLAG_64BITS, 0, 0, unixfd_io_manager, &fs))
		give_up(RE_CORRUPT);
	walk_dir(fs, EXT2_ROOT_INO, 0, 0);
	emit(R_END, "", 0, 0, NULL, 0);
	child_exit(0);
}

pid_t workdir_reader_start(int image_fd, const struct extract_limits *lim, int *stream)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		reader(image_fd, p[1], lim);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*stream = p[0];
	return pid;
}
