/* SPDX-License-Identifier: GPL-2.0-only */
/* Processes (process.h): fork and vfork, their end, wait, process groups
 * and sessions.  fork shares the parent's memory copy-on-write (mm_fork);
 * vfork lends the parent's address space to the child until it execs or
 * ends, the parent blocked meanwhile.  Numbers:
 * docs/kvm-pvm-process-model.md. */
#include <errno.h>
#include <string.h>
#include "fs/file.h"
#include "fs/lock.h"
#include "fs/vfs.h"
#include "kernel.h"
#include "linux_abi.h"
#include "mm/mm.h"
#include "proc/itimer.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"
#include "proc/thread.h"
#include "sys/sys_info.h"

#define WNOHANG    1
#define WUNTRACED  2
#define WEXITED    4
#define WCONTINUED 8
#define WNOWAIT    0x01000000
#define WALL_FLAGS 0x60000000 /* __WALL, __WCLONE: one kind of child here */
#define P_ALL  0
#define P_PID  1
#define P_PGID 2
#define CLD_EXITED 1
#define CLD_KILLED 2

struct process *processes;

void process_init(struct mm *mm)
{
	struct process *p = kalloc(sizeof *p);
	fd_limit_init(boot.open_files);
	if (!p || !(p->cwd = kalloc(PATH_MAX)) || !(p->files = fd_table_new()))
		panic("no memory for the first process");
	p->pid = p->pgid = p->sid = 1;
	p->umask = 022;
	p->nproc_limit[0] = p->nproc_limit[1] = (uint64_t)boot.max_tasks;
	p->core_limit[0] = 0, p->core_limit[1] = RLIM_INFINITY;
	p->mm = mm;
	memcpy(p->cwd, "/workdir", sizeof "/workdir");
	process_set_comm(p, boot.argc ? boot.argv : "");
	processes = p;
	sched_init(p);
}

struct process *process_by_pid(int pid)
{
	for (struct process *p = processes; p; p = p->next)
		if (p->pid == pid)
			return p;
	return 0;
}

const char *process_cwd(void)
{
	return current->proc->cwd;
}

void process_set_comm(struct process *p, const char *path)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	size_t n = strnlen(name, sizeof p->comm - 1);
	memcpy(p->comm, name, n);
	p->comm[n] = 0;
}

void process_single_thread(void)
{
	struct process *p = current->proc;
	if (p->threads > 1) {
		p->execing = current;
		struct task *t = current;
		do {
			if (t->proc == p && t != current && t->state != TASK_DEAD) {
				t->killed = 1;
				sched_wake(t, -EINTR); /* it ends on its way out */
			}
			t = t->next;
		} while (t != current);
		while (p->threads > 1)
			sched_block(0, 0);
		p->execing = 0;
	}
	if (current->tid != p->pid) {
		struct task *lead = task_by_tid(p->pid);
		if (lead)
			lead->tid = 0; /* the ended leader's tid is the caller's now */
		current->tid = p->pid;
	}
}

static struct process *process_new(void)
{
	struct process *parent = current->proc, *c = kalloc(sizeof *c);
	if (!c)
		return 0;
	if (!(c->cwd = kalloc(PATH_MAX)) || !(c->files = fd_table_copy(parent->files))) {
		kfree(c->cwd, PATH_MAX);
		kfree(c, sizeof *c);
		return 0;
	}
	memcpy(c->cwd, parent->cwd, PATH_MAX);
	c->pgid = parent->pgid, c->sid = parent->sid;
	c->start_ns = clock_since_boot_ns();
	memcpy(c->comm, parent->comm, sizeof c->comm);
	c->umask = parent->umask;
	c->nice = parent->nice;
	c->creds = parent->creds;
	memcpy(c->nproc_limit, parent->nproc_limit, sizeof c->nproc_limit);
	memcpy(c->core_limit, parent->core_limit, sizeof c->core_limit);
	c->parent = parent;
	signal_fork(c);
	return c;
}

