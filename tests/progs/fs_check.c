/* SPDX-License-Identifier: GPL-2.0-only */
/* File system conformance inside the guest, as TAP.  Run in husk with a
 * dataset at /data/ds holding hello.txt ("hello dataset\n") and a workdir. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static int n, failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	if (!cond) {
		failed++;
		printf("#   errno %d (%s)\n", errno, strerror(errno));
	}
}

static int has_entry(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;
	while (d && (e = readdir(d)))
		found |= !strcmp(e->d_name, name);
	if (d)
		closedir(d);
	return found;
}

int main(void)
{
	char buf[4096];
	char cwd[256];
	ok(getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/workdir"), "the workdir is the current directory");

	int fd = open("/data/ds/hello.txt", O_RDONLY);
	ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
	ok(k == 14 && !memcmp(buf, "hello dataset\n", 14), "read a dataset file");
	close(fd);
	errno = 0;
	ok(open("/data/ds/new.txt", O_WRONLY | O_CREAT, 0644) < 0 && errno == EROFS, "creating under /data fails with EROFS");
	errno = 0;
	ok(open("/data/ds/hello.txt", O_WRONLY) < 0 && errno == EROFS, "writing a dataset file fails with EROFS");
	errno = 0;
	ok(unlink("/data/ds/hello.txt") < 0 && errno == EROFS, "unlink under /data fails with EROFS");

	ok(mkdir("out", 0755) == 0, "mkdir in the workdir");
	fd = open("out/a.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ok(fd >= 0 && write(fd, "alpha\n", 6) == 6 && close(fd) == 0, "create and write a file");
	errno = 0;
	ok(open("out/a.txt", O_WRONLY | O_CREAT | O_EXCL, 0644) < 0 && errno == EEXIST, "O_EXCL on an existing file: EEXIST");
	fd = open("out/a.txt", O_RDWR | O_APPEND);
	ok(fd >= 0 && write(fd, "beta\n", 5) == 5 && pread(fd, buf, 11, 0) == 11 && !memcmp(buf, "alpha\nbeta\n", 11),
	   "O_APPEND appends; pread reads at an offset");
	ok(pwrite(fd, "A", 1, 0) == 1 && lseek(fd, 0, SEEK_END) == 11, "pwrite and lseek(SEEK_END)");
	struct stat st;
	ok(fstat(fd, &st) == 0 && st.st_size == 11 && S_ISREG(st.st_mode), "fstat size and type");
	ok(ftruncate(fd, 3) == 0 && fstat(fd, &st) == 0 && st.st_size == 3, "ftruncate");
	ok(dup2(fd, 20) == 20 && lseek(20, 0, SEEK_SET) == 0 && read(20, buf, 10) == 3 && !memcmp(buf, "Alp", 3),
	   "dup2 shares the open file");
	close(20);
	close(fd);

	ok(rename("out/a.txt", "out/b.txt") == 0 && access("out/a.txt", F_OK) < 0 && access("out/b.txt", F_OK) == 0,
	   "rename");
	ok(symlink("b.txt", "out/link") == 0 && readlink("out/link", buf, sizeof buf) == 5 && !memcmp(buf, "b.txt", 5),
	   "symlink and readlink");
	ok(stat("out/link", &st) == 0 && S_ISREG(st.st_mode) && lstat("out/link", &st) == 0 && S_ISLNK(st.st_mode),
	   "stat follows a symlink, lstat does not");
	errno = 0;
	ok(readlink("out/b.txt", buf, sizeof buf) < 0 && errno == EINVAL, "readlink of a file: EINVAL");
	ok(has_entry("out", "b.txt") && has_entry("out", "link") && !has_entry("out", "a.txt"), "getdents64 lists the directory");
	ok(has_entry("/", "workdir") && has_entry("/", "data") && has_entry("/data", "ds") && has_entry("/", "tmp"),
	   "the root lists the mounts");
	errno = 0;
	ok(rmdir("out") < 0 && errno == ENOTEMPTY, "rmdir of a non-empty directory: ENOTEMPTY");
	ok(chdir("out") == 0 && getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/workdir/out") && chdir("..") == 0, "chdir and getcwd");

	fd = open("/tmp/t", O_RDWR | O_CREAT | O_EXCL, 0600);
	ok(fd >= 0 && write(fd, "tmp data", 8) == 8 && pread(fd, buf, 8, 0) == 8 && !memcmp(buf, "tmp data", 8),
	   "/tmp holds files in RAM");
	ok(unlink("/tmp/t") == 0 && close(fd) == 0, "unlink in /tmp");
	fd = open("/dev/urandom", O_RDONLY);
	memset(buf, 0, 64);
	ok(fd >= 0 && read(fd, buf, 64) == 64 && (buf[0] | buf[1] | buf[2] | buf[3]), "/dev/urandom");
	close(fd);
	fd = open("/dev/null", O_RDWR);
	ok(fd >= 0 && write(fd, "x", 1) == 1 && read(fd, buf, 1) == 0, "/dev/null");
	close(fd);
	errno = 0;
	ok(open("/etc/shadow", O_RDONLY) < 0 && errno == ENOENT, "/etc/shadow does not exist");
	struct statfs sf;
	ok(statfs("/workdir", &sf) == 0 && sf.f_bfree > 0, "statfs of the workdir");
	ok(utimensat(AT_FDCWD, "out/b.txt", (struct timespec[]){ { 1000000000, 0 }, { 1000000000, 0 } }, 0) == 0 &&
	   stat("out/b.txt", &st) == 0 && st.st_mtime == 1000000000, "utimensat sets the mtime");
	/* statx, as glibc and coreutils call it: the same answers as stat */
	unsigned char sx[256];
	ok(syscall(SYS_statx, AT_FDCWD, "out/b.txt", 0, 0x7ffu, sx) == 0 && stat("out/b.txt", &st) == 0 &&
		   *(uint64_t *)(sx + 40) == (uint64_t)st.st_size && *(uint64_t *)(sx + 32) == st.st_ino &&
		   (*(uint16_t *)(sx + 28) & S_IFMT) == S_IFREG && *(int64_t *)(sx + 112) == 1000000000,
	   "statx: size, inode, type and mtime as stat says");
	errno = 0;
	ok(syscall(SYS_statx, AT_FDCWD, "out/link", AT_SYMLINK_NOFOLLOW, 0x7ffu, sx) == 0 &&
		   (*(uint16_t *)(sx + 28) & S_IFMT) == S_IFLNK &&
		   syscall(SYS_statx, AT_FDCWD, "out/none", 0, 0x7ffu, sx) < 0 && errno == ENOENT,
	   "statx: AT_SYMLINK_NOFOLLOW, and ENOENT");
	/* close_range: the fds from 20 up, closed; marked close-on-exec with its flag */
	ok(dup2(1, 20) == 20 && dup2(1, 22) == 22 && syscall(SYS_close_range, 21u, ~0u, 4u /* CLOEXEC */) == 0 &&
		   fcntl(22, F_GETFD) == FD_CLOEXEC && fcntl(20, F_GETFD) == 0 && syscall(SYS_close_range, 20u, ~0u, 0u) == 0 &&
		   fcntl(20, F_GETFD) < 0 && errno == EBADF && fcntl(22, F_GETFD) < 0,
	   "close_range closes a range of fds, or marks them close-on-exec");
	errno = 0;
	ok(syscall(SYS_close_range, 5u, 4u, 0u) < 0 && errno == EINVAL, "close_range: a range backwards is EINVAL");
	fflush(stdout);
	ok(unlink("out/link") == 0 && has_entry("out", "b.txt"), "unlink a symlink, not its target");
	printf("1..%d\n", n);
	return failed != 0;
}
