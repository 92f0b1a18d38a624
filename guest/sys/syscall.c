/* SPDX-License-Identifier: GPL-2.0-only */
/* Linux x86-64 system calls.  Two ways in: the `syscall` instruction
 * (entry.S, for any static binary) and a plain function call to
 * syscall_dispatch, whose address programs built with husk's libc find in
 * AT_SYSINFO.  Every call is counted in the report page; anything not
 * implemented here returns -ENOSYS. */
#include <errno.h>
#include <string.h>
#include "arch/cpu.h"
#include "kernel.h"
#include "fs/file.h"
#include "fs/lock.h"
#include "sys/sys_fs.h"
#include "sys/sys_info.h"
#include "proc/creds.h"
#include "proc/exec.h"
#include "proc/itimer.h"
#include "proc/process.h"
#include "ipc/epoll.h"
#include "ipc/eventfd.h"
#include "ipc/pipe.h"
#include "ipc/poll.h"
#include "ipc/timerfd.h"
#include "net/socket.h"
#include "proc/futex.h"
#include "proc/sched.h"
#include "proc/signal.h"
#include "proc/thread.h"
#include "linux_abi.h"
#include "linux_syscall.h"

struct timespec_k { long sec, nsec; };

static long sys_uname(char *u)
{
	if (!user_ok(u, sizeof uts_names))
		return -EFAULT;
	memcpy(u, uts_names, sizeof uts_names);
	return 0;
}

static int clock_valid(long clk)
{
	return clk >= CLOCK_REALTIME && clk <= CLOCK_BOOTTIME_ALARM;
}

/* The CPU-time clocks: the process's counts from boot (the VM runs only
 * this program), a thread's is its own (sched.c). */
static int clock_is_cpu(long clk)
{
	return clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID;
}

static int clock_is_wall(long clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_REALTIME_ALARM;
}

static long sys_clock_gettime(long clk, struct timespec_k *ts)
{
	if (!clock_valid(clk))
		return -EINVAL;
	uint64_t ns = clock_is_wall(clk) ? clock_wall_ns() : clk == CLOCK_THREAD_CPUTIME_ID ? task_cpu_ns()
		      : clk == CLOCK_PROCESS_CPUTIME_ID ? clock_since_boot_ns() : clock_mono_ns();
	if (!user_ok(ts, sizeof *ts))
		return -EFAULT;
	ts->sec = ns / NSEC_PER_SEC, ts->nsec = ns % NSEC_PER_SEC;
	return 0;
}

static long sys_clock_getres(long clk, struct timespec_k *ts)
{
	if (!clock_valid(clk))
		return -EINVAL;
	if (ts) {
		if (!user_ok(ts, sizeof *ts))
			return -EFAULT;
		ts->sec = 0, ts->nsec = 1;
	}
	return 0;
}

static long sys_gettimeofday(long *tv)
{
	uint64_t ns = clock_wall_ns();
	if (tv) {
		if (!user_ok(tv, 16))
			return -EFAULT;
		tv[0] = ns / NSEC_PER_SEC, tv[1] = ns % NSEC_PER_SEC / 1000;
	}
	return 0;
}

static long sys_time(long *t)
{
	long s = clock_wall_ns() / NSEC_PER_SEC;
	if (t) {
		if (!user_ok(t, 8))
			return -EFAULT;
		*t = s;
	}
	return s;
}

/* Sleeping is the host's job: one exit, no guest CPU spent. */
static long sleep_until(int64_t deadline_ns, int wall, struct timespec_k *rem)
{
	int64_t now = wall ? clock_wall_ns() : clock_mono_ns();
	if (now >= deadline_ns)
		return 0;
	uint64_t started = clock_mono_ns(), ns = deadline_ns - now;
	if (!signal_sleep(ns))
		return 0;
	if (rem) { /* interrupted by a signal: what was left */
		uint64_t slept = clock_mono_ns() - started, left = slept < ns ? ns - slept : 0;
		rem->sec = left / NSEC_PER_SEC, rem->nsec = left % NSEC_PER_SEC;
	}
	return -EINTR;
}

