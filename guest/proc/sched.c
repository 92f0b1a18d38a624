/* SPDX-License-Identifier: GPL-2.0-only */
/* Tasks and the run queue (sched.h).  Round robin over every task in
 * creation order, 10 ms slices.  One one-shot local APIC timer serves every
 * deadline (interval timers, sleepers, the slice end while another task
 * waits to run); each (re)arm is an MSR write that traps (~3.5 us on
 * kvm_pvm), so it is reprogrammed only when the earliest deadline changes.
 * Numbers behind the choices: docs/kvm-pvm-process-model.md. */
#include <errno.h>
#include <string.h>
#include "arch/cpu.h"
#include "kernel.h"
#include "mm/mm.h"
#include "proc/itimer.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"

/* A path lookup takes ~30 KiB (vfs.c), execve's on top of it more: a
 * deeper one ran over 32 KiB into the page below (a page table, seen as
 * "freeing page ... which is not in use").  The lowest word holds a canary,
 * checked at every switch. */
#define KSTACK_SIZE   (64u << 10)
#define KSTACK_CANARY 0x6b737461636b2121ull
#define SLICE_NS      10000000ull /* ~0.5 % of the CPU to ticks at 40-60 us each */
#define NOTE_RETRY_NS 1000000ull  /* the tick came in the kernel: look again in 1 ms */

static struct task boot_task;
struct task *current = &boot_task;
static int live = 1, next_tid = 2;
static int need_resched;
static volatile uint8_t timer_noted; /* the APIC timer fired since the last poll */
static uint64_t slice_end;
static uint64_t armed_for; /* the deadline the APIC counts to; 0: none known */
static uint64_t ran_since; /* clock_since_boot_ns() when the current task got the CPU */

static uint64_t task_top(const struct task *t)
{
	extern char syscall_stack_top[];
	return t->kstack ? (uintptr_t)t->kstack + KSTACK_SIZE : (uintptr_t)syscall_stack_top;
}

static void signals_init(struct task *t, uint64_t mask)
{
	t->sig.mask = mask;
	t->sig.alt = (struct stack_k){ 0, SS_DISABLE, 0, 0 };
}

void sched_init(struct process *pid1)
{
	boot_task.tid = 1;
	boot_task.proc = pid1;
	pid1->threads = 1;
	boot_task.next = boot_task.prev = &boot_task;
	signals_init(&boot_task, 0);
	REPORT->tasks_created = REPORT->tasks_peak = 1;
}

struct task *task_by_tid(int tid)
{
	struct task *t = &boot_task;
	do {
		if (t->tid == tid && (t->state != TASK_DEAD || t == &boot_task)) /* a dead leader stays, as a zombie */
			return t;
		t = t->next;
	} while (t != &boot_task);
	return 0;
}

struct task *task_create(const struct user_regs *regs, uint64_t fs_base, struct process *proc)
{
	if (live >= boot.max_tasks)
		return 0;
	struct task *t = kalloc(sizeof *t);
	void *stack = t ? kalloc(KSTACK_SIZE) : 0;
	if (!stack) {
		kfree(t, sizeof *t);
		REPORT->denied_enomem++;
		return 0;
	}
	*(uint64_t *)stack = KSTACK_CANARY;
	t->tid = next_tid++;
	t->proc = proc;
	proc->threads++;
	t->kstack = stack;
	t->regs = *regs;
	t->fs_base = fs_base;
	fpu_save(t->fpu); /* the creator's, as a copy */
	signals_init(t, current->sig.mask);
	/* switch_to's frame: six callee-saved registers, then its return */
	uint64_t *sp = (uint64_t *)task_top(t);
	*--sp = (uintptr_t)task_first_entry;
	sp -= 6;
	memset(sp, 0, 48);
	t->ksp = (uintptr_t)sp;
	t->next = &boot_task, t->prev = boot_task.prev; /* last in the ring */
	boot_task.prev->next = t, boot_task.prev = t;
	t->state = TASK_RUNNABLE;
	live++;
	REPORT->tasks_created++;
	if ((unsigned)live > REPORT->tasks_peak)
		REPORT->tasks_peak = live;
	return t;
}

/* The next runnable task after current, current itself last. */
static struct task *pick(void)
{
	struct task *t = current;
	do {
		t = t->next;
		if (t->state == TASK_RUNNABLE)
			return t;
	} while (t != current);
	return 0;
}

