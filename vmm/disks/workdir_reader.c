/* SPDX-License-Identifier: GPL-2.0-only */
/* The workdir reader: a child process that parses the guest's ext2 image
 * (untrusted) with libext2fs and streams its tree to the writer.  It keeps
 * only the image, the stream pipe and (for a copy-on-write image) a socket
 * to a file server, confines itself before it reads a byte of the image,
 * and streams entries as it finds them: its memory is a block buffer per
 * directory level plus a table of multi-link files, all within the entry
 * budget.  Files the program left alone go without their data.
 *
 * A copy-on-write image (mapped.h) is read through its own io_manager: the
 * blocks the guest never wrote come from the host files.  The writer may
 * replace or remove a host file while the stream runs, and a file the
 * program renamed still needs it, so a first pass over the tree, before any
 * record goes out, opens every host file the data to be sent reads (up to
 * an fd budget; beyond it, each is opened when read).  A file whose host
 * file is already gone is sent as R_LOST. */
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
#include <setjmp.h>
#include "disks/extract_stream.h"
#include "disks/file_server.h"
#include "disks/mapped.h"
#include "husk/abi.h"
#include "disks/workdir_reader.h"

#define IMAGE_FD 3
#define STREAM_FD 4
#define FILES_FD 5 /* the file server (copy-on-write images) */
#define PIN_FD0 6  /* host files, opened from here on */
#define PIN_MAX 65536
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

static int planning;

static void put(const void *p, size_t n)
{
	while (!planning && n) {
		ssize_t k = write(STREAM_FD, p, n);
		if (k <= 0)
			child_exit(3);
		p = (const char *)p + k, n -= k;
	}
}

/* The first pass only plans (planning: see the top): it sends nothing, and
 * where the image is bad it stops, leaving the second to meet the same. */
static jmp_buf plan_stop;

static void emit_flagged(uint8_t type, const char *name, size_t len, ext2_ino_t ino, const struct ext2_inode *in,
			 uint64_t size, uint32_t flags)
{
	struct rec r = { .type = type, .name_len = (uint16_t)len, .size = size, .ino = ino, .flags = flags };
	if (in) {
		r.mode = in->i_mode;
		r.mtime = in->i_mtime;
		r.touched = in->i_generation == HUSK_EXT2_TOUCHED;
	}
	put(&r, sizeof r);
	put(name, len);
}

static void emit(uint8_t type, const char *name, size_t len, ext2_ino_t ino, const struct ext2_inode *in,
		 uint64_t size)
{
	emit_flagged(type, name, len, ino, in, size, 0);
}

static _Noreturn void give_up(enum reader_error why)
{
	if (planning)
		longjmp(plan_stop, 1);
	emit(R_ERROR, "", 0, 0, NULL, why);
	child_exit(0);
}

/* ---- budgets ------------------------------------------------------------ */

static struct extract_limits budget;
static uint64_t entries, bytes;

/* Bytes sent, and bytes the reader keeps (first paths of linked files). */
static void charge(uint64_t n)
{
	if (planning)
		return;
	if (n > budget.max_bytes - bytes)
		give_up(RE_BYTES);
	bytes += n;
}

/* Every record counts, whatever the writer will make of it. */
static void count(uint64_t data)
{
	if (planning)
		return;
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
static struct seen_set dirs_seen, linked, lost;

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

/* ---- the copy-on-write view ---------------------------------------------- */

static struct mapped_disk view; /* map NULL: the image holds everything */
static uint32_t files_disk;
static int *pinned;             /* per host file: its fd, -1 not opened, -2 gone */
static size_t pins, pin_max;
static int lazy_file = -1, lazy_fd = -1; /* beyond the budget: the last one opened */

static int file_fd(void *ctx, uint32_t f)
{
	(void)ctx;
	if (pinned[f] != -1)
		return pinned[f] >= 0 ? pinned[f] : -ESTALE;
	if (lazy_file == (int)f)
		return lazy_fd;
	if (lazy_fd >= 0)
		close(lazy_fd);
	lazy_fd = file_server_fetch(FILES_FD, files_disk, f);
	lazy_file = lazy_fd >= 0 ? (int)f : -1;
	return lazy_fd;
}

/* Host file f opened now, within the budget: 0, or -1 if it is gone. */
static int pin(uint32_t f)
{
	if (pinned[f] != -1 || pins == pin_max)
		return pinned[f] == -2 ? -1 : 0;
	int fd = file_server_fetch(FILES_FD, files_disk, f);
	if (fd < 0) {
		pinned[f] = -2;
		return -1;
	}
	pinned[f] = fd;
	pins++;
	return 0;
}

/* The first pass's look at a file to be sent: the host file of each of
 * its blocks the guest never wrote. */
static int plan_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt, blk64_t ref, int ref_offset, void *priv)
{
	(void)ref, (void)ref_offset;
	if (blockcnt < 0)
		return 0; /* an indirect block: metadata, in the image */
	uint64_t at = (uint64_t)*blocknr * fs->blocksize;
	if (at / fs->blocksize != *blocknr)
		return 0;
	const struct copyin_extent *x;
	mapped_run(&view, at, 1, &x);
	if (x && pin(x->file)) {
		*(int *)priv = 1;
		return BLOCK_ABORT;
	}
	return 0;
}

