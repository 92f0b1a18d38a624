/* Linux x86-64 system calls.  Two ways in: the `syscall` instruction
 * (entry.S, for any static binary) and a plain function call to
 * syscall_dispatch, whose address programs built with husk's libc find in
 * AT_SYSINFO.  Every call is counted in the report page; anything not
 * implemented here returns -ENOSYS. */
#include <errno.h>
#include <string.h>
#include "cpu.h"
#include "kernel.h"
#include "file.h"
#include "sys_fs.h"


enum {
	SYS_read = 0, SYS_write = 1, SYS_open = 2, SYS_close = 3, SYS_stat = 4, SYS_fstat = 5,
	SYS_lstat = 6, SYS_lseek = 8, SYS_mmap = 9, SYS_mprotect = 10, SYS_munmap = 11, SYS_brk = 12,
	SYS_rt_sigaction = 13, SYS_rt_sigprocmask = 14, SYS_ioctl = 16, SYS_pread64 = 17,
	SYS_pwrite64 = 18, SYS_readv = 19, SYS_writev = 20, SYS_access = 21, SYS_madvise = 28,
	SYS_dup = 32, SYS_dup2 = 33, SYS_getpid = 39, SYS_exit = 60, SYS_uname = 63, SYS_fcntl = 72,
	SYS_flock = 73, SYS_fsync = 74, SYS_fdatasync = 75, SYS_truncate = 76, SYS_ftruncate = 77,
	SYS_getcwd = 79, SYS_chdir = 80, SYS_fchdir = 81, SYS_rename = 82, SYS_mkdir = 83,
	SYS_rmdir = 84, SYS_creat = 85, SYS_link = 86, SYS_unlink = 87, SYS_symlink = 88,
	SYS_readlink = 89, SYS_chmod = 90, SYS_fchmod = 91, SYS_chown = 92, SYS_fchown = 93,
	SYS_lchown = 94, SYS_umask = 95, SYS_gettimeofday = 96, SYS_getuid = 102, SYS_getgid = 104,
	SYS_geteuid = 107, SYS_getegid = 108, SYS_getppid = 110, SYS_statfs = 137, SYS_fstatfs = 138,
	SYS_arch_prctl = 158, SYS_sync = 162, SYS_gettid = 186, SYS_time = 201, SYS_getdents64 = 217,
	SYS_set_tid_address = 218, SYS_fadvise64 = 221, SYS_clock_gettime = 228, SYS_clock_getres = 229,
	SYS_exit_group = 231, SYS_openat = 257, SYS_mkdirat = 258, SYS_fchownat = 260,
	SYS_newfstatat = 262, SYS_unlinkat = 263, SYS_renameat = 264, SYS_linkat = 265,
	SYS_symlinkat = 266, SYS_readlinkat = 267, SYS_fchmodat = 268, SYS_faccessat = 269,
	SYS_utimensat = 280, SYS_dup3 = 292, SYS_syncfs = 306, SYS_renameat2 = 316,
	SYS_getrandom = 318, SYS_getrlimit = 97, SYS_setrlimit = 160, SYS_prlimit64 = 302, SYS_faccessat2 = 439, SYS_nanosleep = 35, SYS_clock_nanosleep = 230, SYS_socket = 41, SYS_socketpair = 53, SYS_kill = 62, SYS_tkill = 200, SYS_tgkill = 234,
};

#define AT_FDCWD (-100)
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

struct timespec_k { long sec, nsec; };
struct sigaction_k { uint64_t handler, flags, restorer, mask; };

static uint64_t fs_base;
static struct sigaction_k sigactions[65]; /* recorded; signals are never delivered */
static uint64_t sigmask;

static long sys_uname(char *u)
{
	static const char f[6][65] = { "Linux", "husk", "6.1.0-husk", "#1 husk", "x86_64", "(none)" };
	if (!user_ok(u, sizeof f))
		return -EFAULT;
	memcpy(u, f, sizeof f);
	return 0;
}

static long sys_arch_prctl(long code, uint64_t addr)
{
	if (code == ARCH_SET_FS) {
		if (addr >= 1ull << 47)
			return -EPERM;
		fs_base = addr;
		wrmsr(MSR_FS_BASE, addr);
		return 0;
	}
	if (code == ARCH_GET_FS) {
		if (!user_ok((void *)addr, 8))
			return -EFAULT;
		*(uint64_t *)addr = fs_base;
		return 0;
	}
	return -EINVAL;
}

