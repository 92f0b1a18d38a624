/* SPDX-License-Identifier: GPL-2.0-only */
/* Signals (signal.h).  The frame is Linux's x86-64 struct rt_sigframe, so
 * musl's sigreturn trampoline, ucontext readers and stack unwinders work;
 * the FPU state is saved with fxsave (the kernel itself never touches it:
 * -mgeneral-regs-only).  Actions are the process's; mask, pending set and
 * alternate stack are each thread's (struct thread_signals, sched.h); a
 * signal sent to the process is pending on it until a thread that does not
 * block it takes it. */
#include <errno.h>
#include <string.h>
#include "arch/cpu.h"
#include "kernel.h"
#include "linux_abi.h"
#include "linux_syscall.h"
#include "fs/vfs.h"
#include "proc/itimer.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"

#define SA_RESTORER  0x04000000 /* Linux's; libc headers do not define it */
#define EFLAGS_DF    0x400ul
#define EFLAGS_TF    0x100ul
/* What rt_sigreturn may restore of rflags: the arithmetic flags, DF and AC
 * (not TF: a trap flag would fire inside the kernel's return path). */
#define EFLAGS_USER  0x40cd5ul

struct sigcontext_k {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
};
struct ucontext_k {
	uint64_t flags, link;
	struct stack_k stack;
	struct sigcontext_k mc;
	uint64_t sigmask;
};
struct rt_sigframe {
	uint64_t pretcode; /* the handler returns to sa_restorer */
	struct ucontext_k uc;
	struct siginfo_k info;
};
_Static_assert(sizeof(struct siginfo_k) == 128, "Linux's siginfo_t");
_Static_assert(sizeof(struct sigcontext_k) == 256, "Linux's struct sigcontext on x86-64");
_Static_assert(sizeof(struct rt_sigframe) == 440, "Linux's struct rt_sigframe on x86-64");

/* Why the program entered the kernel, for the frame (a fault's details). */
struct trap_info { uint64_t trapno, err, cr2; };

/* The current process's part (actions; what was sent to it as a whole). */
static struct process_signals *shared(void)
{
	return &current->proc->sig;
}
static int queued;              /* real-time signals queued in all, at most MAX_QUEUED */
#define MAX_QUEUED 1024         /* RLIMIT_SIGPENDING's role: the queue costs guest memory */
volatile uint8_t signal_waiting;

static uint64_t bit(int sig) { return 1ull << (sig - 1); }
static const uint64_t unblockable = 1ull << (SIGKILL - 1) | 1ull << (SIGSTOP - 1);

static uint64_t due_set(void)
{
	return (current->sig.pending | shared()->pending) & ~current->sig.mask;
}

int signal_due(void)
{
	return due_set() != 0 || current->proc->exiting || current->killed; /* an ending thread stops waiting */
}

void signal_recompute(void)
{
	signal_waiting = due_set() || sched_exit_wanted() || current->proc->exiting || current->killed;
}
#define recompute signal_recompute

/* Default action "ignore"; the stop signals too, as nothing could continue
 * the process. */