static void plan_file(ext2_filsys fs, ext2_ino_t ino)
{
	int gone = 0;
	if (ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY | BLOCK_FLAG_DATA_ONLY, NULL, plan_block, &gone))
		give_up(RE_CORRUPT);
	if (gone) {
		struct seen *l = seen_slot(&lost, ino);
		if (!l->ino)
			l->ino = ino, lost.n++;
	}
}

static int is_lost(ext2_ino_t ino)
{
	return lost.n && seen_slot(&lost, ino)->ino;
}

/* ---- the io_manager of a copy-on-write image ------------------------------ */

static struct struct_io_manager mapped_io;

static errcode_t io_open(const char *name, int flags, io_channel *channel)
{
	io_channel io;
	if (flags & IO_FLAG_RW)
		return EXT2_ET_RO_FILSYS;
	if (ext2fs_get_memzero(sizeof *io, &io) || ext2fs_get_mem(strlen(name) + 1, &io->name))
		return EXT2_ET_NO_MEMORY;
	strcpy(io->name, name);
	io->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	io->manager = &mapped_io;
	io->block_size = 1024;
	io->refcount = 1;
	*channel = io;
	return 0;
}

static errcode_t io_close(io_channel io)
{
	if (--io->refcount > 0)
		return 0;
	ext2fs_free_mem(&io->name);
	ext2fs_free_mem(&io);
	return 0;
}

static errcode_t io_set_blksize(io_channel io, int size)
{
	io->block_size = size;
	return 0;
}

static errcode_t io_read64(io_channel io, unsigned long long block, int count, void *data)
{
	uint64_t n = count < 0 ? (uint64_t)-(int64_t)count : (uint64_t)count * (uint64_t)io->block_size;
	if (block > (uint64_t)INT64_MAX / 2 / (uint64_t)io->block_size)
		return EXT2_ET_LLSEEK_FAILED;
	off_t pos = (off_t)(block * (uint64_t)io->block_size);
	return mapped_read(&view, data, n, &pos) ? EXT2_ET_SHORT_READ : 0;
}

static errcode_t io_read(io_channel io, unsigned long block, int count, void *data)
{
	return io_read64(io, block, count, data);
}

static errcode_t io_write(io_channel io, unsigned long block, int count, const void *data)
{
	(void)io, (void)block, (void)count, (void)data;
	return EXT2_ET_RO_FILSYS;
}

static errcode_t io_write64(io_channel io, unsigned long long block, int count, const void *data)
{
	return io_write(io, (unsigned long)block, count, data);
}

static errcode_t io_flush(io_channel io)
{
	(void)io;
	return 0;
}

static struct struct_io_manager mapped_io = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "husk copy-on-write image",
	.open = io_open,
	.close = io_close,
	.set_blksize = io_set_blksize,
	.read_blk = io_read,
	.write_blk = io_write,
	.flush = io_flush,
	.read_blk64 = io_read64,
	.write_blk64 = io_write64,
};

/* ---- entries ------------------------------------------------------------ */

static char cur_path[MAX_PATH]; /* the entry being walked, from the top (NUL-terminated) */
static const struct copyin_record *record; /* the copy-in's, or NULL */

/* ---- a file's data ------------------------------------------------------- */

static void send_zeros(uint64_t n)
{
	static const char zeros[CHUNK];
	for (; n; n -= n < CHUNK ? n : CHUNK)
		put(zeros, n < CHUNK ? n : CHUNK);
}