static long sys_clock_gettime(long clk, struct timespec_k *ts)
{
	uint64_t ns;
	switch (clk) {
	case 0: case 5: case 8: ns = clock_wall_ns(); break;    /* REALTIME, _COARSE, _ALARM */
	case 1: case 4: case 6: case 7: case 9: ns = clock_mono_ns(); break;
	case 2: case 3: ns = clock_mono_ns() - boot.mono_ns; break; /* the VM runs only this program */
	default: return -EINVAL;
	}
	if (!user_ok(ts, sizeof *ts))
		return -EFAULT;
	ts->sec = ns / 1000000000, ts->nsec = ns % 1000000000;
	return 0;
}

static long sys_clock_getres(long clk, struct timespec_k *ts)
{
	if (clk < 0 || clk > 9)
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
		tv[0] = ns / 1000000000, tv[1] = ns % 1000000000 / 1000;
	}
	return 0;
}

static long sys_time(long *t)
{
	long s = clock_wall_ns() / 1000000000;
	if (t) {
		if (!user_ok(t, 8))
			return -EFAULT;
		*t = s;
	}
	return s;
}

/* kill/tkill/tgkill: the only process is the program itself (pid and tid 1).
 * Signals are never delivered to handlers, so a signal whose action is the
 * default is handled as Linux would: ignored, or the program dies of it
 * (abort() ends here with SIGABRT). */
static long sys_kill_self(long pid, long sig)
{
	if (pid != 1 && pid != 0)
		return -3; /* ESRCH: no other process (kill(-1) spares the caller) */
	if (sig < 0 || sig > 64)
		return -EINVAL;
	if (!sig)
		return 0;
	static const uint64_t ignored_by_default = 1ull << 17 | 1ull << 23 | 1ull << 28 | 1ull << 18; /* CHLD URG WINCH CONT */
	uint64_t handler = sigactions[sig].handler;
	if (sig != 9 && sig != 19 && (handler == 1 /* SIG_IGN */ || (!handler && (ignored_by_default >> sig & 1))))
		return 0;
	if (sig != 9 && sig != 19 && handler > 1)
		return -ENOSYS; /* a handler that cannot be run: say so rather than pretend */
	volatile struct husk_fault *r = &REPORT->fault;
	r->vector = HUSK_FAULT_SIGNAL, r->error = 0, r->rip = 0, r->addr = 0, r->signal = sig;
	vfs_sync_all();
	for (;;)
		outl(HUSK_PORT_FAULT, 0);
}

/* Sleeping is the host's job: one exit, no guest CPU spent. */
static long sleep_until(int64_t deadline_ns, int clk)
{
	uint64_t now = clk == 0 ? clock_wall_ns() : clock_mono_ns();
	if ((int64_t)now < deadline_ns) {
		REPORT->sleep_ns = deadline_ns - now;
		outl(HUSK_PORT_SLEEP, 0);
	}
	return 0;
}