/* A process spawn could not start (not on the list yet): what it was given. */
static void process_discard(struct process *c)
{
	mm_put(c->mm);
	fd_table_free(c->files);
	kfree(c->cwd, PATH_MAX);
	kfree(c, sizeof *c);
}

static void process_free(struct process *c)
{
	struct process **pp = &processes;
	while (*pp != c)
		pp = &(*pp)->next;
	*pp = c->next;
	kfree(c->cwd, PATH_MAX);
	kfree(c, sizeof *c);
}

/* A new process that starts where the caller's system call returns, rax 0
 * (on stack, if given): a copy of the caller's memory, or (vfork) the same,
 * the caller blocked until the child execs or ends. */
static long spawn(int vfork, uint64_t stack, uint32_t *ptid, uint32_t *ctid, unsigned long flags)
{
	struct process *parent = current->proc, *c;
	if (!creds_may_fork(&parent->creds, parent->nproc_limit[0]))
		return -EAGAIN;
	if (!(c = process_new()))
		return -ENOMEM;
	c->mm = vfork ? parent->mm : mm_fork(parent->mm, caller_regs().rsp, current->fs_base);
	if (!c->mm) {
		process_discard(c);
		return -ENOMEM;
	}
	if (vfork)
		c->mm->refs++;
	struct user_regs r = caller_regs();
	r.rax = 0;
	if (stack)
		r.rsp = stack;
	struct task *t = task_create(&r, fs_base_read(), c);
	if (!t) {
		process_discard(c);
		return -EAGAIN;
	}
	t->sig.mask = current->sig.mask;
	t->sig.alt = current->sig.alt;
	t->robust_list = 0;
	c->pid = t->tid;
	if (flags & CLONE_PARENT_SETTID)
		*ptid = (uint32_t)c->pid;
	if (flags & CLONE_CHILD_SETTID) { /* in the child's memory */
		uint32_t *at = mm_page_for_write(c->mm, (uintptr_t)ctid);
		if (at)
			*(uint32_t *)((char *)at + ((uintptr_t)ctid & (PAGE_SIZE - 1))) = (uint32_t)c->pid;
	}
	if (flags & CLONE_CHILD_CLEARTID)
		t->clear_tid = ctid;
	struct process **pp = &processes; /* last: pid order */
	while (*pp)
		pp = &(*pp)->next;
	*pp = c;
	if (vfork) {
		c->vfork_parent = current;
		while (c->vfork_parent)
			sched_block(0, 0);
	}
	return c->pid;
}

long sys_fork(void)
{
	return spawn(0, 0, 0, 0, 0);
}

long sys_vfork(void)
{
	return spawn(1, 0, 0, 0, 0);
}

long process_clone(unsigned long flags, uint64_t stack, uint32_t *ptid, uint32_t *ctid)
{
	if (((flags & CLONE_PARENT_SETTID) && !user_ok(ptid, 4)) ||
	    ((flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) && !user_ok(ctid, 4)))
		return -EFAULT;
	return spawn((flags & CLONE_VFORK) != 0, stack, ptid, ctid, flags);
}

static void wake_waiters(struct process *p)
{
	struct task *t = current;
	do {
		if (t->proc == p && t->in_wait)
			sched_wake(t, 0);
		t = t->next;
	} while (t != current);
}

static void vfork_release(struct process *p)
{
	if (p->vfork_parent) {
		sched_wake(p->vfork_parent, 0);
		p->vfork_parent = 0;
	}
}

void process_exec_done(struct mm *old)
{
	struct process *p = current->proc;
	p->mm = mm_current;
	mm_put(old);
	vfork_release(p);
}