/* n bytes of the disk from `at`, as the guest saw them.  A run in a host
 * file goes from there to the stream with splice (no copy through this
 * process: a changed 1 GiB file was 2.4 s); a host file that shrank gives
 * zeros past its end, as it did to the guest. */
static void send_disk(uint64_t at, uint64_t n)
{
	static char buf[CHUNK];
	while (n) {
		const struct copyin_extent *x;
		size_t step = mapped_run(&view, at, n > SIZE_MAX ? SIZE_MAX : (size_t)n, &x);
		int fd = x ? file_fd(NULL, x->file) : -1;
		loff_t off = x ? (loff_t)(x->offset + (at - x->block * MAPPED_BLOCK)) : 0;
		size_t left = step;
		while (fd >= 0 && left) {
			ssize_t k = splice(fd, &off, STREAM_FD, NULL, left, SPLICE_F_MOVE);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			left -= (size_t)k;
		}
		/* what splice left (refused, or the end of a shrunk file: zeros) is read */
		for (uint64_t done = step - left; left;) {
			size_t k = left < CHUNK ? left : CHUNK;
			off_t p = (off_t)(at + done);
			if (mapped_read(&view, buf, k, &p))
				give_up(RE_CORRUPT);
			put(buf, k);
			left -= k, done += k;
		}
		at += step, n -= step;
	}
}

/* A file's blocks in order, in runs of consecutive disk blocks. */
struct sending {
	uint64_t size, sent; /* bytes of the file, bytes sent */
	blk64_t run_l, run_p, run_n;
	unsigned bs;
};

static void send_run(struct sending *s)
{
	if (!s->run_n)
		return;
	uint64_t from = s->run_l * s->bs, bytes = s->run_n * s->bs;
	if (bytes > s->size - from)
		bytes = s->size - from;
	send_disk(s->run_p * s->bs, bytes);
	s->sent = from + bytes;
	s->run_n = 0;
}

static int send_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt, blk64_t ref, int ref_offset, void *priv)
{
	(void)fs, (void)ref, (void)ref_offset;
	struct sending *s = priv;
	if (blockcnt < 0)
		return 0;
	uint64_t at = (uint64_t)blockcnt * s->bs;
	if (at / s->bs != (uint64_t)blockcnt || at >= s->size)
		return BLOCK_ABORT;
	if (s->run_n && (blk64_t)blockcnt == s->run_l + s->run_n && *blocknr == s->run_p + s->run_n) {
		s->run_n++;
		return 0;
	}
	send_run(s);
	if (at < s->sent)
		give_up(RE_CORRUPT); /* blocks out of order */
	send_zeros(at - s->sent); /* a hole */
	s->sent = at;
	s->run_l = (blk64_t)blockcnt, s->run_p = *blocknr, s->run_n = 1;
	return 0;
}

static void send_data(ext2_filsys fs, ext2_ino_t ino, uint64_t size)
{
	struct sending s = { .size = size, .bs = fs->blocksize };
	if (ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY | BLOCK_FLAG_DATA_ONLY, NULL, send_block, &s))
		give_up(RE_CORRUPT);
	send_run(&s);
	send_zeros(size - s.sent); /* a hole at the end */
}