static long sys_clock_nanosleep(long clk, long flags, const struct timespec_k *req, struct timespec_k *rem)
{
	(void)rem; /* never interrupted: no signals are delivered */
	if (clk < 0 || clk > 9 || clk == 2 || clk == 3)
		return clk == 2 || clk == 3 ? -EOPNOTSUPP : -EINVAL;
	if (!user_ok(req, sizeof *req))
		return -EFAULT;
	if (req->sec < 0 || req->nsec < 0 || req->nsec >= 1000000000)
		return -EINVAL;
	int64_t ns = req->sec > 9000000000ll ? INT64_MAX : req->sec * 1000000000 + req->nsec;
	int64_t now = clk == 0 || clk == 5 || clk == 8 ? clock_wall_ns() : clock_mono_ns();
	int64_t deadline = flags & 1 ? ns : (ns > INT64_MAX - now ? INT64_MAX : now + ns);
	return sleep_until(deadline, clk == 0 || clk == 5 || clk == 8 ? 0 : 1);
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

static long sys_rt_sigaction(long sig, const struct sigaction_k *act, struct sigaction_k *old, size_t size)
{
	if (sig < 1 || sig > 64 || sig == 9 || sig == 19 || size != 8)
		return -EINVAL;
	if ((act && !user_ok(act, sizeof *act)) || (old && !user_ok(old, sizeof *old)))
		return -EFAULT;
	if (old)
		*old = sigactions[sig];
	if (act)
		sigactions[sig] = *act;
	return 0;
}

static long sys_rt_sigprocmask(long how, const uint64_t *set, uint64_t *old, size_t size)
{
	if (size != 8 || how < 0 || how > 2)
		return -EINVAL;
	if ((set && !user_ok(set, 8)) || (old && !user_ok(old, 8)))
		return -EFAULT;
	if (old)
		*old = sigmask;
	if (set)
		sigmask = how == 0 ? sigmask | *set : how == 1 ? sigmask & ~*set : *set;
	return 0;
}

/* Resource limits: open files are the policy's (and may be lowered); the
 * rest are fixed facts of the VM, reported as they are and not changed. */
static long sys_prlimit(long pid, long resource, const uint64_t *want, uint64_t *old)
{
	enum { RLIMIT_STACK = 3, RLIMIT_CORE = 4, RLIMIT_NPROC = 6, RLIMIT_NOFILE = 7, NLIMITS = 16 };
	if (pid != 0 && pid != 1)
		return -ESRCH;
	if (resource < 0 || resource >= NLIMITS)
		return -EINVAL;
	if ((want && !user_ok(want, 16)) || (old && !user_ok(old, 16)))
		return -EFAULT;
	if (resource == RLIMIT_NOFILE)
		return fd_rlimit(want, old);
	uint64_t v = resource == RLIMIT_STACK ? HUSK_STACK_SIZE : resource == RLIMIT_CORE ? 0
		   : resource == RLIMIT_NPROC ? 1 : ~0ull;
	uint64_t cur[2] = { v, v };
	if (want && (want[0] != v || want[1] != v))
		return -EPERM;
	if (old)
		memcpy(old, cur, sizeof cur);
	return 0;
}

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
	case SYS_creat: return sys_openat(AT_FDCWD, (const char *)a1, 01101, a2);
	case SYS_openat: return sys_openat(a1, (const char *)a2, a3, a4);
	case SYS_close: return sys_close(a1);
	case SYS_dup: return sys_dup(a1, 0, 0);
	case SYS_dup2: return sys_dup3(a1, a2, 0, 1);
	case SYS_dup3: return sys_dup3(a1, a2, a3, 0);
	case SYS_lseek: return sys_lseek(a1, a2, a3);
	case SYS_stat: return sys_fstatat(AT_FDCWD, (const char *)a1, (void *)a2, 0);
	case SYS_lstat: return sys_fstatat(AT_FDCWD, (const char *)a1, (void *)a2, 0x100);
	case SYS_fstat: return sys_fstat(a1, (void *)a2);
	case SYS_newfstatat: return sys_fstatat(a1, (const char *)a2, (void *)a3, a4);
	case SYS_access: return sys_faccessat(AT_FDCWD, (const char *)a1, a2, 0);
	case SYS_faccessat: return sys_faccessat(a1, (const char *)a2, a3, 0);
	case SYS_faccessat2: return sys_faccessat(a1, (const char *)a2, a3, a4);
	case SYS_getdents64: return sys_getdents64(a1, (void *)a2, a3);
	case SYS_mkdir: return sys_mkdirat(AT_FDCWD, (const char *)a1, a2);
	case SYS_mkdirat: return sys_mkdirat(a1, (const char *)a2, a3);
	case SYS_rmdir: return sys_unlinkat(AT_FDCWD, (const char *)a1, 0x200);
	case SYS_unlink: return sys_unlinkat(AT_FDCWD, (const char *)a1, 0);
	case SYS_unlinkat: return sys_unlinkat(a1, (const char *)a2, a3);
	case SYS_rename: return sys_renameat2(AT_FDCWD, (const char *)a1, AT_FDCWD, (const char *)a2, 0);
	case SYS_renameat: return sys_renameat2(a1, (const char *)a2, a3, (const char *)a4, 0);
	case SYS_renameat2: return sys_renameat2(a1, (const char *)a2, a3, (const char *)a4, a5);
	case SYS_link: return sys_linkat(AT_FDCWD, (const char *)a1, AT_FDCWD, (const char *)a2, 0);
	case SYS_linkat: return sys_linkat(a1, (const char *)a2, a3, (const char *)a4, a5);
	case SYS_symlink: return sys_symlinkat((const char *)a1, AT_FDCWD, (const char *)a2);
	case SYS_symlinkat: return sys_symlinkat((const char *)a1, a2, (const char *)a3);
	case SYS_readlink: return sys_readlinkat(AT_FDCWD, (const char *)a1, (char *)a2, a3);
	case SYS_readlinkat: return sys_readlinkat(a1, (const char *)a2, (char *)a3, a4);
	case SYS_truncate: return sys_truncate((const char *)a1, a2);
	case SYS_ftruncate: return sys_ftruncate(a1, a2);
	case SYS_fsync: case SYS_fdatasync: return sys_fsync(a1);
	case SYS_sync: case SYS_syncfs: vfs_sync_all(); return 0;
	case SYS_utimensat: return sys_utimensat(a1, (const char *)a2, (const int64_t *)a3, a4);
	case SYS_chmod: return sys_fchmodat(AT_FDCWD, (const char *)a1, a2);
	case SYS_fchmodat: return sys_fchmodat(a1, (const char *)a2, a3);
	case SYS_fchmod: return sys_fchmod(a1, a2);
	case SYS_chown: case SYS_lchown: return sys_chown(AT_FDCWD, (const char *)a1, a2, a3, nr == SYS_chown);
	case SYS_fchownat: return sys_chown(a1, (const char *)a2, a3, a4, !(a5 & 0x100));
	case SYS_fchown: return sys_fchown(a1, a2, a3);
	case SYS_kill: return sys_kill_self(a1, a2);
	case SYS_tkill: return sys_kill_self(a1, a2);
	case SYS_tgkill: return sys_kill_self(a1 == a2 ? a1 : 2, a3);
	case SYS_socket: case SYS_socketpair:
		return -97; /* EAFNOSUPPORT: there is no network in the guest */
	case SYS_nanosleep: return sys_clock_nanosleep(1, 0, (void *)a1, (void *)a2);
	case SYS_clock_nanosleep: return sys_clock_nanosleep(a1, a2, (void *)a3, (void *)a4);
	case SYS_umask: return sys_umask(a1);
	case SYS_getcwd: return sys_getcwd((char *)a1, a2);
	case SYS_chdir: return sys_chdir((const char *)a1);
	case SYS_fchdir: return sys_fchdir(a1);
	case SYS_fcntl: return sys_fcntl(a1, a2, a3);
	case SYS_flock: return fd_get(a1) ? 0 : -EBADF; /* one process: no one to conflict with */
	case SYS_fadvise64: return fd_get(a1) ? 0 : -EBADF;
	case SYS_ioctl: return sys_ioctl(a1, a2, (void *)a3);
	case SYS_statfs: return sys_statfs((const char *)a1, (void *)a2);
	case SYS_fstatfs: return sys_fstatfs(a1, (void *)a2);
	case SYS_mmap:
		if (!(a4 & 0x20))
			return sys_mmap_file(a1, a2, a3, a4, a5, a6);
		return mem_mmap(a1, a2, a3, a4);
	case SYS_munmap: return mem_munmap(a1, a2);
	case SYS_mprotect: return mem_mprotect(a1, a2);
	case SYS_brk: return mem_brk(a1);
	case SYS_madvise: return 0;
	case SYS_arch_prctl: return sys_arch_prctl(a1, a2);
	case SYS_set_tid_address: return 1;
	case SYS_getpid: case SYS_gettid: return 1;
	case SYS_getrlimit: return sys_prlimit(0, a1, 0, (uint64_t *)a2);
	case SYS_setrlimit: return sys_prlimit(0, a1, (const uint64_t *)a2, 0);
	case SYS_prlimit64: return sys_prlimit(a1, a2, (const uint64_t *)a3, (uint64_t *)a4);
	case SYS_getppid: return 0;
	case SYS_getuid: case SYS_getgid: case SYS_geteuid: case SYS_getegid: return 0;
	case SYS_clock_gettime: return sys_clock_gettime(a1, (struct timespec_k *)a2);
	case SYS_clock_getres: return sys_clock_getres(a1, (struct timespec_k *)a2);
	case SYS_gettimeofday: return sys_gettimeofday((long *)a1);
	case SYS_time: return sys_time((long *)a1);
	case SYS_getrandom: return sys_getrandom((void *)a1, a2);
	case SYS_uname: return sys_uname((char *)a1);
	case SYS_rt_sigaction: return sys_rt_sigaction(a1, (void *)a2, (void *)a3, a4);
	case SYS_rt_sigprocmask: return sys_rt_sigprocmask(a1, (void *)a2, (void *)a3, a4);
	case SYS_exit: case SYS_exit_group:
		fd_close_all();
		vfs_sync_all();
		halt_exit(a1 & 0xff);
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
	if (r == -ENOSPC)
		REPORT->denied_enospc++;
	return r;
}
