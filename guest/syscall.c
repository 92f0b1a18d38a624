/* Linux x86-64 system calls.  Two ways in: the `syscall` instruction
 * (entry.S, for any static binary) and a plain function call to
 * syscall_dispatch, whose address programs built with husk's libc find in
 * AT_SYSINFO.  Every call is counted in the report page; anything not
 * implemented here returns -ENOSYS. */
#include <string.h>
#include "cpu.h"
#include "kernel.h"

enum {
	EPERM = 1, EBADF = 9, EFAULT = 14, EINVAL = 22, ENOTTY = 25, ENOSYS = 38,
};

enum {
	SYS_read = 0, SYS_write = 1, SYS_close = 3, SYS_mmap = 9, SYS_mprotect = 10,
	SYS_munmap = 11, SYS_brk = 12, SYS_rt_sigaction = 13, SYS_rt_sigprocmask = 14,
	SYS_ioctl = 16, SYS_readv = 19, SYS_writev = 20, SYS_madvise = 28, SYS_getpid = 39,
	SYS_exit = 60, SYS_uname = 63, SYS_fcntl = 72, SYS_gettimeofday = 96, SYS_getuid = 102,
	SYS_getgid = 104, SYS_geteuid = 107, SYS_getegid = 108, SYS_getppid = 110,
	SYS_arch_prctl = 158, SYS_gettid = 186, SYS_time = 201, SYS_set_tid_address = 218,
	SYS_clock_gettime = 228, SYS_clock_getres = 229, SYS_exit_group = 231, SYS_getrandom = 318,
};

#define TIOCGWINSZ 0x5413
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define F_GETFD 1
#define F_SETFD 2
#define F_GETFL 3
#define F_SETFL 4
#define IOV_MAX 1024

struct timespec_k { long sec, nsec; };
struct sigaction_k { uint64_t handler, flags, restorer, mask; };

static int fd_open[3] = { 1, 1, 1 };
static int fd_flags[3];
static uint64_t fs_base;
static struct sigaction_k sigactions[65]; /* recorded; signals are never delivered */
static uint64_t sigmask;

static int std_fd(long fd) { return fd >= 0 && fd < 3 && fd_open[fd]; }

static long sys_rw(long fd, void *buf, size_t len, int writing)
{
	if (!std_fd(fd))
		return -EBADF;
	if (!len)
		return 0;
	if (!user_ok(buf, len))
		return -EFAULT;
	return writing ? console_write(fd, buf, len) : console_read(fd, buf, len);
}

static long sys_rwv(long fd, const struct kiovec *iov, long n, int writing)
{
	if (!std_fd(fd))
		return -EBADF;
	if (n < 0 || n > IOV_MAX)
		return -EINVAL;
	if (!user_ok(iov, n * sizeof *iov))
		return -EFAULT;
	for (long i = 0; i < n; i++)
		if (iov[i].len && !user_ok(iov[i].base, iov[i].len))
			return -EFAULT;
	if (writing)
		return console_writev(fd, iov, n);
	for (long i = 0; i < n; i++) /* a short read is fine: fill the first buffer */
		if (iov[i].len)
			return console_read(fd, (void *)iov[i].base, iov[i].len);
	return 0;
}

static long sys_ioctl(long fd, unsigned long req, uint16_t *ws)
{
	if (!std_fd(fd))
		return -EBADF;
	if (req != TIOCGWINSZ || !boot.tty[fd])
		return -ENOTTY;
	if (!user_ok(ws, 8))
		return -EFAULT;
	ws[0] = boot.rows, ws[1] = boot.cols, ws[2] = ws[3] = 0;
	return 0;
}

static long sys_fcntl(long fd, long cmd, long arg)
{
	if (!std_fd(fd))
		return -EBADF;
	switch (cmd) {
	case F_GETFD: return fd_flags[fd];
	case F_SETFD: fd_flags[fd] = arg & 1; return 0;
	case F_GETFL: return fd == 0 ? 0 : 1; /* O_RDONLY, O_WRONLY */
	case F_SETFL: return 0;
	}
	return -EINVAL;
}

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

long syscall_dispatch(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	(void)a5, (void)a6;
	if (nr >= 0 && nr < HUSK_NSYSCALLS)
		REPORT->calls[nr]++;
	switch (nr) {
	case SYS_read: return sys_rw(a1, (void *)a2, a3, 0);
	case SYS_write: return sys_rw(a1, (void *)a2, a3, 1);
	case SYS_readv: return sys_rwv(a1, (const struct kiovec *)a2, a3, 0);
	case SYS_writev: return sys_rwv(a1, (const struct kiovec *)a2, a3, 1);
	case SYS_close:
		if (!std_fd(a1))
			return -EBADF;
		fd_open[a1] = 0;
		return 0;
	case SYS_ioctl: return sys_ioctl(a1, a2, (uint16_t *)a3);
	case SYS_fcntl: return sys_fcntl(a1, a2, a3);
	case SYS_mmap:
		if (!(a4 & 0x20) && !std_fd(a5))
			return -EBADF;
		return mem_mmap(a1, a2, a3, a4);
	case SYS_munmap: return mem_munmap(a1, a2);
	case SYS_mprotect: return mem_mprotect(a1, a2);
	case SYS_brk: return mem_brk(a1);
	case SYS_madvise: return 0;
	case SYS_arch_prctl: return sys_arch_prctl(a1, a2);
	case SYS_set_tid_address: return 1;
	case SYS_getpid: case SYS_gettid: return 1;
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
	case SYS_exit: case SYS_exit_group: halt_exit(a1 & 0xff);
	}
	if (nr >= 0 && nr < HUSK_NSYSCALLS)
		REPORT->enosys[nr]++;
	return -ENOSYS;
}