static long sys_clock_nanosleep(long clk, long flags, const struct timespec_k *req, struct timespec_k *rem)
{
	if (clock_is_cpu(clk))
		return -EOPNOTSUPP;
	if (!clock_valid(clk))
		return -EINVAL;
	if (!user_ok(req, sizeof *req))
		return -EFAULT;
	if (req->sec < 0 || req->nsec < 0 || req->nsec >= NSEC_PER_SEC)
		return -EINVAL;
	int64_t ns = req->sec > 9000000000ll ? INT64_MAX : req->sec * NSEC_PER_SEC + req->nsec;
	int wall = clock_is_wall(clk);
	int64_t now = wall ? clock_wall_ns() : clock_mono_ns();
	int64_t deadline = flags & TIMER_ABSTIME ? ns : (ns > INT64_MAX - now ? INT64_MAX : now + ns);
	if (rem && !(flags & TIMER_ABSTIME) && !user_ok(rem, sizeof *rem))
		return -EFAULT;
	return sleep_until(deadline, wall, flags & TIMER_ABSTIME ? 0 : rem);
}

static long sys_getrandom(void *buf, size_t len)
{
	if (len > 33554431)
		len = 33554431;
	if (!user_ok(buf, len))
		return -EFAULT;
	random_fill(buf, len);
	return len;
}

/* A limit kept per process: {soft, hard}; the soft one up to the hard one,
 * the hard one raised by root only. */
static long set_limit(uint64_t *lim, const uint64_t *want, uint64_t *old)
{
	uint64_t was[2] = { lim[0], lim[1] };
	if (want && want[0] > want[1])
		return -EINVAL;
	if (want && want[1] > lim[1] && current->proc->creds.uid[1])
		return -EPERM;
	if (want)
		lim[0] = want[0], lim[1] = want[1];
	if (old)
		memcpy(old, was, sizeof was);
	return 0;
}

/* Resource limits: open files are the policy's (and may be lowered), the
 * process count is held against users other than root, a core size is kept;
 * the rest are fixed facts of the VM, reported as they are and not changed. */
static long sys_prlimit(long pid, long resource, const uint64_t *want, uint64_t *old)
{
	if (pid != 0 && pid != current->proc->pid)
		return process_by_pid((int)pid) ? -EPERM : -ESRCH; /* another process's: not offered */
	if (resource < 0 || resource >= RLIM_NLIMITS)
		return -EINVAL;
	if ((want && !user_ok(want, 16)) || (old && !user_ok(old, 16)))
		return -EFAULT;
	if (resource == RLIMIT_NOFILE)
		return fd_rlimit(want, old);
	if (resource == RLIMIT_NPROC || resource == RLIMIT_CORE)
		return set_limit(resource == RLIMIT_NPROC ? current->proc->nproc_limit : current->proc->core_limit, want,
				 old);
	uint64_t v = resource == RLIMIT_STACK ? HUSK_STACK_SIZE : RLIM_INFINITY;
	uint64_t cur[2] = { v, v };
	if (want && (want[0] != v || want[1] != v))
		return -EPERM;
	if (old)
		memcpy(old, cur, sizeof cur);
	return 0;
}

/* close_range: the fds first..last closed, or marked close-on-exec
 * (CLOSE_RANGE_CLOEXEC); CLOSE_RANGE_UNSHARE asks for a table of the
 * caller's own, which a process has already (threads share theirs, as
 * with Linux's CLONE_FILES, and then it is refused). */
