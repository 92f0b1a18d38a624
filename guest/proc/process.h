/* SPDX-License-Identifier: GPL-2.0-only */
/* Processes: a pid, an address space, an fd table, a working directory,
 * signal actions, and the threads (tasks) that share them.  The first
 * program is pid 1; when it ends, the run ends (as a PID namespace's init:
 * every other process goes with it).  A process that ends stays a zombie
 * until its parent waits for it; its children go to pid 1. */
#ifndef GUEST_PROCESS_H
#define GUEST_PROCESS_H
#include <stdint.h>
#include "proc/creds.h"
#include "proc/signal.h"

struct mm;
struct fdtable;
struct task;
struct timer;

struct process {
	int pid, pgid, sid;
	int threads;                /* its tasks that have not ended */
	int exiting;                /* exit_group or a fatal signal: its threads end */
	int zombie;                 /* ended; status is for its parent's wait */
	int status;                 /* a wait status: code << 8, or the signal */
	struct process *parent;
	struct process *next;       /* every process, pid 1 first */
	struct mm *mm;
	struct fdtable *files;
	char *cwd;                  /* PATH_MAX bytes */
	uint32_t umask;             /* inherited by fork, kept by exec */
	int nice;                   /* -20..19: kept, reported (sys_info.c) */
	int lock_wait_for;          /* the pid whose record lock it waits for (fs/lock.c), or 0 */
	struct creds creds;         /* root at boot; inherited, kept by exec */
	uint64_t nproc_limit[2];    /* RLIMIT_NPROC {soft, hard}: held against a user other than root, as Linux */
	uint64_t core_limit[2];     /* RLIMIT_CORE: kept as set (no core file is ever written) */
	struct process_signals sig;
	struct timer *timers;       /* itimer.c: made on its first timer call */
	struct task *vfork_parent;  /* blocked until this one execs or ends */
	struct task *execing;       /* its thread that execs, waiting for the others to end */
	uint64_t cpu_ns;            /* of its ended threads */
	uint64_t children_cpu_ns;   /* of its children it waited for */
	uint64_t start_ns;          /* when it was made, since boot */
	char comm[16];              /* its program's name (Linux's comm): /proc shows it */
};

/* The processes, pid 1 first. */
extern struct process *processes;

/* pid 1 at boot: its address space, fds 0-2 on the consoles, /workdir. */
void process_init(struct mm *mm);
struct process *process_by_pid(int pid);
/* The current thread's process ends (exit_group, or a fatal signal: status
 * is a wait status).  Its other threads end on their way back to the
 * program; pid 1's end is the run's. */
_Noreturn void process_exit(int status);
/* Its last thread ended (code: that thread's exit code, unless the process
 * was made to exit): the process ends (pid 1: the run).  Returns on the
 * ending thread, which then leaves the CPU for good. */
void process_end(struct process *p, int code);
/* p ends of sig (SIGKILL from another process): its threads end on their way
 * back to the program. */
void process_kill(struct process *p, int sig);
/* execve's: the new image is in (old was the process's address space). */
void process_exec_done(struct mm *old);
/* execve: the process's other threads end (Linux's de_thread) and the
 * caller takes the process's pid as its thread id. */
void process_single_thread(void);
const char *process_cwd(void);
/* comm: the last component of the path a program was started by, cut to
 * 15 bytes (as Linux's execve sets it). */
void process_set_comm(struct process *p, const char *path);

/* Its last thread is off the CPU: a zombie nobody waits for goes. */
void process_release(struct process *p);
long process_clone(unsigned long flags, uint64_t stack, uint32_t *ptid, uint32_t *ctid);
long sys_fork(void);                       /* fork, and clone without CLONE_VM */
long sys_vfork(void);                      /* vfork, clone(CLONE_VM|CLONE_VFORK) */
long sys_wait4(long pid, int *status, long options, void *rusage);
long sys_waitid(long idtype, long id, void *info, long options, void *rusage);
long sys_getppid(void);
long sys_setpgid(long pid, long pgid);
long sys_getpgid(long pid);
long sys_setsid(void);
long sys_getsid(long pid);
#endif
