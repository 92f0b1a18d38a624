/* SPDX-License-Identifier: GPL-2.0-only */
/* Signals as Linux delivers them: actions per process, a mask, a pending
 * set and an alternate stack per thread, handlers entered through a
 * struct rt_sigframe on the program's stack and left by rt_sigreturn.
 * Delivery happens on the way back to the program: after a system call
 * (either door) and at a fault. */
#ifndef GUEST_SIGNAL_H
#define GUEST_SIGNAL_H
#include <stdint.h>
#include "arch/regs.h"

#include "proc/sched.h"

struct task;
struct process;

/* A process's part: the actions, and what was sent to it as a whole. */
struct sigaction_k { uint64_t handler, flags, restorer, mask; };
struct process_signals {
	struct sigaction_k actions[_NSIG];
	uint64_t pending;
	struct siginfo_k info[SIGRT_FIRST];
	uint8_t info_timer[SIGRT_FIRST];
	struct sigqueued *queue;
};

/* Nonzero while a pending signal is not blocked, or the scheduler wants the
 * slow way out: fast_entry's one test. */
extern volatile uint8_t signal_waiting;

/* From entry.S: the `syscall` instruction's frame, and the fast entry's
 * when signal_waiting.  Gives up the CPU if another task should run
 * (sched_exit_work), delivers what is due into r, then stages r's return
 * (return_prepare). */
void syscall_by_instruction(struct user_regs *r);
void signal_deliver(struct user_regs *r);

/* A fault in the program (trap.c): does sig have a handler that is not
 * blocked?  Then signal_fault makes r the handler's entry (or ends the run
 * with SIGSEGV when its frame does not fit); else the fault is fatal. */
int signal_catches(int sig);
void signal_fault(struct user_regs *r, int sig, int code, uint64_t addr, uint64_t vector, uint64_t error);
/* A signal the kernel raises for the current thread (SIGPIPE). */
void signal_raise_thread(int sig);
/* POSIX timer id's signal, to thread t or (NULL) process p: 0 pending,
 * SIGNAL_IGNORED, SIGNAL_MERGED (a standard signal already pending), or
 * -EAGAIN (no memory).  Whether one of its signals is still pending; a
 * deleted timer's pending signals go. */
#define SIGNAL_IGNORED 1
#define SIGNAL_MERGED  2
long signal_send_timer(struct process *p, struct task *t, const struct siginfo_k *info, int id);
int signal_timer_pending(struct process *p, int id);
void signal_timer_forget(int id);
/* A thread ended: its queued real-time signals go. */
void signal_task_gone(struct task *t);
/* fork: the child's copy of the actions; execve: handlers back to SIG_DFL
 * (ignored stays ignored), the alternate stack off; a process's end: what
 * was pending on it goes. */
void signal_fork(struct process *child);
void signal_exec_reset(void);
void signal_process_gone(struct process *p);
/* sig (with info) sent to process p as a whole: 0, or -EAGAIN. */
long signal_send_process(struct process *p, int sig, int code, int from_pid, int status);
/* Takes the stop signals husk received (REPORT->host_signals). */
void signal_poll_host(void);
/* Is a signal due for the current thread (pending and not blocked)? */
int signal_due(void);
/* signal_waiting again, for the current thread. */
void signal_recompute(void);
/* Sleeps ns, or until a signal is due: 0, or -EINTR. */
int signal_sleep(uint64_t ns);
/* The run ends as if killed by sig (the status Linux gives). */
_Noreturn void signal_die(int sig);
/* The current process dies of SIGKILL: memory ran out for a page it wrote. */
_Noreturn void signal_out_of_memory(void);
/* The way back to a program stages rflags and rip just below the red zone
 * of the stack it returns to, and resume_staged pushes two registers below
 * them (entry.S): that room, from rsp - RETURN_ROOM up, backed and made the
 * process's own (no fault may come there).  0: none. */
#define RED_ZONE 128 /* the SysV ABI's, below a program's stack pointer */
#define RETURN_ROOM (RED_ZONE + 32)
int signal_return_room(uint64_t rsp);

/* ppoll, pselect6, epoll_pwait: mask while waiting, then the old one back,
 * after the handler of the signal that ended the wait (result -EINTR). */
/* The most a handler's frame takes of its stack (AT_MINSIGSTKSZ): the
 * registers, siginfo and the FPU state, aligned; MINSIGSTKSZ at least. */
size_t signal_frame_size(void);
uint64_t signal_mask_swap(uint64_t mask);
void signal_mask_restore(uint64_t old, long result);

long sys_rt_sigaction(long sig, const void *act, void *old, unsigned long size);
long sys_rt_sigprocmask(long how, const uint64_t *set, uint64_t *old, unsigned long size);
long sys_sigaltstack(const void *ss, void *old);
long sys_rt_sigpending(uint64_t *set, unsigned long size);
long sys_rt_sigsuspend(const uint64_t *mask, unsigned long size);
long sys_rt_sigtimedwait(const uint64_t *set, void *info, const void *timeout, unsigned long size);
long sys_rt_sigqueueinfo(long pid, long sig, const void *info);
long sys_kill(long pid, long sig);
long sys_tgkill(long tgid, long tid, long sig);
long sys_tkill(long tid, long sig);
long sys_pause(void);
#endif