static long sys_close_range(unsigned first, unsigned last, unsigned flags)
{
	enum { UNSHARE = 2, CLOEXEC = 4 };
	if ((flags & ~(unsigned)(UNSHARE | CLOEXEC)) || first > last)
		return -EINVAL;
	if ((flags & UNSHARE) && current->proc->threads > 1)
		return -EINVAL;
	for (unsigned fd = first; fd <= last && fd < MAX_FDS; fd++)
		if (fd_get(fd))
			(flags & CLOEXEC) ? fd_cloexec(fd, 1) : fd_close(fd);
	return 0;
}

/* The file an xattr call names (a path, followed or not, or an fd) exists:
 * -ENODATA (it has no attribute), else the lookup's error. */
static long xattr_target(long nr, long a1)
{
	if (nr == SYS_fgetxattr || nr == SYS_flistxattr || nr == SYS_fsetxattr || nr == SYS_fremovexattr)
		return fd_get((int)a1) ? -ENODATA : -EBADF;
	int follow = nr == SYS_getxattr || nr == SYS_listxattr || nr == SYS_setxattr || nr == SYS_removexattr;
	long r = sys_exists_at(AT_FDCWD, (const char *)a1, follow ? 0 : AT_SYMLINK_NOFOLLOW);
	return r ? r : -ENODATA;
}

/* A directory fd argument of the *at calls, and a pid_t, are ints in
 * Linux: what a program passes as an int (AT_FDCWD, -100; wait4's -1, as
 * glibc passes it) may arrive with its upper half not sign-extended; it is
 * cast here, as Linux's prototypes do. */