static int ignored_by_default(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT || sig == SIGSTOP ||
	       sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static int ignored_in(const struct process *p, int sig)
{
	uint64_t h = p->sig.actions[sig].handler;
	return h == (uintptr_t)SIG_IGN || (h == (uintptr_t)SIG_DFL && ignored_by_default(sig));
}

static int ignored(int sig)
{
	return ignored_in(current->proc, sig);
}

static int dying_of;

static _Noreturn void process_dies(void)
{
	process_exit(dying_of);
}

/* The current process dies of sig: the run, when it is pid 1.  Another
 * process ends from its thread's kernel stack (a fault comes on the
 * exception stack, which the next fault reuses). */
static _Noreturn void die(int sig, unsigned long why)
{
	if (current->proc->pid != 1) {
		dying_of = sig;
		run_on_stack(kstack_top, process_dies);
	}
	volatile struct husk_fault *r = &REPORT->fault;
	r->vector = HUSK_FAULT_SIGNAL, r->error = why, r->rip = 0, r->addr = 0, r->signal = sig;
	vfs_finish();
	for (;;)
		outl(HUSK_PORT_FAULT, 0);
}

_Noreturn void signal_die(int sig)
{
	die(sig, HUSK_SIGNAL_SENT);
}

_Noreturn void signal_out_of_memory(void)
{
	die(SIGKILL, HUSK_SIGNAL_NO_MEMORY);
}

/* A frame the kernel cannot build or take back: the program dies of SIGSEGV. */
static _Noreturn void bad_frame(void)
{
	die(SIGSEGV, HUSK_SIGNAL_BAD_FRAME);
}

/* The thread a signal sent to the process goes to, as Linux's
 * complete_signal picks it: the main thread if it does not block it (or
 * waits for it in rt_sigtimedwait), else the next that does not, else none
 * (it stays pending).  The main thread first: CPython runs its handlers
 * there, and a main thread blocked in join must wake with EINTR. */
static struct task *taker(struct process *p, uint64_t b)
{
	struct task *lead = task_by_tid(p->pid), *t = lead;
	if (!lead)
		return 0;
	do {
		if (t->proc == p && t->state != TASK_DEAD && (!(t->sig.mask & b) || (t->sig.waiting_for & b)))
			return t;
		t = t->next;
	} while (t != lead);
	return 0;
}

/* A timer's signal is never refused for the limit: each timer has at most
 * one queued (Linux reserves its entry at timer_create). */
static int enqueue(struct sigqueued **q, const struct siginfo_k *info, int timer)
{
	struct sigqueued *e = queued < MAX_QUEUED || timer ? kalloc(sizeof *e) : 0;
	if (!e)
		return -EAGAIN;
	e->info = *info;
	e->timer = timer;
	while (*q)
		q = &(*q)->next;
	*q = e;
	queued++;
	return 0;
}

/* Takes sig's oldest entry off q into *out (and its timer tag), or (out
 * NULL) every entry of sig (sig 0: every entry of timer).  Whether one of
 * sig is still queued. */
static int unqueue(struct sigqueued **q, int sig, struct siginfo_k *out, int *timer)
{
	int taken = 0, left = 0;
	while (*q) {
		struct sigqueued *e = *q;
		int match = sig ? e->info.signo == sig : e->timer == *timer;
		if (match && (!out || !taken)) {
			if (out)
				*out = e->info, *timer = e->timer;
			taken = 1;
			*q = e->next;
			kfree(e, sizeof *e);
			queued--;
			continue;
		}
		left |= e->info.signo == sig;
		q = &e->next;
	}
	return left;
}

static void drop_all(struct sigqueued **q, int sig)
{
	unqueue(q, sig, 0, 0);
}

void signal_task_gone(struct task *t)
{
	while (t->sig.queue)
		drop_all(&t->sig.queue, t->sig.queue->info.signo);
}

static int timer_queued_in(struct sigqueued *q, const uint8_t *tags, uint64_t pending, int timer)
{
	for (; q; q = q->next)
		if (q->timer == timer)
			return 1;
	for (int s = 1; s < SIGRT_FIRST; s++)
		if (tags[s] == timer && (pending & bit(s)))
			return 1;
	return 0;
}

int signal_timer_pending(struct process *p, int id)
{
	int tag = id + 1;
	struct task *t = current;
	do {
		if (t->proc == p && timer_queued_in(t->sig.queue, t->sig.info_timer, t->sig.pending, tag))
			return 1;
		t = t->next;
	} while (t != current);
	return timer_queued_in(p->sig.queue, p->sig.info_timer, p->sig.pending, tag);
}

static void forget_in(struct sigqueued **q, uint8_t *tags, int timer)
{
	unqueue(q, 0, 0, &timer);
	for (int s = 1; s < SIGRT_FIRST; s++)
		if (tags[s] == timer)
			tags[s] = 0;
}

void signal_timer_forget(int id)
{
	struct task *t = current;
	do {
		if (t->proc == current->proc)
			forget_in(&t->sig.queue, t->sig.info_timer, id + 1);
		t = t->next;
	} while (t != current);
	forget_in(&shared()->queue, shared()->info_timer, id + 1);
	recompute();
}

/* A signal is generated for thread t, or the process (t NULL), by POSIX
 * timer `timer` - 1 (0: none).  Discarded if ignored and not blocked (as
 * Linux does: SIGNAL_IGNORED), else pending: a standard signal once (one
 * already pending: SIGNAL_MERGED), a real-time one queued with its info
 * (-EAGAIN when the queue is full); a sleeping thread that can take it
 * wakes. */
static long generate_in(struct process *p, struct task *t, int sig, const struct siginfo_k *info, int timer)
{
	if (p->zombie || p->exiting)
		return SIGNAL_IGNORED;
	if (sig == SIGKILL) {
		if (p == current->proc)
			die(sig, HUSK_SIGNAL_SENT);
		process_kill(p, sig);
		return 0;
	}
	uint64_t b = bit(sig);
	struct task *to = t ? t : taker(p, b);
	if (ignored_in(p, sig) && !(to && (to->sig.mask & b)))
		return SIGNAL_IGNORED;
	struct process_signals *ps = &p->sig;
	uint64_t *pending = t ? &t->sig.pending : &ps->pending;
	if (sig >= SIGRT_FIRST) {
		long r = enqueue(t ? &t->sig.queue : &ps->queue, info, timer);
		if (r)
			return r;
	} else if (*pending & b) {
		return SIGNAL_MERGED;
	} else {
		(t ? t->sig.info : ps->info)[sig] = *info;
		(t ? t->sig.info_timer : ps->info_timer)[sig] = (uint8_t)timer;
	}
	*pending |= b;
	if (to)
		sched_signal_wake(to, b);
	recompute();
	return 0;
}

static long generate(struct task *t, int sig, const struct siginfo_k *info, int timer)
{
	return generate_in(t ? t->proc : current->proc, t, sig, info, timer);
}

static int on_altstack(uint64_t sp)
{
	const struct stack_k *a = &current->sig.alt;
	return a->size && sp > a->sp && sp <= a->sp + a->size;
}

static int32_t altstack_flags(uint64_t sp)
{
	return !current->sig.alt.size ? SS_DISABLE : on_altstack(sp) ? SS_ONSTACK : 0;
}

size_t signal_frame_size(void)
{
	size_t n = fpu_frame_size() + 63 + sizeof(struct rt_sigframe) + 15 + 8;
	return n > MINSIGSTKSZ ? n : MINSIGSTKSZ;
}

/* Builds the frame for sig's handler below r->rsp (or on the alternate
 * stack) and points r at the handler.  Returns 0 when the frame does not
 * fit in the program's memory. */
static int setup_frame(struct user_regs *r, int sig, const struct siginfo_k *info, const struct trap_info *t)
{
	struct sigaction_k *a = &shared()->actions[sig];
	struct thread_signals *self = &current->sig;
	if (!(a->flags & SA_RESTORER))
		return 0; /* x86-64 has no default way back */
	uint64_t sp = r->rsp;
	if ((a->flags & SA_ONSTACK) && self->alt.size && !on_altstack(sp))
		sp = self->alt.sp + self->alt.size;
	else
		sp -= RED_ZONE;
	uint64_t fp = (sp - fpu_frame_size()) & ~63ul;
	sp = ((fp - sizeof(struct rt_sigframe)) & ~15ul) - 8; /* as after a call */
	if (sp > fp || !user_write_ok((void *)sp, fp + fpu_frame_size() - sp))
		return 0; /* (written on the exception stack: no fault may come) */
	fpu_save_frame((void *)fp);
	struct rt_sigframe *f = (struct rt_sigframe *)sp;
	memset(f, 0, sizeof *f);
	f->pretcode = a->restorer;
	f->uc.stack = (struct stack_k){ self->alt.sp, altstack_flags(r->rsp), 0, self->alt.size };
	f->uc.mc = (struct sigcontext_k){
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rdi, r->rsi, r->rbp, r->rbx,
		r->rdx, r->rax, r->rcx, r->rsp, r->rip, r->rflags, HUSK_KCS, 0, 0, HUSK_KDS,
		t ? t->err : 0, t ? t->trapno : 0, self->mask, t ? t->cr2 : 0, fp, { 0 },
	};
	f->uc.sigmask = self->suspended ? self->suspend_mask : self->mask;
	self->suspended = 0;
	f->info = *info;
	self->mask |= a->mask | (a->flags & SA_NODEFER ? 0 : bit(sig));
	self->mask &= ~unblockable;
	r->rdi = sig, r->rsi = (uintptr_t)&f->info, r->rdx = (uintptr_t)&f->uc, r->rax = 0;
	r->rip = a->handler, r->rsp = sp, r->rflags &= ~(EFLAGS_DF | EFLAGS_TF);
	if (a->flags & SA_RESETHAND)
		a->handler = (uintptr_t)SIG_DFL, a->flags &= ~SA_SIGINFO;
	return 1;
}

int signal_return_room(uint64_t rsp)
{
	return user_write_ok((void *)(rsp - RETURN_ROOM), RETURN_ROOM - RED_ZONE);
}

/* The way back to the program: rflags and rip staged just below its red
 * zone, for return_to_program's popfq and ret. */
static void return_prepare(struct user_regs *r)
{
	uint64_t *land = (uint64_t *)(r->rsp - RED_ZONE - 16);
	if (!signal_return_room(r->rsp))
		bad_frame(); /* no room below the stack to return to the program */
	land[0] = r->rflags, land[1] = r->rip;
	r->rsp = (uintptr_t)land;
}

static int next_signal(void)
{
	uint64_t due = due_set();
	return due ? __builtin_ctzll(due) + 1 : 0;
}

/* Takes sig off the thread's pending set, else the process's: its info
 * (a real-time signal: the oldest queued; pending while more are); a
 * timer's gets its overrun count. */
static struct siginfo_k dequeue(int sig)
{
	struct thread_signals *self = &current->sig;
	int mine = (self->pending & bit(sig)) != 0, timer = 0;
	uint64_t *pending = mine ? &self->pending : &shared()->pending;
	struct siginfo_k info;
	if (sig < SIGRT_FIRST) {
		info = (mine ? self->info : shared()->info)[sig];
		timer = (mine ? self->info_timer : shared()->info_timer)[sig];
		(mine ? self->info_timer : shared()->info_timer)[sig] = 0;
		*pending &= ~bit(sig);
	} else if (!unqueue(mine ? &self->queue : &shared()->queue, sig, &info, &timer)) {
		*pending &= ~bit(sig);
	}
	if (timer)
		itimer_delivered(timer - 1, &info);
	return info;
}

long signal_send_timer(struct process *p, struct task *t, const struct siginfo_k *info, int id)
{
	return generate_in(p, t, info->signo, info, id + 1);
}

void signal_raise_thread(int sig)
{
	struct siginfo_k info = { .signo = sig, .code = SI_KERNEL };
	generate(current, sig, &info, 0);
}

/* The stop signals husk received (Ctrl-C: sent from outside, SI_USER from
 * no process of this VM), to the process. */
void signal_poll_host(void)
{
	unsigned long host = __atomic_exchange_n(&REPORT->host_signals, 0, __ATOMIC_SEQ_CST);
	for (int sig = 1; host; sig++, host >>= 1)
		if ((host & 1) && sig < _NSIG) {
			struct siginfo_k info = { .signo = sig, .code = SI_USER };
			generate_in(processes, 0, sig, &info, 0); /* to the program, pid 1 */
		}
}

/* What is due, into r: at most one handler's frame. */
/* The interrupted call made again when the program resumes at r: the
 * `syscall` instruction once more (its argument registers are kept), or
 * the fast entry called again from its caller's return address, which is
 * still in place above the red zone (as is a6). */
static void restart_call(struct user_regs *r)
{
	const long *a = current->restart.a;
	if (current->restart.by_instruction) {
		r->rip -= 2, r->rax = (uint64_t)current->restart.nr;
		return;
	}
	r->rsp -= 8, r->rip = (uintptr_t)fast_entry;
	r->rdi = (uint64_t)current->restart.nr, r->rsi = a[0], r->rdx = a[1], r->rcx = a[2], r->r8 = a[3],
	r->r9 = a[4];
}

static void deliver_due(struct user_regs *r)
{
	struct thread_signals *self = &current->sig;
	int restart = current->restart.pending; /* r->rax is -ERESTARTSYS */
	current->restart.pending = 0;
	for (int sig; (sig = next_signal());) {
		struct siginfo_k info = dequeue(sig);
		if (ignored(sig))
			continue;
		if (shared()->actions[sig].handler == (uintptr_t)SIG_DFL)
			die(sig, info.code == SI_USER && !info.kill.pid ? HUSK_SIGNAL_FROM_HOST : HUSK_SIGNAL_SENT);
		if (restart && (shared()->actions[sig].flags & SA_RESTART))
			restart_call(r); /* after the handler */
		else if (restart)
			r->rax = (uint64_t)-EINTR;
		restart = 0;
		if (!setup_frame(r, sig, &info, 0))
			bad_frame(); /* a signal frame does not fit */
		break; /* one handler at a time: the next at its next system call */
	}
	if (restart)
		restart_call(r); /* no handler ran: as if the signal had not come */
	if (self->suspended) { /* rt_sigsuspend woke for a signal that ran no handler */
		self->mask = self->suspend_mask;
		self->suspended = 0;
	}
	recompute();
}

void signal_deliver(struct user_regs *r)
{
	sched_exit_work();
	if (current->proc->exiting || current->killed)
		task_exit(0); /* its process ends (exit_group, a fatal signal), or another thread execs */
	deliver_due(r);
	return_prepare(r);
}

int signal_catches(int sig)
{
	return shared()->actions[sig].handler > (uintptr_t)SIG_IGN && !(current->sig.mask & bit(sig));
}

void signal_fault(struct user_regs *r, int sig, int code, uint64_t addr, uint64_t vector, uint64_t error)
{
	struct siginfo_k info = { .signo = sig, .code = code, .addr = addr };
	struct trap_info t = { vector, error, addr }; /* a SIGSEGV handler may look at the error's write bit */
	if (!setup_frame(r, sig, &info, &t))
		bad_frame(); /* a fault's signal frame does not fit */
	recompute();
}

static int set_altstack(const struct stack_k *ss, uint64_t sp)
{
	struct stack_k *alt = &current->sig.alt;
	if (on_altstack(sp))
		return -EPERM;
	if (ss->flags & ~(SS_DISABLE | SS_ONSTACK | (int32_t)(1u << 31))) /* SS_AUTODISARM: accepted */
		return -EINVAL;
	if (ss->flags & SS_DISABLE) {
		*alt = (struct stack_k){ 0, SS_DISABLE, 0, 0 };
		return 0;
	}
	if (ss->size < MINSIGSTKSZ)
		return -ENOMEM;
	*alt = (struct stack_k){ ss->sp, 0, 0, ss->size };
	return 0;
}

static long rt_sigreturn(struct user_regs *r)
{
	struct rt_sigframe *f = (struct rt_sigframe *)(r->rsp - 8);
	if (!user_ok(f, sizeof *f))
		bad_frame(); /* rt_sigreturn's frame is not the program's memory */
	const struct sigcontext_k *m = &f->uc.mc;
	if (m->fpstate) {
		/* current->fpu is unused while the task runs */
		if (m->fpstate % 16 || fpu_frame_take(current->fpu, m->fpstate))
			bad_frame(); /* rt_sigreturn's FPU state is bad */
		fpu_load(current->fpu);
	}
	*r = (struct user_regs){
		m->r15, m->r14, m->r13, m->r12, m->rbp, m->rbx, m->r11, m->r10, m->r9, m->r8, m->rax, m->rcx, m->rdx,
		m->rsi, m->rdi, m->rip, (r->rflags & ~EFLAGS_USER) | (m->eflags & EFLAGS_USER), m->rsp,
	};
	current->sig.mask = f->uc.sigmask & ~unblockable;
	struct stack_k ss = f->uc.stack;
	set_altstack(&ss, r->rsp); /* as Linux, a bad one is ignored */
	recompute();
	return r->rax;
}

void syscall_by_instruction(struct user_regs *r)
{
	current->frame = r;
	REPORT->by_instruction++;
	if (r->rax == SYS_rt_sigreturn) {
		REPORT->calls[SYS_rt_sigreturn]++;
		rt_sigreturn(r);
	} else {
		syscall_rewrite(r); /* the next time, by the fast entry */
		r->rax = syscall_dispatch(r->rax, r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9);
	}
	current->frame = 0;
	signal_deliver(r);
}

/* --- system calls ---------------------------------------------------------- */

static int bad_signal(long sig)
{
	return sig < 1 || sig >= _NSIG;
}

long sys_rt_sigaction(long sig, const void *act, void *old, unsigned long size)
{
	if (bad_signal(sig) || size != sizeof(uint64_t))
		return -EINVAL;
	if ((act && (sig == SIGKILL || sig == SIGSTOP)))
		return -EINVAL;
	if ((act && !user_ok(act, sizeof(struct sigaction_k))) || (old && !user_ok(old, sizeof(struct sigaction_k))))
		return -EFAULT;
	struct sigaction_k prev = shared()->actions[sig];
	if (act) {
		memcpy(&shared()->actions[sig], act, sizeof shared()->actions[sig]);
		shared()->actions[sig].mask &= ~unblockable;
		if (ignored(sig)) { /* setting "ignore" drops what is pending, in every thread */
			struct task *t = current;
			do {
				if (t->proc == current->proc) {
					t->sig.pending &= ~bit(sig);
					drop_all(&t->sig.queue, (int)sig);
				}
				t = t->next;
			} while (t != current);
			shared()->pending &= ~bit(sig);
			drop_all(&shared()->queue, (int)sig);
		}
		recompute();
	}
	if (old)
		memcpy(old, &prev, sizeof prev);
	return 0;
}

long sys_rt_sigprocmask(long how, const uint64_t *set, uint64_t *old, unsigned long size)
{
	struct thread_signals *self = &current->sig;
	if (size != sizeof(uint64_t) || how < SIG_BLOCK || how > SIG_SETMASK)
		return -EINVAL;
	if ((set && !user_ok(set, 8)) || (old && !user_ok(old, 8)))
		return -EFAULT;
	if (old)
		*old = self->mask;
	if (set) {
		uint64_t s = *set;
		self->mask = how == SIG_BLOCK ? self->mask | s : how == SIG_UNBLOCK ? self->mask & ~s : s;
		self->mask &= ~unblockable;
		recompute();
	}
	return 0;
}

long sys_sigaltstack(const void *ss, void *old)
{
	const struct user_regs *fr = current->frame;
	uint64_t sp = fr ? fr->rsp : (uintptr_t)(fast_frame + 7);
	const struct stack_k *alt = &current->sig.alt;
	if ((ss && !user_ok(ss, sizeof(struct stack_k))) || (old && !user_ok(old, sizeof(struct stack_k))))
		return -EFAULT;
	struct stack_k prev = { alt->sp, altstack_flags(sp), 0, alt->size };
	if (ss) {
		struct stack_k s;
		memcpy(&s, ss, sizeof s);
		int r = set_altstack(&s, sp);
		if (r)
			return r;
	}
	if (old)
		memcpy(old, &prev, sizeof prev);
	return 0;
}

long sys_rt_sigpending(uint64_t *set, unsigned long size)
{
	if (size > sizeof(uint64_t))
		return -EINVAL;
	if (!user_ok(set, size))
		return -EFAULT;
	uint64_t p = current->sig.pending | shared()->pending;
	memcpy(set, &p, size);
	return 0;
}

/* Blocks (other tasks run) until a signal is due, for ever if none comes
 * (until the run's limits end it, as pause() would sleep for ever). */
static void wait_for_signal(void)
{
	while (!signal_due())
		sched_block(0, 1);
}

int signal_sleep(uint64_t ns)
{
	uint64_t end = clock_mono_ns() + ns;
	while (clock_mono_ns() < end) {
		if (sched_block(end, 1) == -EINTR && signal_due())
			return -EINTR;
	}
	return 0;
}

long sys_rt_sigsuspend(const uint64_t *mask, unsigned long size)
{
	struct thread_signals *self = &current->sig;
	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (!user_ok(mask, 8))
		return -EFAULT;
	uint64_t old = self->mask;
	self->mask = *mask & ~unblockable;
	recompute();
	wait_for_signal();
	self->suspended = 1, self->suspend_mask = old; /* the handler's frame restores it */
	return -EINTR;
}

uint64_t signal_mask_swap(uint64_t mask)
{
	uint64_t old = current->sig.mask;
	current->sig.mask = mask & ~unblockable;
	recompute();
	return old;
}

void signal_mask_restore(uint64_t old, long result)
{
	struct thread_signals *self = &current->sig;
	if (result == -EINTR && next_signal()) /* as rt_sigsuspend: the handler's frame restores it */
		self->suspended = 1, self->suspend_mask = old;
	else
		self->mask = old;
	recompute();
}

long sys_pause(void)
{
	wait_for_signal();
	return -EINTR;
}

long sys_rt_sigtimedwait(const uint64_t *set, void *info, const void *timeout, unsigned long size)
{
	struct thread_signals *self = &current->sig;
	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (!user_ok(set, 8) || (info && !user_ok(info, sizeof(struct siginfo_k))) ||
	    (timeout && !user_ok(timeout, 16)))
		return -EFAULT;
	uint64_t want = *set & ~unblockable, end;
	long r = deadline_ts(timeout, &end);
	if (r)
		return r;
	self->waiting_for = want;
	for (;;) {
		uint64_t hit = (self->pending | shared()->pending) & want;
		if (hit) {
			int sig = __builtin_ctzll(hit) + 1;
			struct siginfo_k got = dequeue(sig);
			if (info)
				memcpy(info, &got, sizeof got);
			r = sig;
			break;
		}
		if (next_signal()) {
			r = -EINTR; /* another signal, to its handler */
			break;
		}
		if (sched_block(end, 1) == -ETIMEDOUT) {
			r = -EAGAIN;
			break;
		}
	}
	self->waiting_for = 0;
	recompute();
	return r;
}

static long send(struct process *p, struct task *t, long sig, int code)
{
	if (sig < 0 || sig >= _NSIG)
		return -EINVAL;
	struct siginfo_k info = { .signo = (int32_t)sig, .code = code, .kill = { current->proc->pid, 0 } };
	long r = sig ? generate_in(p, t, (int)sig, &info, 0) : 0;
	return r < 0 ? r : 0;
}

/* kill: a process (a zombie takes nothing, but is there), a process group
 * (0: the caller's), or (-1) every process but pid 1 and the caller. */
long sys_kill(long pid, long sig)
{
	if (sig < 0 || sig >= _NSIG)
		return -EINVAL;
	if (pid > 0) {
		struct process *p = process_by_pid((int)pid);
		return p ? send(p, 0, sig, SI_USER) : -ESRCH;
	}
	int group = pid == 0 ? current->proc->pgid : (int)-pid, found = 0;
	long r = 0;
	for (struct process *p = processes; p; p = p->next) {
		if (pid == -1 ? p->pid == 1 || p == current->proc : p->pgid != group)
			continue;
		found = 1;
		long e = send(p, 0, sig, SI_USER);
		if (e && !r)
			r = e;
	}
	return found ? r : -ESRCH;
}

long sys_tgkill(long tgid, long tid, long sig)
{
	if (tgid <= 0 || tid <= 0)
		return -EINVAL;
	struct task *t = task_by_tid((int)tid);
	if (!t || t->proc->pid != tgid || t->state == TASK_DEAD)
		return -ESRCH;
	return send(t->proc, t, sig, SI_TKILL);
}

long sys_tkill(long tid, long sig)
{
	struct task *t = tid > 0 ? task_by_tid((int)tid) : 0;
	if (tid <= 0)
		return -EINVAL;
	return t && t->state != TASK_DEAD ? send(t->proc, t, sig, SI_TKILL) : -ESRCH;
}

void signal_fork(struct process *child)
{
	memcpy(child->sig.actions, current->proc->sig.actions, sizeof child->sig.actions);
}

void signal_exec_reset(void)
{
	struct sigaction_k *a = current->proc->sig.actions;
	for (int sig = 1; sig < _NSIG; sig++)
		if (a[sig].handler != (uintptr_t)SIG_IGN)
			a[sig] = (struct sigaction_k){ 0 };
	current->sig.alt = (struct stack_k){ 0, SS_DISABLE, 0, 0 };
}

void signal_process_gone(struct process *p)
{
	while (p->sig.queue)
		drop_all(&p->sig.queue, p->sig.queue->info.signo);
	p->sig.pending = 0;
}

long signal_send_process(struct process *p, int sig, int code, int from_pid, int status)
{
	struct siginfo_k info = { .signo = sig, .code = code, .kill = { from_pid, 0 } };
	memcpy(&info.bytes[8], &status, sizeof status); /* si_status, after si_pid and si_uid */
	long r = generate_in(p, 0, sig, &info, 0);
	return r < 0 ? r : 0;
}

long sys_rt_sigqueueinfo(long pid, long sig, const void *uinfo)
{
	struct process *p = pid ? process_by_pid((int)pid) : current->proc;
	if (!p)
		return -ESRCH;
	if (bad_signal(sig))
		return -EINVAL;
	if (!user_ok(uinfo, sizeof(struct siginfo_k)))
		return -EFAULT;
	struct siginfo_k info;
	memcpy(&info, uinfo, sizeof info);
	info.signo = (int32_t)sig;
	long r = generate_in(p, 0, (int)sig, &info, 0);
	return r < 0 ? r : 0;
}