static int others_runnable(void)
{
	for (struct task *t = current->next; t != current; t = t->next)
		if (t->state == TASK_RUNNABLE)
			return 1;
	return 0;
}

void sched_wake(struct task *t, int result)
{
	if (t->state != TASK_BLOCKED)
		return;
	t->state = TASK_RUNNABLE;
	t->wake_result = result;
	t->futex = 0;
	t->wake_at = 0;
	sched_timer_update(); /* the current task's slice has an end now */
}

void sched_signal_wake(struct task *t, uint64_t sigbit)
{
	if (t->state == TASK_BLOCKED && t->interruptible && (sigbit & (~t->sig.mask | t->sig.waiting_for)))
		sched_wake(t, -EINTR);
}

/* The earliest of the interval timers', the sleepers' and (input: while
 * the VM is busy; a sleeping one's host thread watches stdin) the console's
 * deadlines, or 0. */
static uint64_t next_wakeup(int input_too)
{
	uint64_t next = itimer_next_deadline(), input = input_too ? console_poll_deadline() : 0;
	if (input && (!next || input < next))
		next = input;
	struct task *t = current;
	do {
		if (t->state == TASK_BLOCKED && t->wake_at && (!next || t->wake_at < next))
			next = t->wake_at;
		t = t->next;
	} while (t != current);
	return next;
}

void sched_timer_update(void)
{
	uint64_t next = next_wakeup(1);
	if (others_runnable() && (!next || slice_end < next))
		next = slice_end;
	uint64_t now = clock_mono_ns();
	/* armed for no later than needed: leave it (a switch moves the slice's
	 * end every time; an MSR write traps, an early interrupt only looks) */
	if (!next || (armed_for && armed_for <= next && armed_for > now))
		return;
	armed_for = next;
	apic_timer_arm(next > now ? next - now : 0);
}

/* What came since the last look: sleepers whose time is up, the slice's
 * end, interval timers, the host's signals.  A sleeper that wakes runs at
 * once (a thread that prints every 10 ms must not wait for a slice). */
static void poll_events(void)
{
	timer_noted = 0;
	uint64_t now = clock_mono_ns();
	struct task *t = current;
	do {
		if (t->state == TASK_BLOCKED && t->wake_at && t->wake_at <= now) {
			sched_wake(t, -ETIMEDOUT);
			need_resched = 1;
		}
		t = t->next;
	} while (t != current);
	if (now >= slice_end && others_runnable())
		need_resched = 1;
	itimer_poll();
	signal_poll_host();
	console_poll();
	net_poll();
	sched_timer_update();
}

/* Nothing can run: the host thread sleeps until the next deadline (one
 * exit, no guest CPU spent; for ever if there is none, until the run's
 * limits end it, as a deadlocked process would hang on Linux). */
static void idle(void)
{
	uint64_t next = next_wakeup(0), now = clock_mono_ns();
	uint64_t ns = !next ? ~0ul >> 1 : next > now ? next - now : 0;
	REPORT->sleep_ns = ns > (~0ul >> 1) ? ~0ul >> 1 : ns;
	if (ns)
		outl(HUSK_PORT_SLEEP, 0);
	poll_events();
}

/* With CR4.FSGSBASE (the VMM sets it where the CPU has it) 0.03 us, else
 * an MSR write that traps (~3.9 us on kvm_pvm). */
void fs_base_write(uint64_t v)
{
	if (boot.fsgsbase)
		__asm__ volatile("wrfsbase %0" : : "r"(v) : "memory");
	else
		wrmsr(MSR_FS_BASE, v);
}

/* The program may have written it itself (wrfsbase): read it back. */
uint64_t fs_base_read(void)
{
	uint64_t v = current->fs_base;
	if (boot.fsgsbase)
		__asm__ volatile("rdfsbase %0" : "=r"(v));
	return v;
}

/* After a switch, on the new task's stack: the old one is freed if it
 * ended (its stack is no longer in use). */
static void finish_switch(struct task *prev)
{
	if (prev->state != TASK_DEAD || prev == &boot_task)
		return;
	prev->prev->next = prev->next, prev->next->prev = prev->prev;
	if (!prev->proc->threads)
		process_release(prev->proc);
	kfree(prev->kstack, KSTACK_SIZE);
	kfree(prev, sizeof *prev);
}