/* pid 1 ends: the run, after the file systems' last writes. */
static _Noreturn void run_end(int status)
{
	if (status & 0x7f)
		signal_die(status & 0x7f);
	for (struct process *p = processes; p; p = p->next)
		if (p->files) {
			fd_table_free(p->files);
			p->files = 0;
		}
	vfs_finish();
	halt_exit(status >> 8 & 0xff);
}

void process_end(struct process *p, int code)
{
	if (!p->exiting)
		p->status = (code & 0xff) << 8;
	p->exiting = 1;
	if (p->pid == 1)
		run_end(p->status);
	fd_table_free(p->files);
	p->files = 0;
	lock_process_ended(p->pid);
	vfork_release(p);
	mm_put(p->mm); /* off its page tables first, if they go */
	p->mm = 0;
	signal_process_gone(p);
	itimer_process_gone(p);
	int orphaned_zombie = 0;
	for (struct process *c = processes; c; c = c->next)
		if (c->parent == p) { /* orphans: to pid 1 */
			c->parent = processes;
			orphaned_zombie |= c->zombie;
		}
	if (orphaned_zombie)
		wake_waiters(processes); /* pid 1 may reap what it inherited */
	struct process *parent = p->parent;
	p->zombie = 1;
	int killed = (p->status & 0x7f) != 0;
	struct sigaction_k *a = &parent->sig.actions[SIGCHLD];
	if (a->handler == (uintptr_t)SIG_IGN || (a->flags & SA_NOCLDWAIT)) {
		p->parent = 0; /* nobody will wait: freed when its last thread is off the CPU */
	} else {
		signal_send_process(parent, SIGCHLD, killed ? CLD_KILLED : CLD_EXITED, p->pid,
				    killed ? p->status & 0x7f : p->status >> 8);
	}
	wake_waiters(parent);
}

void process_release(struct process *p)
{
	if (p->zombie && !p->parent)
		process_free(p);
}

_Noreturn void process_exit(int status)
{
	struct process *p = current->proc;
	if (!p->exiting) {
		p->exiting = 1;
		p->status = status;
	}
	if (p->pid == 1)
		run_end(p->status);
	process_kill(p, 0);
	task_exit(0);
}

void process_kill(struct process *p, int sig)
{
	if (sig && !p->exiting) {
		p->exiting = 1;
		p->status = sig;
	}
	if (sig && p->pid == 1)
		signal_die(sig);
	struct task *t = current;
	do {
		if (t->proc == p && t != current)
			sched_wake(t, -EINTR); /* it ends on its way out */
		t = t->next;
	} while (t != current);
}

/* ---- wait ------------------------------------------------------------------ */

static int matches(const struct process *c, long idtype, long id)
{
	return idtype == P_ALL || (idtype == P_PID && c->pid == id) || (idtype == P_PGID && c->pgid == id);
}

/* A zombie child that matches (reaped unless WNOWAIT): its pid, 0 when
 * there are matching children but none ended, -ECHILD when none. */
static long reap(long idtype, long id, long options, int *status, int *pid_out, uint64_t *cpu_out)
{
	struct process *me = current->proc;
	int any = 0;
	for (struct process *c = processes; c; c = c->next) {
		if (c->parent != me || !matches(c, idtype, id))
			continue;
		any = 1;
		if (!c->zombie)
			continue;
		*status = c->status;
		*pid_out = c->pid;
		*cpu_out = c->cpu_ns + c->children_cpu_ns;
		if (!(options & WNOWAIT)) {
			me->children_cpu_ns += c->cpu_ns + c->children_cpu_ns;
			process_free(c);
		}
		return 1;
	}
	return any ? 0 : -ECHILD;
}

static long wait_for(long idtype, long id, long options, int *status, int *pid, uint64_t *cpu)
{
	for (;;) {
		long r = reap(idtype, id, options, status, pid, cpu);
		if (r || (options & WNOHANG))
			return r;
		current->in_wait = 1;
		int w = sched_block(0, 1);
		current->in_wait = 0;
		if (w == -EINTR)
			return -ERESTARTSYS;
	}
}

