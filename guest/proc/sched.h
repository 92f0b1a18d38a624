/* SPDX-License-Identifier: GPL-2.0-only */
/* Tasks (threads) and the one run queue on the one vCPU.  The kernel is not
 * preemptible: a task leaves the CPU when it blocks, yields or exits in the
 * kernel, or when the local APIC timer interrupts it in the program (its
 * slice is over, or a sleeper's time came).  With nothing to run, the host
 * thread sleeps until the next deadline. */
#ifndef GUEST_SCHED_H
#define GUEST_SCHED_H
#include <stdint.h>
#include "arch/fpu.h"
#include "arch/regs.h"
#include "linux_abi.h"

struct process;


/* A thread's signal state (signal.c): mask, pending set, alternate stack. */
struct siginfo_k {
	int32_t signo, err, code, pad;
	union {
		struct { int32_t pid; uint32_t uid; } kill; /* pid 0: from the host */
		uint64_t addr;
		uint8_t bytes[112];
	};
};
struct stack_k { uint64_t sp; int32_t flags, pad; uint64_t size; };
#define SIGRT_FIRST 32 /* real-time signals (32..64) queue; the others are pending once */
struct sigqueued {
	struct sigqueued *next;
	int timer;                /* a POSIX timer's signal: its id + 1, else 0 */
	struct siginfo_k info;
};
struct thread_signals {
	uint64_t mask, pending;
	uint64_t waiting_for;  /* rt_sigtimedwait: these wake it even while blocked */
	uint64_t suspend_mask; /* rt_sigsuspend: the mask to restore after the handler */
	int suspended;
	struct stack_k alt;
	struct siginfo_k info[SIGRT_FIRST]; /* of each pending standard signal */
	uint8_t info_timer[SIGRT_FIRST];    /* it is a POSIX timer's: its id + 1 */
	struct sigqueued *queue;            /* pending real-time signals, oldest first */
};

enum task_state { TASK_RUNNABLE, TASK_BLOCKED, TASK_DEAD };

struct task {
	uint8_t fpu[FPU_AREA_MAX] __attribute__((aligned(64))); /* while off the CPU (arch/fpu.h) */
	int tid;
	struct process *proc;         /* whose thread it is */
	int in_wait;                  /* blocked in wait4/waitid: a child's change wakes it */
	int killed;                   /* another thread of its process execs: it ends */
	enum task_state state;
	struct task *next, *prev;     /* every task, in creation order */
	uint64_t ksp;                 /* switch_to's saved stack pointer */
	void *kstack;                 /* KSTACK_SIZE bytes (0: the boot task's static one) */
	uint64_t fs_base;
	uint32_t *clear_tid;          /* CLONE_CHILD_CLEARTID / set_tid_address */
	uint64_t robust_list, robust_len;
	uint64_t unmap_at_exit[2];    /* its own stack, munmapped by itself: address, length */
	uint64_t cpu_ns;              /* CPU time, up to its last switch */
	/* while TASK_BLOCKED */
	uint64_t wake_at;             /* monotonic ns, 0: no deadline */
	const void *futex;            /* what it waits on, or 0: a futex's space (futex.c), */
	uintptr_t futex_at;           /* and its word there */
	uint32_t futex_bitset;
	int wake_result;              /* what sched_block returns: 0, -ETIMEDOUT, -EINTR */
	int interruptible;            /* a signal it does not block wakes it */
	struct user_regs regs;        /* a preempted or new task resumes from these */
	struct user_regs *frame;      /* during a `syscall`-instruction call: its registers */
	/* a call interrupted by a signal, to make again once it is handled
	 * (SA_RESTART) or when no handler runs: its number and arguments,
	 * and whether it came by the `syscall` instruction */
	struct { long nr, a[6]; int pending, by_instruction; } restart;
	struct thread_signals sig;
};

extern struct task *current;
extern uint64_t kstack_top; /* entry.S: the current task's kernel stack */

/* The boot task becomes pid 1's first thread. */
void sched_init(struct process *pid1);
/* A new thread that starts at regs (a copy of the caller's FPU state and
 * fs_base): NULL when the task limit or memory is exhausted. */
struct task *task_create(const struct user_regs *regs, uint64_t fs_base, struct process *proc);
/* Ends the current thread (code: its exit status); the last one ends the run. */
_Noreturn void task_exit(int code);
struct task *task_by_tid(int tid);
/* The current thread's CPU time (CLOCK_THREAD_CPUTIME_ID). */
uint64_t task_cpu_ns(void);
/* A process's: its ended threads' and its live ones'. */
uint64_t process_cpu_ns(const struct process *p);

/* Blocks the current task until sched_wake, the deadline (monotonic ns, 0:
 * none) or, when interruptible, a signal it does not block: 0, -ETIMEDOUT or
 * -EINTR.  The caller has set current->futex (or not) before. */
int sched_block(uint64_t deadline, int interruptible);
void sched_wake(struct task *t, int result);
void sched_yield(void);
/* A signal for t was generated: wake it if it sleeps and may take it. */
void sched_signal_wake(struct task *t, uint64_t sigbit);

/* The interrupt came while the program ran (trap.c): the current task's
 * state goes into current->regs, off the interrupt stack; it may leave the
 * CPU; what is due is delivered; it resumes. */
_Noreturn void sched_interrupted(const struct user_regs *r);
/* The timer's interrupt came (in_kernel: while the kernel ran, looked at on
 * the way out, and again in 1 ms in case the way out had looked already). */
void sched_timer_note(int in_kernel);
/* The fast entry must take its slow way out: a switch or a timer is due. */
int sched_exit_wanted(void);
/* On every slow way back to the program: take the timers' and the host's
 * events, and give up the CPU while another task should run. */
void sched_exit_work(void);
/* The deadlines changed (a timer set, a task blocked): program the APIC. */
void sched_timer_update(void);

/* The program's FS base (its thread pointer) in the CPU. */
void fs_base_write(uint64_t v);
uint64_t fs_base_read(void);

/* entry.S */
struct task *switch_to(struct task *prev, uint64_t *prev_ksp, uint64_t next_ksp);
_Noreturn void run_on_stack(uint64_t top, void (*fn)(void));
void task_first_entry(void);
#endif