/* CPU time: what the current task ran since it got the CPU is its own. */
static void account(void)
{
	uint64_t now = clock_since_boot_ns();
	current->cpu_ns += now - ran_since;
	ran_since = now;
}

uint64_t task_cpu_ns(void)
{
	return current->cpu_ns + clock_since_boot_ns() - ran_since;
}

uint64_t process_cpu_ns(const struct process *p)
{
	uint64_t ns = p->cpu_ns;
	struct task *t = current;
	do {
		if (t->proc == p && t->state != TASK_DEAD)
			ns += t == current ? task_cpu_ns() : t->cpu_ns;
		t = t->next;
	} while (t != current);
	return ns;
}

/* A task has the CPU again (back from switch_to, or new): its signals, the
 * timer for the others, interrupts on. */
static void on_cpu(void)
{
	signal_recompute();
	sched_timer_update();
	interrupts_on();
}

static void schedule(void)
{
	struct task *prev = current, *next;
	need_resched = 0;
	account();
	while (!(next = pick()))
		idle();
	need_resched = 0;
	slice_end = clock_mono_ns() + SLICE_NS;
	ran_since = clock_since_boot_ns(); /* time idle is no task's */
	if (prev->kstack && *(uint64_t *)prev->kstack != KSTACK_CANARY)
		panic("the kernel stack of task %d ran over its %u KiB", prev->tid, KSTACK_SIZE >> 10);
	if (next != prev) {
		fpu_save(prev->fpu);
		prev->fs_base = fs_base_read();
		current = next;
		kstack_top = task_top(next);
		if (next->proc->mm != mm_current)
			mm_switch(next->proc->mm);
		fpu_load(next->fpu);
		if (next->fs_base != prev->fs_base || boot.fsgsbase)
			fs_base_write(next->fs_base);
		finish_switch(switch_to(prev, &prev->ksp, next->ksp));
	}
	on_cpu();
}

static _Noreturn void resume_interrupted(void)
{
	signal_deliver(&current->regs);
	return_to_program(&current->regs);
}

/* Where a new task's first switch lands (entry.S task_first_entry). */
_Noreturn void task_start(struct task *prev);
_Noreturn void task_start(struct task *prev)
{
	finish_switch(prev);
	on_cpu();
	resume_interrupted();
}

int sched_block(uint64_t deadline, int interruptible)
{
	struct task *t = current;
	if (interruptible && signal_due())
		return t->futex = 0, -EINTR;
	if (deadline && deadline <= clock_mono_ns())
		return t->futex = 0, -ETIMEDOUT;
	t->state = TASK_BLOCKED;
	t->wake_at = deadline;
	t->interruptible = interruptible;
	t->wake_result = 0;
	schedule();
	return t->wake_result;
}

void sched_yield(void)
{
	if (others_runnable())
		schedule();
}

_Noreturn void task_exit(int code)
{
	struct task *t = current;
	t->proc->cpu_ns += task_cpu_ns();
	if (t->unmap_at_exit[1])
		mem_munmap(t->unmap_at_exit[0], t->unmap_at_exit[1]);
	live--;
	signal_task_gone(t);
	if (!--t->proc->threads) /* the last thread's status is the process's (Linux's synchronize_group_exit) */
		process_end(t->proc, code);
	if (t->proc->threads == 1 && t->proc->execing)
		sched_wake(t->proc->execing, 0);
	t->state = TASK_DEAD;
	schedule();
	panic("task %d ran after its exit", t->tid);
}

int sched_exit_wanted(void)
{
	return need_resched || timer_noted;
}

void sched_exit_work(void)
{
	if (timer_noted || REPORT->host_signals)
		poll_events();
	while (need_resched)
		schedule();
}

void sched_timer_note(int in_kernel)
{
	timer_noted = 1;
	signal_waiting = 1;
	armed_for = 0;
	if (in_kernel) { /* if the kernel's way out is past its look, the retry's interrupt comes in the program */
		armed_for = clock_mono_ns() + NOTE_RETRY_NS;
		apic_timer_arm(NOTE_RETRY_NS);
	}
}

_Noreturn void sched_interrupted(const struct user_regs *r)
{
	current->regs = *r;
	run_on_stack(kstack_top, resume_interrupted);
}
