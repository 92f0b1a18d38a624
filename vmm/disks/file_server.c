/* SPDX-License-Identifier: GPL-2.0-only */
/* The datasets' file server and the VMM's side of it (file_server.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "disks/file_server.h"
#include "errmsg.h"
#include "sandbox/helper.h"
#include "sandbox/stop.h"

#define SERVER_FD 3
#define TOP_FD0 4 /* the datasets' tops, by disk index */

/* File `file` of disk `disk`, and as many of the ones after it as opened
 * in turn, up to `want` (a tree read in order: one round trip per
 * PREFETCH files instead of one each). */
struct request {
	uint32_t disk, file, want;
};

#define PREFETCH 16

struct answer {
	int32_t status; /* of the first file; its fd and those after it come with status 0 */
	uint32_t count;
};

/* ---- the server ---------------------------------------------------------- */

static const int server_calls[] = {
	SCMP_SYS(read), SCMP_SYS(sendmsg), SCMP_SYS(openat2), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(close),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(brk), SCMP_SYS(munmap),
	SCMP_SYS(futex), SCMP_SYS(sigaltstack), /* the sanitizers' runtime, in test builds */
};

static int confine(void)
{
	struct rlimit files = { TOP_FD0 + MAX_DISKS + PREFETCH + 8, TOP_FD0 + MAX_DISKS + PREFETCH + 8 };
	struct rlimit none = { 0, 0 };
	if (setrlimit(RLIMIT_NOFILE, &files) || setrlimit(RLIMIT_NPROC, &none) || setrlimit(RLIMIT_CORE, &none) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -1;
	int r = 0;
	for (size_t i = 0; !r && i < sizeof server_calls / sizeof server_calls[0]; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, server_calls[i], 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r ? -1 : 0;
}

/* File f of disk d opened read-only, if it is still the file walked; the
 * fd, or -errno. */
static int open_file(int top, const struct copyin_file *f)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOATIME, /* a fifo swapped in must not block */
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, top, f->path, &how, sizeof how);
	if (fd < 0 && errno == EPERM) { /* O_NOATIME: only for the owner */
		how.flags &= ~(uint64_t)O_NOATIME;
		fd = (int)syscall(SYS_openat2, top, f->path, &how, sizeof how);
	}
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP || errno == EXDEV ? -ESTALE : -errno;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_dev != f->dev || st.st_ino != f->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* cmsg room for PREFETCH fds */
union fds_msg {
	char buf[CMSG_SPACE(PREFETCH * sizeof(int))];
	struct cmsghdr align;
};

static int reply(int sock, int status, const int *fd, uint32_t count)
{
	struct answer a = { status, count };
	struct iovec iov = { &a, sizeof a };
	union fds_msg u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (count) {
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(count * sizeof(int));
		memcpy(CMSG_DATA(c), fd, count * sizeof(int));
	}
	ssize_t k;
	while ((k = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return k == sizeof a ? 0 : -1;
}

static int serve(const struct disks *ds)
{
	for (;;) {
		struct request rq;
		ssize_t k = read(SERVER_FD, &rq, sizeof rq);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			return 0; /* the VMM is gone */
		int fd[PREFETCH], status = EINVAL;
		uint32_t count = 0;
		if (k == sizeof rq && rq.disk < (uint32_t)ds->n && ds->d[rq.disk].top_fd >= 0 &&
		    rq.file < ds->d[rq.disk].map.nf && rq.want >= 1 && rq.want <= PREFETCH) {
			const struct copyin_map *m = &ds->d[rq.disk].map;
			status = 0;
			for (uint32_t i = rq.file; i < m->nf && count < rq.want; i++, count++) {
				int f = open_file(TOP_FD0 + (int)rq.disk, &m->f[i]);
				if (f < 0) {
					if (!count)
						status = -f;
					break;
				}
				fd[count] = f;
			}
		}
		int r = reply(SERVER_FD, status, fd, count);
		for (uint32_t i = 0; i < count; i++)
			close(fd[i]);
		if (r)
			return 1;
	}
}

int file_server_start(const struct disks *ds, int *vmm_fd, char *err, size_t n)
{
	*vmm_fd = -1;
	int any = 0;
	for (int i = 0; i < ds->n; i++)
		any |= ds->d[i].top_fd >= 0;
	if (!any)
		return 0;
	int fd;
	pid_t pid = helper_fork("dataset file server", &fd, err, n);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* everything above the numbers it is given first, so that none is
		 * where another goes */
		int s = fcntl(fd, F_DUPFD_CLOEXEC, 64), tops[MAX_DISKS];
		for (int i = 0; i < ds->n; i++) {
			tops[i] = ds->d[i].top_fd >= 0 ? fcntl(ds->d[i].top_fd, F_DUPFD_CLOEXEC, 64) : -1;
			if (tops[i] < 0 && ds->d[i].top_fd >= 0)
				_exit(1);
		}
		if (s < 0 || dup3(s, SERVER_FD, O_CLOEXEC) < 0)
			_exit(1);
		for (int i = 0; i < ds->n; i++)
			if (tops[i] >= 0 ? dup3(tops[i], TOP_FD0 + i, O_CLOEXEC) < 0 : close(TOP_FD0 + i) < 0 && errno != EBADF)
				_exit(1);
		close(0), close(1); /* stderr stays, for a sanitizer's report */
		close_range(TOP_FD0 + ds->n, ~0u, 0); /* nothing else of husk's */
		if (confine())
			_exit(1);
		_exit(serve(ds));
	}
	*vmm_fd = fd;
	return pid;
}

/* ---- the VMM's side ---------------------------------------------------------- */

static struct {
	uint32_t disk, file;
	int used;
	uint64_t last;
} slots[FILE_SLOTS];
static uint64_t tick;
static uint32_t next_disk, next_file = UINT32_MAX; /* where a tree read in order asks next */

static int slot_of(uint32_t disk, uint32_t file)
{
	for (int i = 0; i < FILE_SLOTS; i++)
		if (slots[i].used && slots[i].disk == disk && slots[i].file == file)
			return i;
	return -1;
}

/* fd goes into the least recently used slot (closing what it held);
 * the slot's number, or -1. */
static int install(uint32_t disk, uint32_t file, int fd)
{
	int lru = 0;
	for (int i = 1; i < FILE_SLOTS && slots[lru].used; i++)
		if (!slots[i].used || slots[i].last < slots[lru].last)
			lru = i;
	int slot = dup3(fd, FILE_SLOT_BASE + lru, O_CLOEXEC);
	close(fd);
	if (slot < 0) {
		slots[lru].used = 0;
		return -1;
	}
	slots[lru].disk = disk, slots[lru].file = file, slots[lru].used = 1, slots[lru].last = ++tick;
	return slot;
}

/* One answer: the status, and the fds that came with it (*count). */
static int receive(int sock, int *fd, uint32_t *count)
{
	struct answer a;
	struct iovec iov = { &a, sizeof a };
	union fds_msg u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	ssize_t k;
	while ((k = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR && !stop_now())
		;
	*count = 0;
	struct cmsghdr *c = k == sizeof a ? CMSG_FIRSTHDR(&msg) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(0)) {
		*count = (uint32_t)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (*count > PREFETCH)
			*count = PREFETCH;
		memcpy(fd, CMSG_DATA(c), *count * sizeof(int));
	}
	if (k != sizeof a || a.count != *count || (a.status == 0) != (*count > 0) || a.status < 0) {
		for (uint32_t i = 0; i < *count; i++)
			close(fd[i]);
		*count = 0;
		return -EIO;
	}
	return -a.status;
}

/* Asks for file `file` of disk `disk` and the want-1 after it: the fds
 * (*count of them), or -errno. */
static int ask(int sock, uint32_t disk, uint32_t file, uint32_t want, int *fd, uint32_t *count)
{
	struct request rq = { disk, file, want };
	ssize_t k;
	while ((k = write(sock, &rq, sizeof rq)) < 0 && errno == EINTR && !stop_now())
		;
	if (k != sizeof rq)
		return -EIO;
	return receive(sock, fd, count);
}

int file_server_fetch(int sock, uint32_t disk, uint32_t file)
{
	int fd[PREFETCH];
	uint32_t count;
	int r = ask(sock, disk, file, 1, fd, &count);
	return r ? r : fd[0];
}

int file_server_open(int sock, uint32_t disk, uint32_t file)
{
	int i = slot_of(disk, file);
	if (i >= 0) {
		slots[i].last = ++tick;
		return FILE_SLOT_BASE + i;
	}
	int fd[PREFETCH], slot = -EIO;
	uint32_t count;
	int r = ask(sock, disk, file, disk == next_disk && file == next_file ? PREFETCH : 1, fd, &count);
	if (r)
		return r;
	/* the ones after it first: the file asked for is then the most recent */
	for (uint32_t n = count; n-- > 0;) {
		if (n && slot_of(disk, file + n) >= 0) {
			close(fd[n]);
			continue;
		}
		int s = install(disk, file + n, fd[n]);
		if (!n)
			slot = s < 0 ? -EIO : s;
	}
	next_disk = disk, next_file = file + count;
	return slot;
}