long sys_wait4(long pid, int *ustatus, long options, void *rusage)
{
	if (options & ~(WNOHANG | WUNTRACED | WCONTINUED | WALL_FLAGS))
		return -EINVAL;
	if ((ustatus && !user_ok(ustatus, 4)) || (rusage && !user_ok(rusage, 144)))
		return -EFAULT;
	long idtype = pid == -1 ? P_ALL : pid > 0 ? P_PID : P_PGID;
	long id = pid == 0 ? current->proc->pgid : pid < -1 ? -pid : pid;
	int status = 0, got = 0;
	uint64_t cpu = 0;
	long r = wait_for(idtype, id, options | WEXITED, &status, &got, &cpu);
	if (r <= 0)
		return r;
	if (ustatus)
		*ustatus = status;
	if (rusage)
		rusage_fill(rusage, cpu);
	return got;
}

long sys_waitid(long idtype, long id, void *uinfo, long options, void *rusage)
{
	if (idtype != P_ALL && idtype != P_PID && idtype != P_PGID)
		return -EINVAL;
	if (!(options & (WEXITED | WUNTRACED | WCONTINUED)) ||
	    (options & ~(WNOHANG | WUNTRACED | WEXITED | WCONTINUED | WNOWAIT | WALL_FLAGS)))
		return -EINVAL;
	if ((uinfo && !user_ok(uinfo, 128)) || (rusage && !user_ok(rusage, 144)))
		return -EFAULT;
	if (idtype == P_PGID && id == 0)
		id = current->proc->pgid;
	int status = 0, got = 0;
	uint64_t cpu = 0;
	long r = (options & WEXITED) ? wait_for(idtype, id, options, &status, &got, &cpu) : (options & WNOHANG) ? 0 : -ECHILD;
	if (r < 0)
		return r;
	if (uinfo) {
		int32_t *si = uinfo;
		memset(uinfo, 0, 128);
		if (r) {
			int killed = (status & 0x7f) != 0;
			si[0] = SIGCHLD;
			si[2] = killed ? CLD_KILLED : CLD_EXITED;
			si[4] = got;
			si[6] = killed ? status & 0x7f : status >> 8 & 0xff;
		}
	}
	if (rusage)
		rusage_fill(rusage, cpu);
	return 0;
}

/* ---- ids ------------------------------------------------------------------- */

long sys_getppid(void)
{
	struct process *p = current->proc->parent;
	return p ? p->pid : 0;
}

static struct process *self_or(long pid)
{
	return pid == 0 ? current->proc : process_by_pid((int)pid);
}

long sys_getpgid(long pid)
{
	struct process *p = self_or(pid);
	return p ? p->pgid : -ESRCH;
}

long sys_getsid(long pid)
{
	struct process *p = self_or(pid);
	return p ? p->sid : -ESRCH;
}

long sys_setpgid(long pid, long pgid)
{
	if (pgid < 0)
		return -EINVAL;
	struct process *p = self_or(pid);
	if (!p || (p != current->proc && p->parent != current->proc))
		return -ESRCH;
	if (p->sid != current->proc->sid || p->pid == p->sid)
		return -EPERM; /* another session, or a session leader */
	if (pgid == 0)
		pgid = p->pid;
	if (pgid != p->pid) { /* joining a group: it must exist in the session */
		int found = 0;
		for (struct process *q = processes; q; q = q->next)
			found |= q->pgid == pgid && q->sid == p->sid && !q->zombie;
		if (!found)
			return -EPERM;
	}
	p->pgid = (int)pgid;
	return 0;
}

long sys_setsid(void)
{
	struct process *p = current->proc;
	for (struct process *q = processes; q; q = q->next)
		if (q->pgid == p->pid)
			return -EPERM; /* already a group leader */
	p->pgid = p->sid = p->pid;
	return p->pid;
}
