/* SPDX-License-Identifier: GPL-2.0-only */
/* A host directory copied into a fresh ext2 image, for the workdir (-w) and
 * for read-only datasets (--ro).  The tree is read through directory fds
 * opened from one fd of the top, never following a symlink, so a symlink
 * swapped into the tree during the copy is copied as a symlink, never
 * followed.  For the workdir, the copy also returns a record of what it
 * copied: the write-back applies only what the program changed against it
 * (extract.c). */
#ifndef HUSK_COPYIN_H
#define HUSK_COPYIN_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define COPYIN_MAX_DEPTH 128       /* directories below the top */
#define COPYIN_MAX_ENTRIES 1000000 /* names met, skipped ones included */
/* A path from the top: the guest's paths are at most 4,095 bytes, and
 * "/data/NAME/" (NAME up to 64) comes before it there. */
#define COPYIN_MAX_PATH 3968

struct copyin_entry {
	char *path;         /* from the top: "a/b"; "" is the top itself */
	uint32_t guest_ino; /* its inode in the image (names of one host file share it) */
	uint32_t mode;      /* st_mode when copied: type and permissions */
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* The record's times: nanoseconds since the epoch. */
static inline int64_t copyin_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct copyin_record {
	struct copyin_entry *e; /* sorted by path (strcmp) */
	size_t n;
};

/* Opens PATH as a directory, refusing a symlink in any of its components
 * (openat2 RESOLVE_NO_SYMLINKS, else a walk with O_NOFOLLOW).  The fd, or -1
 * with a one-line reason ("PATH/x is a symlink (give the real path)"). */
int copyin_open_dir(const char *path, char *err, size_t errlen);
/* The same, making missing directories on the way (mkdir -p, mode 0755),
 * never through a symlink. */
int copyin_make_dir(const char *path, char *err, size_t errlen);

/* Opens a directory husk keeps its own files in (the dataset cache,
 * /run/husk), made with create_mode when missing (unless that is 0):
 * refused unless it is a directory (not a symlink), owned by the user
 * (geteuid) or root, and not writable by group or others.  The fd, or -1
 * with a one-line reason starting with PATH. */
int copyin_own_dir(const char *path, unsigned create_mode, char *err, size_t errlen);

/* Sizes of the tree under dirfd (no symlink followed): bytes rounded up to
 * 4 KiB blocks per entry, and the number of entries copyin_build would
 * copy.  rec, if not NULL, gets the entries as copyin_build would record
 * them (guest_ino 0), for a digest of the tree. */
int copyin_measure(int dirfd, uint64_t *bytes, uint64_t *entries, struct copyin_record *rec, char *err,
		   size_t errlen);

/* Makes a new ext2 file system of `bytes` with `inodes` inodes in image_fd
 * (a regular file opened read-write, truncated to size) holding the tree
 * under dirfd: directories, regular files, symlinks and hard links (fifos,
 * sockets and devices are skipped, and not recorded).  Every inode has
 * i_generation 0, the root is owned by 0:0, there is no lost+found.  rec, if
 * not NULL, gets one entry per name copied.  0, or -1 with a one-line
 * reason. */
int copyin_build(int dirfd, int image_fd, uint64_t bytes, uint64_t inodes, struct copyin_record *rec, char *err,
		 size_t errlen);

/* A read-only image whose file data stays in the host files: the image
 * holds the metadata, its data blocks are allocated but never written (a
 * sparse file), and each run of them is a piece of one host file, read from
 * there when the guest reads those blocks (dataset.c, virtio_blk.c). */
struct copyin_extent {
	uint64_t block;  /* first image block (4 KiB) */
	uint64_t offset; /* where in the file, in bytes (a multiple of 4 KiB) */
	uint32_t blocks;
	uint32_t file;   /* index in copyin_map.f */
};

struct copyin_file {
	char *path;          /* from the top, as walked */
	uint64_t dev, ino, size;
};

struct copyin_map {
	struct copyin_extent *x; /* sorted by block, not overlapping */
	size_t nx, capx;
	struct copyin_file *f;
	size_t nf, capf;
};

/* copyin_build, the data mapped into map instead of copied (map->x sorted
 * as it is built: blocks are taken in order). */
int copyin_build_mapped(int dirfd, int image_fd, uint64_t bytes, uint64_t inodes, struct copyin_record *rec,
			struct copyin_map *map, char *err, size_t errlen);
void copyin_map_free(struct copyin_map *map);


const struct copyin_entry *copyin_find(const struct copyin_record *rec, const char *path);
void copyin_record_free(struct copyin_record *rec);
#endif