static long dispatch(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	switch (nr) {
	case SYS_read: return sys_rw(a1, (void *)a2, a3, 0);
	case SYS_write: return sys_rw(a1, (void *)a2, a3, 1);
	case SYS_pread64: return sys_prw(a1, (void *)a2, a3, a4, 0);
	case SYS_pwrite64: return sys_prw(a1, (void *)a2, a3, a4, 1);
	case SYS_readv: return sys_rwv(a1, (const struct kiovec *)a2, a3, 0);
	case SYS_writev: return sys_rwv(a1, (const struct kiovec *)a2, a3, 1);
	case SYS_open: return sys_openat(AT_FDCWD, (const char *)a1, a2, a3);
	case SYS_creat: return sys_openat(AT_FDCWD, (const char *)a1, O_CREAT | O_WRONLY | O_TRUNC, a2);
	case SYS_openat: return sys_openat((int)a1, (const char *)a2, a3, a4);
	case SYS_close: return sys_close(a1);
	case SYS_dup: return sys_dup(a1, 0, 0);
	case SYS_dup2: return sys_dup3(a1, a2, 0, 1);
	case SYS_dup3: return sys_dup3(a1, a2, a3, 0);
	case SYS_lseek: return sys_lseek(a1, a2, a3);
	case SYS_stat: return sys_fstatat(AT_FDCWD, (const char *)a1, (void *)a2, 0);
	case SYS_lstat: return sys_fstatat(AT_FDCWD, (const char *)a1, (void *)a2, AT_SYMLINK_NOFOLLOW);
	case SYS_fstat: return sys_fstat(a1, (void *)a2);
	case SYS_newfstatat: return sys_fstatat((int)a1, (const char *)a2, (void *)a3, a4);
	case SYS_access: return sys_faccessat(AT_FDCWD, (const char *)a1, a2, 0);
	case SYS_faccessat: return sys_faccessat((int)a1, (const char *)a2, a3, 0);
	case SYS_faccessat2: return sys_faccessat((int)a1, (const char *)a2, a3, a4);
	/* Extended attributes: none on any file (ls -l asks for ACLs; ENODATA
	 * and an empty list are Linux's answers for a file without them), and
	 * none can be set, as on a file system without xattr support. */
	case SYS_getxattr: case SYS_lgetxattr: case SYS_fgetxattr: return xattr_target(nr, a1);
	case SYS_listxattr: case SYS_llistxattr: case SYS_flistxattr: {
		long r = xattr_target(nr, a1);
		return r == -ENODATA ? 0 : r;
	}
	case SYS_setxattr: case SYS_lsetxattr: case SYS_fsetxattr: case SYS_removexattr: case SYS_lremovexattr:
	case SYS_fremovexattr: {
		long r = xattr_target(nr, a1);
		return r == -ENODATA ? -EOPNOTSUPP : r;
	}
	case SYS_close_range: return sys_close_range((unsigned)a1, (unsigned)a2, (unsigned)a3);
	case SYS_statx: return sys_statx((int)a1, (const char *)a2, a3, (unsigned)a4, (void *)a5);
	case SYS_getdents64: return sys_getdents64(a1, (void *)a2, a3);
	case SYS_mkdir: return sys_mkdirat(AT_FDCWD, (const char *)a1, a2);
	case SYS_mkdirat: return sys_mkdirat((int)a1, (const char *)a2, a3);
	case SYS_mknod: return sys_mknodat(AT_FDCWD, (const char *)a1, a2, a3);
	case SYS_mknodat: return sys_mknodat((int)a1, (const char *)a2, a3, a4);
	case SYS_rmdir: return sys_unlinkat(AT_FDCWD, (const char *)a1, AT_REMOVEDIR);
	case SYS_unlink: return sys_unlinkat(AT_FDCWD, (const char *)a1, 0);
	case SYS_unlinkat: return sys_unlinkat((int)a1, (const char *)a2, a3);
	case SYS_rename: return sys_renameat2(AT_FDCWD, (const char *)a1, AT_FDCWD, (const char *)a2, 0);
	case SYS_renameat: return sys_renameat2((int)a1, (const char *)a2, (int)a3, (const char *)a4, 0);
	case SYS_renameat2: return sys_renameat2((int)a1, (const char *)a2, (int)a3, (const char *)a4, a5);
	case SYS_link: return sys_linkat(AT_FDCWD, (const char *)a1, AT_FDCWD, (const char *)a2, 0);
	case SYS_linkat: return sys_linkat((int)a1, (const char *)a2, (int)a3, (const char *)a4, a5);
	case SYS_symlink: return sys_symlinkat((const char *)a1, AT_FDCWD, (const char *)a2);
	case SYS_symlinkat: return sys_symlinkat((const char *)a1, (int)a2, (const char *)a3);
	case SYS_readlink: return sys_readlinkat(AT_FDCWD, (const char *)a1, (char *)a2, a3);
	case SYS_readlinkat: return sys_readlinkat((int)a1, (const char *)a2, (char *)a3, a4);
	case SYS_truncate: return sys_truncate((const char *)a1, a2);
	case SYS_ftruncate: return sys_ftruncate(a1, a2);
	case SYS_fsync: case SYS_fdatasync: return sys_fsync(a1);
	case SYS_sync: case SYS_syncfs: vfs_sync_all(); return 0;
	case SYS_utimensat: return sys_utimensat((int)a1, (const char *)a2, (const int64_t *)a3, a4);
	case SYS_chmod: return sys_fchmodat(AT_FDCWD, (const char *)a1, a2);
	case SYS_fchmodat: return sys_fchmodat((int)a1, (const char *)a2, a3);
	case SYS_fchmod: return sys_fchmod(a1, a2);
	case SYS_chown: case SYS_lchown: return sys_chown(AT_FDCWD, (const char *)a1, a2, a3, nr == SYS_chown);
	case SYS_fchownat: return sys_chown((int)a1, (const char *)a2, a3, a4, !(a5 & AT_SYMLINK_NOFOLLOW));
	case SYS_fchown: return sys_fchown(a1, a2, a3);
	case SYS_kill: return sys_kill((int)a1, (int)a2);
	case SYS_tkill: return sys_tkill((int)a1, (int)a2);
	case SYS_tgkill: return sys_tgkill((int)a1, (int)a2, (int)a3);
	case SYS_socket: return sys_socket(a1, a2, a3);
	case SYS_bind: return sys_bind(a1, (const void *)a2, a3);
	case SYS_connect: return sys_connect(a1, (const void *)a2, a3);
	case SYS_listen: return sys_listen(a1, a2);
	case SYS_accept: return sys_accept4(a1, (void *)a2, (int *)a3, 0);
	case SYS_accept4: return sys_accept4(a1, (void *)a2, (int *)a3, a4);
	case SYS_socketpair: return sys_socketpair(a1, a2, a3, (int *)a4);
	case SYS_sendto: return sys_sendto(a1, (const void *)a2, a3, a4, (const void *)a5, a6);
	case SYS_recvfrom: return sys_recvfrom(a1, (void *)a2, a3, a4, (void *)a5, (int *)a6);
	case SYS_sendmsg: return sys_sendmsg(a1, (const void *)a2, a3);
	case SYS_recvmsg: return sys_recvmsg(a1, (void *)a2, a3);
	case SYS_shutdown: return sys_shutdown(a1, a2);
	case SYS_getsockname: return sys_getsockname(a1, (void *)a2, (int *)a3, 0);
	case SYS_getpeername: return sys_getsockname(a1, (void *)a2, (int *)a3, 1);
	case SYS_getsockopt: return sys_getsockopt(a1, a2, a3, (void *)a4, (int *)a5);
	case SYS_setsockopt: return sys_setsockopt(a1, a2, a3, (const void *)a4, a5);
	case SYS_eventfd: return sys_eventfd(a1);
	case SYS_eventfd2: return sys_eventfd2(a1, a2);
	case SYS_timerfd_create: return sys_timerfd_create(a1, a2);
	case SYS_timerfd_settime: return sys_timerfd_settime(a1, a2, (const int64_t *)a3, (int64_t *)a4);
	case SYS_timerfd_gettime: return sys_timerfd_gettime(a1, (int64_t *)a2);
	case SYS_pipe: return sys_pipe2((int *)a1, 0);
	case SYS_pipe2: return sys_pipe2((int *)a1, a2);
	case SYS_poll: return sys_poll((void *)a1, a2, a3);
	case SYS_ppoll: return sys_ppoll((void *)a1, a2, (const int64_t *)a3, (const uint64_t *)a4, a5);
	case SYS_select: return sys_select(a1, (uint64_t *)a2, (uint64_t *)a3, (uint64_t *)a4, (int64_t *)a5);
	case SYS_pselect6:
		return sys_pselect6(a1, (uint64_t *)a2, (uint64_t *)a3, (uint64_t *)a4, (int64_t *)a5, (const uint64_t *)a6);
	case SYS_epoll_create: return a1 <= 0 ? -EINVAL : sys_epoll_create1(0);
	case SYS_epoll_create1: return sys_epoll_create1(a1);
	case SYS_epoll_ctl: return sys_epoll_ctl(a1, a2, a3, (void *)a4);
	case SYS_epoll_wait: return sys_epoll_pwait(a1, (void *)a2, a3, a4, 0, 0, 0, 0);
	case SYS_epoll_pwait: return sys_epoll_pwait(a1, (void *)a2, a3, a4, 0, 0, (const uint64_t *)a5, a6);
	case SYS_epoll_pwait2:
		return sys_epoll_pwait(a1, (void *)a2, a3, 0, (const int64_t *)a4, 1, (const uint64_t *)a5, a6);
	case SYS_nanosleep: return sys_clock_nanosleep(CLOCK_MONOTONIC, 0, (void *)a1, (void *)a2);
	case SYS_clock_nanosleep: return sys_clock_nanosleep(a1, a2, (void *)a3, (void *)a4);
	case SYS_umask: return sys_umask(a1);
	case SYS_getcwd: return sys_getcwd((char *)a1, a2);
	case SYS_chdir: return sys_chdir((const char *)a1);
	case SYS_fchdir: return sys_fchdir(a1);
	case SYS_fcntl: return sys_fcntl(a1, a2, a3);
	case SYS_flock: return fd_get(a1) ? lock_flock(fd_get(a1), a2) : -EBADF;
	case SYS_fadvise64: return fd_get(a1) ? 0 : -EBADF;
	case SYS_ioctl: return sys_ioctl(a1, a2, (void *)a3);
	case SYS_statfs: return sys_statfs((const char *)a1, (void *)a2);
	case SYS_fstatfs: return sys_fstatfs(a1, (void *)a2);
	case SYS_mmap:
		if (!(a4 & MAP_ANONYMOUS))
			return sys_mmap_file(a1, a2, a3, a4, a5, a6);
		return mem_mmap(a1, a2, a3, a4);
	case SYS_munmap: return sys_munmap(a1, a2);
	case SYS_mprotect: return mem_mprotect(a1, a2, a3);
	case SYS_brk: return mem_brk(a1);
	case SYS_madvise: return 0;
	case SYS_msync: return mem_msync(a1, a2, a3);
	case SYS_arch_prctl: return sys_arch_prctl(a1, a2);
	case SYS_set_tid_address: return sys_set_tid_address((uint32_t *)a1);
	case SYS_set_robust_list: return sys_set_robust_list(a1, a2);
	case SYS_get_robust_list: return sys_get_robust_list(a1, (uint64_t *)a2, (uint64_t *)a3);
	case SYS_getpid: return current->proc->pid;
	case SYS_gettid: return current->tid;
	case SYS_clone: return sys_clone(a1, a2, (uint32_t *)a3, (uint32_t *)a4, a5);
	case SYS_futex: return sys_futex((uint32_t *)a1, a2, a3, (const void *)a4, (uint32_t *)a5, a6);
	case SYS_getrlimit: return sys_prlimit(0, a1, 0, (uint64_t *)a2);
	case SYS_setrlimit: return sys_prlimit(0, a1, (const uint64_t *)a2, 0);
	case SYS_prlimit64: return sys_prlimit((int)a1, a2, (const uint64_t *)a3, (uint64_t *)a4);
	case SYS_getppid: return sys_getppid();
	case SYS_getpgrp: return sys_getpgid(0);
	case SYS_getpgid: return sys_getpgid((int)a1);
	case SYS_getsid: return sys_getsid((int)a1);
	case SYS_setpgid: return sys_setpgid((int)a1, (int)a2);
	case SYS_setsid: return sys_setsid();
	case SYS_fork: return sys_fork();
	case SYS_execve: return sys_execve((const char *)a1, (char *const *)a2, (char *const *)a3);
	case SYS_execveat: return sys_execveat((int)a1, (const char *)a2, (char *const *)a3, (char *const *)a4, a5);
	case SYS_vfork: return sys_vfork();
	case SYS_wait4: return sys_wait4((int)a1, (int *)a2, a3, (void *)a4);
	case SYS_waitid: return sys_waitid(a1, a2, (void *)a3, a4, (void *)a5);
	case SYS_sysinfo: return sys_sysinfo((void *)a1);
	case SYS_times: return sys_times((void *)a1);
	case SYS_getrusage: return sys_getrusage(a1, (void *)a2);
	case SYS_sched_getaffinity: return sys_sched_getaffinity((int)a1, a2, (void *)a3);
	case SYS_sched_yield: sched_yield(); return 0;
	case SYS_memfd_create: return sys_memfd_create((const char *)a1, a2);
	case SYS_copy_file_range: return sys_copy_file_range(a1, (int64_t *)a2, a3, (int64_t *)a4, a5, a6);
	case SYS_splice: return sys_splice(a1, (int64_t *)a2, a3, (int64_t *)a4, a5, a6);
	case SYS_sendfile: return sys_sendfile(a1, a2, (int64_t *)a3, a4);
	case SYS_getpriority: return sys_getpriority(a1, a2);
	case SYS_setpriority: return sys_setpriority(a1, a2, a3);
	case SYS_getuid: case SYS_getgid: case SYS_geteuid: case SYS_getegid: case SYS_getresuid: case SYS_getresgid:
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid: case SYS_setresuid:
	case SYS_setresgid: case SYS_getgroups: case SYS_setgroups:
		return creds_syscall(nr, a1, a2, a3);
	case SYS_clock_gettime: return sys_clock_gettime(a1, (struct timespec_k *)a2);
	case SYS_clock_getres: return sys_clock_getres(a1, (struct timespec_k *)a2);
	case SYS_gettimeofday: return sys_gettimeofday((long *)a1);
	case SYS_time: return sys_time((long *)a1);
	case SYS_getrandom: return sys_getrandom((void *)a1, a2);
	case SYS_uname: return sys_uname((char *)a1);
	case SYS_rt_sigaction: return sys_rt_sigaction(a1, (void *)a2, (void *)a3, a4);
	case SYS_rt_sigprocmask: return sys_rt_sigprocmask(a1, (void *)a2, (void *)a3, a4);
	case SYS_sigaltstack: return sys_sigaltstack((void *)a1, (void *)a2);
	case SYS_rt_sigpending: return sys_rt_sigpending((uint64_t *)a1, a2);
	case SYS_rt_sigsuspend: return sys_rt_sigsuspend((uint64_t *)a1, a2);
	case SYS_rt_sigtimedwait: return sys_rt_sigtimedwait((uint64_t *)a1, (void *)a2, (void *)a3, a4);
	case SYS_rt_sigqueueinfo: return sys_rt_sigqueueinfo((int)a1, (int)a2, (void *)a3);
	case SYS_pause: return sys_pause();
	case SYS_setitimer: return sys_setitimer(a1, (const long *)a2, (long *)a3);
	case SYS_getitimer: return sys_getitimer(a1, (long *)a2);
	case SYS_alarm: return sys_alarm(a1);
	case SYS_timer_create: return sys_timer_create(a1, (const void *)a2, (int32_t *)a3);
	case SYS_timer_settime: return sys_timer_settime(a1, a2, (const void *)a3, (void *)a4);
	case SYS_timer_gettime: return sys_timer_gettime(a1, (void *)a2);
	case SYS_timer_getoverrun: return sys_timer_getoverrun(a1);
	case SYS_timer_delete: return sys_timer_delete(a1);
	case SYS_exit: sys_exit(a1);
	case SYS_exit_group: process_exit((int)(a1 & 0xff) << 8);
	case HUSK_SYSCALL_READY: return sys_husk_ready(a1, (char *)a2, a3);
	}
	if (nr >= 0 && nr < HUSK_NSYSCALLS)
		REPORT->enosys[nr]++;
	else
		REPORT->out_of_range++;
	return -ENOSYS;
}

/* Every system call: counted for the report, and a full disk (the workdir's
 * or /tmp's) counted as a limit hit for the audit. */
long syscall_dispatch(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	if (nr >= 0 && nr < HUSK_NSYSCALLS)
		REPORT->calls[nr]++;
	long r = dispatch(nr, a1, a2, a3, a4, a5, a6);
	while (r == -ERESTARTSYS) { /* interrupted: signal_deliver restarts it or makes it EINTR */
		if (signal_due()) {
			current->restart.nr = nr, current->restart.by_instruction = current->frame != 0;
			long *a = current->restart.a;
			a[0] = a1, a[1] = a2, a[2] = a3, a[3] = a4, a[4] = a5, a[5] = a6;
			current->restart.pending = 1;
			signal_recompute(); /* the way out takes the slow path */
			break;
		}
		r = dispatch(nr, a1, a2, a3, a4, a5, a6); /* the signal went to another thread */
	}
	if (r == -ENOSPC)
		REPORT->denied_enospc++;
	return r;
}
