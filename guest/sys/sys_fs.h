/* SPDX-License-Identifier: GPL-2.0-only */
/* File system calls (sys_fs.c). */
#ifndef GUEST_SYS_FS_H
#define GUEST_SYS_FS_H
#include <stddef.h>
#include <stdint.h>
#include "kernel.h"

struct kstat;
struct kstatfs;

void fs_init(void);
long sys_openat(long dirfd, const char *upath, long flags, long mode);
long sys_close(long fd);
long sys_copy_file_range(long fd_in, int64_t *off_in, long fd_out, int64_t *off_out, size_t len, long flags);
long sys_splice(long fd_in, int64_t *off_in, long fd_out, int64_t *off_out, size_t len, long flags);
long sys_sendfile(long fd_out, long fd_in, int64_t *off, size_t len);
long sys_memfd_create(const char *uname, long flags);
long sys_dup(long fd, long min, int cloexec);
long sys_dup3(long old, long new, long flags, int dup2);
long sys_rw(long fd, void *buf, size_t len, int writing);
long sys_prw(long fd, void *buf, size_t len, long off, int writing);
long sys_rwv(long fd, const struct kiovec *iov, long n, int writing);
long sys_lseek(long fd, long off, long whence);
long sys_fstat(long fd, struct kstat *k);
struct file;
struct fs_stat;
int file_stat(struct file *f, struct fs_stat *st, int *dev); /* fstat's view of an open file; dev: st_dev */
long sys_fstatat(long dirfd, const char *upath, struct kstat *k, long flags);
/* Whether the path names something (fstatat's lookup, nothing written): 0 or -errno. */
long sys_exists_at(long dirfd, const char *upath, long flags);
struct statx_k;
long sys_statx(long dirfd, const char *upath, long flags, unsigned mask, struct statx_k *x);
long sys_faccessat(long dirfd, const char *upath, long amode, long flags);
long sys_getdents64(long fd, void *buf, size_t len);
long sys_mkdirat(long dirfd, const char *upath, long mode);
long sys_mknodat(long dirfd, const char *upath, long mode, long dev);
struct node;
/* A new node (regular file, FIFO, socket) at a path in the kernel, the
 * umask applied: mknodat's work, and bind's for a Unix socket.  *n is where
 * it was made. */
int fs_make_node(long dirfd, const char *path, uint32_t mode, struct node *n);
long sys_unlinkat(long dirfd, const char *upath, long flags);
long sys_renameat2(long olddirfd, const char *oldp, long newdirfd, const char *newp, long flags);
long sys_linkat(long olddirfd, const char *oldp, long newdirfd, const char *newp, long flags);
long sys_symlinkat(const char *utarget, long dirfd, const char *upath);
long sys_readlinkat(long dirfd, const char *upath, char *buf, long len);
long sys_ftruncate(long fd, long size);
long sys_truncate(const char *upath, long size);
long sys_fsync(long fd);
long sys_utimensat(long dirfd, const char *upath, const int64_t *ts, long flags);
long sys_fchmodat(long dirfd, const char *upath, long mode);
long sys_fchmod(long fd, long mode);
long sys_umask(long mask);
long sys_getcwd(char *buf, size_t len);
long sys_chdir(const char *upath);
long sys_fchdir(long fd);
long sys_fcntl(long fd, long cmd, long arg);
long sys_ioctl(long fd, unsigned long req, void *arg);
long sys_statfs(const char *upath, struct kstatfs *s);
long sys_fstatfs(long fd, struct kstatfs *s);
long sys_chown(long dirfd, const char *upath, long uid, long gid, int follow);
long sys_fchown(long fd, long uid, long gid);
long sys_mmap_file(uintptr_t addr, size_t len, long prot, long flags, long fd, long off);
#endif
