/* SPDX-License-Identifier: GPL-2.0-only */
/* Open files and the fd table. */
#ifndef GUEST_FILE_H
#define GUEST_FILE_H
#include <stdint.h>
#include "husk/abi.h"
#include "fs/vfs.h"

#define MAX_FDS HUSK_OPEN_FILES_MAX

enum file_kind { FILE_CONSOLE, FILE_FS, FILE_SYNTH, FILE_DEV, FILE_STREAM };
struct stream_ops;

struct file {
	int refs;
	int kind;
	int flags;           /* open flags: access mode, O_APPEND, O_NONBLOCK */
	struct mount *m;     /* FILE_FS */
	uint32_t ino;
	int is_dir;
	int dev;             /* FILE_DEV: DEV_*; FILE_CONSOLE: the console's fd */
	uint64_t pos;        /* offset, or the directory cookie */
	char *path;          /* absolute path it was opened by (file_set_path), or NULL */
	const struct stream_ops *ops; /* FILE_STREAM (ipc/stream.h) */
	void *priv;
};

/* A file unlinked while open lives on under the mount's orphan directory
 * until its last close (the file systems free an inode at once). */
#define ORPHAN_DIR ".husk-unlinked"
int inode_is_open(struct mount *m, uint32_t ino);
int orphan(struct mount *m, uint32_t dir, const char *name, size_t len, uint32_t ino);

struct file *fd_get(long fd);
int fd_install(struct file *f, int min, int cloexec); /* lowest free fd >= min, or -EMFILE */
int fd_limit(void);        /* fds are below it (RLIMIT_NOFILE's soft value) */
void fd_limit_init(int n); /* the policy's open-files limit, at boot */
void fd_limit_reset(void); /* ... the current process's again (the snapshot point: the run's limit) */
/* getrlimit/setrlimit of RLIMIT_NOFILE: want and old are {soft, hard}. */
long fd_rlimit(const uint64_t *want, uint64_t *old);
int fd_close(long fd);
int fd_cloexec(long fd, int set); /* set < 0: query */
struct file *file_new(int kind);
void file_track(struct file *f); /* once m and ino are set */
int file_set_path(struct file *f, const char *path); /* 0 or -ENOMEM */
void file_put(struct file *f);

/* A process's fds (the current one's: fd_get and the rest). */
struct fdtable {
	struct file *fd[MAX_FDS];
	uint8_t cloexec[MAX_FDS];
	uint64_t nofile_soft, nofile_hard; /* RLIMIT_NOFILE */
};
struct fdtable *fd_table_new(void);    /* pid 1's: fds 0-2 on the consoles */
struct fdtable *fd_table_copy(const struct fdtable *t); /* fork: the same open files */
void fd_table_free(struct fdtable *t); /* at a process's end: the last closes */
void fd_close_on_exec(void);
#endif
