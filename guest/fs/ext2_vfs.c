/* SPDX-License-Identifier: GPL-2.0-only */
/* ext2 disks under the VFS: struct fs_ops over fs/ext2.c. */
#include <string.h>
#include "fs/ext2.h"
#include "kernel.h"
#include "linux_abi.h"
#include "fs/vfs.h"

/* Modes and d_type values pass through unconverted: ext2 stores Linux's. */
_Static_assert(EXT2_S_IFMT == S_IFMT && EXT2_S_IFSOCK == S_IFSOCK && EXT2_S_IFLNK == S_IFLNK &&
		       EXT2_S_IFREG == S_IFREG && EXT2_S_IFBLK == S_IFBLK && EXT2_S_IFDIR == S_IFDIR &&
		       EXT2_S_IFCHR == S_IFCHR && EXT2_S_IFIFO == S_IFIFO,
	       "ext2 mode types are Linux's S_IF*");
_Static_assert(EXT2_DT_UNKNOWN == DT_UNKNOWN && EXT2_DT_FIFO == DT_FIFO && EXT2_DT_CHR == DT_CHR &&
		       EXT2_DT_DIR == DT_DIR && EXT2_DT_BLK == DT_BLK && EXT2_DT_REG == DT_REG &&
		       EXT2_DT_LNK == DT_LNK && EXT2_DT_SOCK == DT_SOCK,
	       "ext2_readdir types are Linux's DT_*");

int ext2_mount_dev(void **fs, struct blockdev *bd, int read_only)
{
	struct ext2_fs *e;
	int r = ext2_mount(&e, bd, read_only);
	if (r)
		return r;
	ext2_set_clock(e, clock_wall_s);
	*fs = e;
	return 0;
}

static int x_lookup(void *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	return ext2_lookup(fs, dir, name, len, ino);
}

static int x_stat(void *fs, uint32_t ino, struct fs_stat *st)
{
	struct ext2_stat e;
	int r = ext2_stat(fs, ino, &e);
	if (!r)
		*st = (struct fs_stat){ e.ino, e.mode, e.nlink, e.uid, e.gid, e.size, e.blocks, e.atime, e.mtime, e.ctime };
	return r;
}

static long x_read(void *fs, uint32_t ino, uint64_t off, void *buf, size_t len)
{
	return ext2_read(fs, ino, off, buf, len);
}

static long x_write(void *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	return ext2_write(fs, ino, off, buf, len);
}

static int x_truncate(void *fs, uint32_t ino, uint64_t size)
{
	return ext2_truncate(fs, ino, size);
}

static int x_create(void *fs, uint32_t dir, const char *name, size_t len, uint32_t mode, uint32_t *ino)
{
	return ext2_create(fs, dir, name, len, mode, ino);
}

static int x_symlink(void *fs, uint32_t dir, const char *name, size_t len, const char *t, size_t tl, uint32_t *ino)
{
	return ext2_symlink(fs, dir, name, len, t, tl, ino);
}

static long x_readlink(void *fs, uint32_t ino, char *buf, size_t len)
{
	return ext2_readlink(fs, ino, buf, len);
}

static int x_link(void *fs, uint32_t dir, const char *name, size_t len, uint32_t ino)
{
	return ext2_link(fs, dir, name, len, ino);
}

static int x_unlink(void *fs, uint32_t dir, const char *name, size_t len)
{
	return ext2_unlink(fs, dir, name, len);
}

static int x_rmdir(void *fs, uint32_t dir, const char *name, size_t len)
{
	return ext2_rmdir(fs, dir, name, len);
}

static int x_rename(void *fs, uint32_t od, const char *on, size_t ol, uint32_t nd, const char *nn, size_t nl)
{
	return ext2_rename(fs, od, on, ol, nd, nn, nl);
}

static int x_readdir(void *fs, uint32_t dir, uint64_t *pos, struct fs_dirent *out)
{
	struct ext2_dirent e;
	int r = ext2_readdir(fs, dir, pos, &e);
	if (r == 1) {
		out->ino = e.ino, out->type = e.type, out->name_len = e.name_len;
		memcpy(out->name, e.name, e.name_len + 1);
	}
	return r;
}

static int x_set_times(void *fs, uint32_t ino, int64_t a, int64_t m)
{
	return ext2_set_times(fs, ino, a, m);
}

static int x_chmod(void *fs, uint32_t ino, uint32_t mode)
{
	return ext2_chmod(fs, ino, mode);
}

static int x_sync(void *fs)
{
	return ext2_sync(fs);
}

static uint64_t x_free_bytes(void *fs)
{
	return ext2_free_bytes(fs);
}

const struct fs_ops ext2_fs_ops = {
	x_lookup, x_stat, x_read, x_write, x_truncate, x_create, x_symlink, x_readlink, x_link, x_unlink,
	x_rmdir, x_rename, x_readdir, x_set_times, x_chmod, x_sync, x_free_bytes, 0, EXT2_ROOT_INO,
};
