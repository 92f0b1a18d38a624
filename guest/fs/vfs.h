/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's one file namespace: mounts (ext2 disks on /usr, /data/NAME and
 * /workdir; in RAM: /tmp, /etc, and /workdir when there is no workdir disk;
 * /proc, made at read time), synthetic directories (/, /data, /dev) and the
 * device nodes in /dev.  Path lookup follows symlinks (40 at most). */
#ifndef GUEST_VFS_H
#define GUEST_VFS_H
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct fs_stat {
	uint32_t ino, mode, nlink, uid, gid;
	uint64_t size, blocks; /* blocks: 512-byte units */
	int64_t atime, mtime, ctime;
};

struct fs_dirent {
	uint32_t ino;
	uint8_t type; /* DT_* */
	uint16_t name_len;
	char name[256];
};

/* What a file system offers; errors are negative errno values. */
struct fs_ops {
	int (*lookup)(void *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino);
	int (*stat)(void *fs, uint32_t ino, struct fs_stat *st);
	long (*read)(void *fs, uint32_t ino, uint64_t off, void *buf, size_t len);
	long (*write)(void *fs, uint32_t ino, uint64_t off, const void *buf, size_t len);
	int (*truncate)(void *fs, uint32_t ino, uint64_t size);
	int (*create)(void *fs, uint32_t dir, const char *name, size_t len, uint32_t mode, uint32_t *ino);
	int (*symlink)(void *fs, uint32_t dir, const char *name, size_t len, const char *target, size_t tlen,
		       uint32_t *ino);
	long (*readlink)(void *fs, uint32_t ino, char *buf, size_t len);
	int (*link)(void *fs, uint32_t dir, const char *name, size_t len, uint32_t ino);
	int (*unlink)(void *fs, uint32_t dir, const char *name, size_t len);
	int (*rmdir)(void *fs, uint32_t dir, const char *name, size_t len);
	int (*rename)(void *fs, uint32_t odir, const char *oname, size_t olen, uint32_t ndir, const char *nname,
		      size_t nlen);
	int (*readdir)(void *fs, uint32_t dir, uint64_t *pos, struct fs_dirent *out);
	int (*set_times)(void *fs, uint32_t ino, int64_t atime, int64_t mtime);
	int (*chmod)(void *fs, uint32_t ino, uint32_t mode);
	int (*sync)(void *fs);
	uint64_t (*free_bytes)(void *fs);
	/* The file's page at index (a hole made a zero page), for a shared
	 * mapping: NULL when the file system has none to lend (ext2), or no
	 * memory. */
	void *(*page)(void *fs, uint32_t ino, uint64_t index);
	uint32_t root;
};

struct mount {
	const char *path;   /* "/usr", "/data/NAME", "/workdir", "/tmp" */
	size_t len;
	const struct fs_ops *ops;
	void *fs;           /* NULL until first use: mounting costs device exits */
	int read_only;
	uintptr_t mmio;     /* disks */
	int error;          /* the mount failed: -errno for every access */
	int index;          /* st_dev */
	int (*populate)(struct mount *m); /* a RAM file system's first files (initial_files.c) */
};

enum node_kind { NODE_FS, NODE_SYNTH, NODE_DEV };
enum { DEV_NULL, DEV_ZERO, DEV_URANDOM, DEV_COUNT };

/* A resolved path.  For NODE_FS, ino is 0 when the last component does not
 * exist (then dir and name say where it would be created). */
struct node {
	int kind;
	struct mount *m;
	uint32_t ino, dir;
	int dev;                /* NODE_DEV */
	char path[PATH_MAX];    /* absolute, without . and .. */
	const char *name;       /* last component, inside path */
	size_t name_len;
};

#define LOOKUP_FOLLOW 1     /* follow a symlink in the last component */

void vfs_init(void);
/* At the snapshot point: the run's disks from boot.disk[from] on (those the
 * snapshot did not have) are mounted too; and whether the scratch /workdir
 * has been used (it must not have been, for a workdir disk to replace it). */
void vfs_add_disks(int from);
int vfs_scratch_used(void);
/* base: absolute directory for relative paths. */
int vfs_lookup(const char *base, const char *path, int flags, struct node *out);
int vfs_mount_fs(struct mount *m); /* mounts on first use; 0 or -errno */
int vfs_stat(const struct node *n, struct fs_stat *st);
/* Directory listing of any directory node, synthetic ones included. */
int vfs_readdir(const struct node *n, uint64_t *pos, struct fs_dirent *out);
void vfs_sync_all(void);
/* Lexical: base + path without ".", ".." or "//" into out (PATH_MAX bytes). */
int vfs_normalize(const char *base, const char *path, char *out);
/* The mounts in order (st_dev i + 1); NULL past the last. */
const struct mount *vfs_mount_at(int i);
struct fs_type {
	const char *name; /* /proc/mounts' */
	long magic;       /* statfs's f_type */
};
const struct fs_type *vfs_fs_type(const struct mount *m);
/* At the program's end: the disks synced, the scratch /workdir's size
 * reported. */
void vfs_finish(void);
extern const struct fs_ops ext2_fs_ops, tmpfs_ops, procfs_ops;
struct blockdev;
int ext2_mount_dev(void **fs, struct blockdev *bd, int read_only); /* fs_ext2.c */
void *tmpfs_new(void);                                             /* tmpfs.c */
uint64_t tmpfs_used_bytes(void *fs);
int etc_populate(struct mount *m);                                 /* initial_files.c */
int scratch_populate(struct mount *m);
void procfs_init(struct mount *m);                                 /* procfs.c */
void procfs_find_first_exe(void); /* before the first lookup: the first program's exe for /proc */
#endif
