/* SPDX-License-Identifier: GPL-2.0-only */
/* The Linux x86-64 constants a program passes to or gets from the guest
 * kernel, other than errno (errno.h), limits (limits.h) and system call
 * numbers (linux_syscall.h).  Grouped by the header a Linux program finds
 * them in, spelled as Linux and musl spell them, and defined nowhere else
 * in guest/: tests/unit/test_guest_abi.c checks every name defined here
 * against the host's headers.  Only what the guest uses is listed. */
#ifndef GUEST_LINUX_ABI_H
#define GUEST_LINUX_ABI_H

/* <fcntl.h>: open flags (octal, as in asm-generic/fcntl.h) */
#define O_ACCMODE   03
#define O_RDONLY    00
#define O_WRONLY    01
#define O_RDWR      02
#define O_CREAT     0100
#define O_EXCL      0200
#define O_TRUNC     01000
#define O_APPEND    02000
#define O_NONBLOCK  04000
#define O_DIRECTORY 0200000
#define O_NOFOLLOW  0400000
#define O_CLOEXEC   02000000
#define O_PATH      010000000
#define O_TMPFILE   020200000 /* includes O_DIRECTORY, as in musl */

/* <fcntl.h>: the *at calls */
#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR        0x200
#define AT_SYMLINK_FOLLOW   0x400
#define AT_EMPTY_PATH       0x1000

/* <fcntl.h>: fcntl commands */
#define F_DUPFD         0
#define F_GETFD         1
#define F_SETFD         2
#define F_GETFL         3
#define F_SETFL         4
#define F_GETLK         5
#define F_SETLK         6
#define F_SETLKW        7
#define F_DUPFD_CLOEXEC 1030
#define F_SETPIPE_SZ    1031
#define F_GETPIPE_SZ    1032
#define MFD_CLOEXEC     1
#define SPLICE_F_NONBLOCK 2
#define MEMFD_NAME_MAX  249 /* Linux's: 255 less "memfd:" */
#define FD_CLOEXEC      1
#define F_RDLCK         0
#define F_WRLCK         1
#define F_UNLCK         2
#define LOCK_SH         1 /* flock */
#define LOCK_EX         2
#define LOCK_NB         4
#define LOCK_UN         8

/* <stdio.h>: renameat2 */
#define RENAME_NOREPLACE 1

/* <unistd.h> */
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
#define X_OK 1
#define W_OK 2

/* <sys/stat.h>: file types in st_mode, and utimensat's special times */
#define S_IFMT   0170000
#define S_IFSOCK 0140000
#define S_IFLNK  0120000
#define S_IFREG  0100000
#define S_IFBLK  0060000
#define S_IFDIR  0040000
#define S_IFCHR  0020000
#define S_IFIFO  0010000
#define UTIME_NOW  0x3fffffff
#define UTIME_OMIT 0x3ffffffe

/* <dirent.h>: d_type */
#define DT_UNKNOWN 0
#define DT_FIFO    1
#define DT_CHR     2
#define DT_DIR     4
#define DT_BLK     6
#define DT_REG     8
#define DT_LNK     10
#define DT_SOCK    12

/* <sys/mman.h> */
#define PROT_NONE           0
#define PROT_READ           1
#define PROT_WRITE          2
#define PROT_EXEC           4
#define MS_ASYNC            1
#define MS_INVALIDATE       2
#define MS_SYNC             4
#define MAP_SHARED          0x01
#define MAP_PRIVATE         0x02
#define MAP_FIXED           0x10
#define MAP_ANONYMOUS       0x20
#define MAP_FIXED_NOREPLACE 0x100000