/* Data kept in the inode (ext4's inline data: never made by the guest). */
static void send_inline(ext2_filsys fs, ext2_ino_t ino, uint64_t size)
{
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

static void emit_file(ext2_filsys fs, ext2_ino_t ino, const char *name, size_t len, struct ext2_inode *in)
{
	uint64_t size = EXT2_I_SIZE(in);
	if (record && stream_untouched(copyin_find(record, cur_path), ino, in->i_mode,
				       in->i_generation == HUSK_EXT2_TOUCHED)) {
		count(0);
		emit_flagged(R_FILE, name, len, ino, in, 0, R_WITHHELD);
		return;
	}
	if (planning) {
		if (view.map)
			plan_file(fs, ino);
		return;
	}
	if (view.map && is_lost(ino)) {
		count(0);
		emit_flagged(R_FILE, name, len, ino, in, 0, R_LOST);
		return;
	}
	count(size);
	emit(R_FILE, name, len, ino, in, size);
	if (in->i_flags & EXT4_INLINE_DATA_FL)
		send_inline(fs, ino, size);
	else
		send_data(fs, ino, size);
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
	cur_path[sub] = 0;
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

/* Only the image, the stream pipe and the file server's socket (if any)
 * stay open; stdio goes to /dev/null (sanitizer builds keep stderr for
 * their reports). */
static void keep_fds(int image, int stream, int files)
{
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", image);
	int ro = open(self, O_RDONLY | O_CLOEXEC); /* the image, read-only from here */
	if (ro >= 0)
		image = ro;
	if (files < 0)
		files = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (dup2(image, IMAGE_FD + 16) < 0 || dup2(stream, STREAM_FD + 16) < 0 || dup2(files, FILES_FD + 16) < 0 ||
	    dup2(IMAGE_FD + 16, IMAGE_FD) < 0 || dup2(STREAM_FD + 16, STREAM_FD) < 0 ||
	    dup2(FILES_FD + 16, FILES_FD) < 0)
		child_exit(2);
	close_range(FILES_FD + 1, ~0u, 0);
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
	struct rlimit none = { 0, 0 }, files;
	setrlimit(RLIMIT_CORE, &none);
	/* the host files pinned, and one more opened when read */
	getrlimit(RLIMIT_NOFILE, &files);
	pin_max = files.rlim_max > PIN_FD0 + 8 + PIN_MAX ? PIN_MAX
		  : files.rlim_max > PIN_FD0 + 8           ? files.rlim_max - PIN_FD0 - 8 : 0;
	if (!view.map)
		pin_max = 0;
	setrlimit(RLIMIT_NOFILE, &(struct rlimit){ PIN_FD0 + pin_max + 2, PIN_FD0 + pin_max + 2 });
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
	/* the file server: requests, fds back, and reads of the host files it opened */
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, FILES_FD)) == 0;
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, SCMP_A0(SCMP_CMP_EQ, FILES_FD)) == 0;
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pread64), 1, SCMP_A0(SCMP_CMP_GE, PIN_FD0)) == 0;
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(splice), 1, SCMP_A2(SCMP_CMP_EQ, STREAM_FD)) == 0;
	/* libext2fs probes the image for block-device features: it is a file */
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 0) == 0;
	/* libext2fs asks whether it may trust the environment */
	ok = ok && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_DUMPABLE)) == 0;
	if (!ok || seccomp_load(ctx))
		child_exit(2);
	seccomp_release(ctx);
}

static void forget(struct seen_set *s, int paths)
{
	for (size_t i = 0; paths && i < s->cap; i++)
		free(s->t[i].path);
	free(s->t);
	*s = (struct seen_set){ 0 };
}

static _Noreturn void reader(const struct workdir_image *img, int stream, const struct copyin_record *rec,
			     const struct extract_limits *lim)
{
	signal(SIGPIPE, SIG_DFL);
	keep_fds(img->fd, stream, img->map ? img->files : -1);
	budget = *lim;
	record = rec;
	view = (struct mapped_disk){ IMAGE_FD, img->map, (uint64_t *)img->dirty, file_fd, NULL };
	static const struct copyin_map none;
	if (!view.map)
		view.map = &none;
	files_disk = img->disk;
	initialize_ext2_error_table();
	confine();
	if (img->map && !(pinned = malloc((img->map->nf + 1) * sizeof *pinned)))
		give_up(RE_MEMORY);
	for (size_t i = 0; img->map && i < img->map->nf; i++)
		pinned[i] = -1;
	ext2_filsys fs;
	char name[16];
	snprintf(name, sizeof name, "%d", IMAGE_FD);
	if (ext2fs_open(name, EXT2_FLAG_64BITS, 0, 0, &mapped_io, &fs))
		give_up(RE_CORRUPT);
	if (img->map) {
		planning = 1;
		if (!setjmp(plan_stop))
			walk_dir(fs, EXT2_ROOT_INO, 0, 0);
		planning = 0;
		forget(&dirs_seen, 0), forget(&linked, 1);
	}
	walk_dir(fs, EXT2_ROOT_INO, 0, 0);
	emit(R_END, "", 0, 0, NULL, 0);
	child_exit(0);
}

pid_t workdir_reader_start(const struct workdir_image *img, const struct copyin_record *rec,
			   const struct extract_limits *lim, int *stream)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		reader(img, p[1], rec, lim);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*stream = p[0];
	return pid;
}
