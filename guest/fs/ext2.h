/* SPDX-License-Identifier: GPL-2.0-only */
/* ext2 (revision 0/1) file system: read and write, on a struct blockdev.
 *
 * Every call returns 0 (or a count) on success and a negative Linux errno
 * on failure; a corrupt image gives -EIO, never a crash.  Inode numbers are
 * the on-disk ones (EXT2_ROOT_INO is the root directory).  Calls on one
 * struct ext2_fs must not run concurrently; separate mounts are
 * independent. */
#ifndef GUEST_FS_EXT2_H
#define GUEST_FS_EXT2_H
#include <stddef.h>
#include <stdint.h>
#include "blockdev.h"

#define EXT2_ROOT_INO 2

/* File types in mode: ext2 stores Linux's S_IF* values.  Prefixed because
 * this header is also built on the host, next to <sys/stat.h>; fs_ext2.c
 * and tests/unit/test_guest_abi.c check they equal the Linux ones. */
#define EXT2_S_IFMT   0170000
#define EXT2_S_IFSOCK 0140000
#define EXT2_S_IFLNK  0120000
#define EXT2_S_IFREG  0100000
#define EXT2_S_IFBLK  0060000
#define EXT2_S_IFDIR  0040000
#define EXT2_S_IFCHR  0020000
#define EXT2_S_IFIFO  0010000

/* struct ext2_dirent.type: Linux's DT_* values (prefixed and checked, as above). */
#define EXT2_DT_UNKNOWN 0
#define EXT2_DT_FIFO    1
#define EXT2_DT_CHR     2
#define EXT2_DT_DIR     4
#define EXT2_DT_BLK     6
#define EXT2_DT_REG     8
#define EXT2_DT_LNK     10
#define EXT2_DT_SOCK    12

struct ext2_fs;

struct ext2_stat {
	uint32_t ino, mode, nlink, uid, gid;
	uint64_t size, blocks; /* blocks: 512-byte units */
	int64_t atime, mtime, ctime; /* seconds */
};

struct ext2_dirent {
	uint32_t ino;
	uint8_t type; /* EXT2_DT_* */
	char name[256]; /* NUL-terminated */
	uint16_t name_len;
};

/* Validates the superblock and group descriptors.  read_only mounts never
 * write; a read-write mount marks the file system not-clean until unmount. */
int ext2_mount(struct ext2_fs **out, struct blockdev *bd, int read_only);
int ext2_unmount(struct ext2_fs *fs); /* syncs (if rw) and frees, even on error */
int ext2_sync(struct ext2_fs *fs);    /* writes back cached metadata, then bd->flush */
/* The clock for timestamps (seconds since the epoch); without one, 0. */
void ext2_set_clock(struct ext2_fs *fs, int64_t (*now)(void));

int ext2_lookup(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino);
int ext2_stat(struct ext2_fs *fs, uint32_t ino, struct ext2_stat *st);
/* Bytes read, 0 at EOF; holes read as zeros. */
long ext2_read(struct ext2_fs *fs, uint32_t ino, uint64_t off, void *buf, size_t len);
/* Bytes written (fewer than len when the disk fills), or -errno. */
long ext2_write(struct ext2_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len);
int ext2_truncate(struct ext2_fs *fs, uint32_t ino, uint64_t size);
/* mode: type (S_IFREG, S_IFDIR, S_IFIFO, S_IFSOCK; 0 means S_IFREG) and
 * permission bits.  Symbolic links are made by ext2_symlink. */
int ext2_create(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		uint32_t *ino);
int ext2_symlink(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len,
		 const char *target, size_t tlen, uint32_t *ino);
long ext2_readlink(struct ext2_fs *fs, uint32_t ino, char *buf, size_t len);
int ext2_link(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t ino);
int ext2_unlink(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len);
int ext2_rmdir(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len);
int ext2_rename(struct ext2_fs *fs, uint32_t odir, const char *oname, size_t olen,
		uint32_t ndir, const char *nname, size_t nlen);
/* 1 = *out holds an entry, 0 = end.  *pos starts at 0 and is an opaque
 * cookie (a byte offset in the directory). */
int ext2_readdir(struct ext2_fs *fs, uint32_t dir, uint64_t *pos, struct ext2_dirent *out);
int ext2_set_times(struct ext2_fs *fs, uint32_t ino, int64_t atime, int64_t mtime); /* -1 = leave */
int ext2_chmod(struct ext2_fs *fs, uint32_t ino, uint32_t mode); /* permission bits only */
uint64_t ext2_free_bytes(struct ext2_fs *fs);
#endif