/* <signal.h> */
#define SIGHUP   1
#define SIGINT   2
#define SIGQUIT  3
#define SIGILL   4
#define SIGTRAP  5
#define SIGABRT  6
#define SIGBUS   7
#define SIGFPE   8
#define SIGKILL  9
#define SIGUSR1  10
#define SIGSEGV  11
#define SIGUSR2  12
#define SIGPIPE  13
#define SIGALRM  14
#define SIGTERM  15
#define SIGSTKFLT 16
#define SIGCHLD  17
#define SIGCONT  18
#define SIGSTOP  19
#define SIGTSTP  20
#define SIGTTIN  21
#define SIGTTOU  22
#define SIGURG   23
#define SIGXCPU  24
#define SIGXFSZ  25
#define SIGVTALRM 26
#define SIGPROF  27
#define SIGWINCH 28
#define SIGIO    29
#define SIGPWR   30
#define SIGSYS   31
#define SA_NOCLDWAIT 2
#define SA_SIGINFO   4
#define SA_ONSTACK   0x08000000
#define SA_RESTART   0x10000000
#define SA_NODEFER   0x40000000
#define SA_RESETHAND 0x80000000
#define SS_ONSTACK   1
#define SS_DISABLE   2
#define SI_USER      0
#define SI_KERNEL    0x80
#define SI_TKILL     (-6)
#define SI_TIMER     (-2)
#define SI_QUEUE     (-1)
#define ILL_ILLOPN   2
#define FPE_INTDIV   1
#define SEGV_MAPERR  1
#define BUS_ADRERR   2
#define TRAP_BRKPT   1
/* clone's flags */
#define CLONE_VM             0x00000100ul
#define CLONE_FS             0x00000200ul
#define CLONE_FILES          0x00000400ul
#define CLONE_SIGHAND        0x00000800ul
#define CLONE_THREAD         0x00010000ul
#define CLONE_SYSVSEM        0x00040000ul
#define CLONE_SETTLS         0x00080000ul
#define CLONE_PARENT_SETTID  0x00100000ul
#define CLONE_CHILD_CLEARTID 0x00200000ul
#define CLONE_DETACHED       0x00400000ul
#define CLONE_VFORK          0x00004000ul
#define CLONE_CHILD_SETTID   0x01000000ul
#define _NSIG    65 /* signals are 1 .. _NSIG - 1 */
#define SIG_DFL  ((void (*)(int))0)
#define SIG_IGN  ((void (*)(int))1)
#define SIG_BLOCK   0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2

/* <time.h> */
#define CLOCK_REALTIME           0
#define CLOCK_MONOTONIC          1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID  3
#define CLOCK_MONOTONIC_RAW      4
#define CLOCK_REALTIME_COARSE    5
#define CLOCK_MONOTONIC_COARSE   6
#define CLOCK_BOOTTIME           7
#define CLOCK_REALTIME_ALARM     8
#define CLOCK_BOOTTIME_ALARM     9
#define TIMER_ABSTIME 1

/* <sys/resource.h> */
#define RLIMIT_STACK  3
#define RLIMIT_CORE   4
#define RLIMIT_NPROC  6
#define RLIMIT_NOFILE 7
#define RLIM_NLIMITS  16
#define RUSAGE_SELF     0
#define RUSAGE_CHILDREN (-1)
#define RUSAGE_THREAD   1
#define PRIO_PROCESS    0
#define PRIO_PGRP       1
#define PRIO_USER       2
#define RLIM_INFINITY (~0ULL)

/* <sys/ioctl.h> */
#define TIOCGWINSZ 0x5413
#define FIONCLEX   0x5450
#define FIONBIO     0x5421
#define FIOCLEX    0x5451

/* <asm/prctl.h>: arch_prctl codes */
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

/* <linux/magic.h>: statfs f_type, and <sys/statvfs.h>: f_flags */
#define EXT2_SUPER_MAGIC 0xEF53
#define TMPFS_MAGIC      0x01021994
#define PROC_SUPER_MAGIC 0x9fa0
#define ST_RDONLY        1

/* <elf.h>: auxiliary vector types */
#define AT_NULL     0
#define AT_PHDR     3
#define AT_PHENT    4
#define AT_PHNUM    5
#define AT_PAGESZ   6
#define AT_BASE     7
#define AT_FLAGS    8
#define AT_ENTRY    9
#define AT_UID      11
#define AT_EUID     12
#define AT_GID      13
#define AT_EGID     14
#define AT_PLATFORM 15
#define AT_HWCAP    16
#define AT_CLKTCK   17
#define AT_SECURE   23
#define AT_HWCAP2   26
#define AT_RANDOM   25
#define AT_EXECFN   31
#define AT_SYSINFO  32
#define AT_MINSIGSTKSZ 51
#define MINSIGSTKSZ 2048 /* sigaltstack's least, as Linux; a frame may take more (AT_MINSIGSTKSZ: signal_frame_size) */
#define HWCAP2_FSGSBASE 2 /* wrfsbase and friends may be used */
#endif
