/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <time.h>
#include "exit_codes.h"
#include "husk/abi.h"
#include "devices/host_fd.h"
#include "devices/virtio_console.h"
#include "devices/virtio_net_stream.h"
#include "run.h"
#include "sandbox/stop.h"

static struct kvm_run *volatile running;
static int until_ready; /* run_limits' */
static volatile sig_atomic_t host_signals, host_signals_seen;
static enum run_end end_reason = RUN_END_ERROR;

int run_host_signals_seen(void)
{
	return host_signals_seen != 0;
}

enum run_end run_end_reason(void)
{
	return end_reason;
}

const char *run_end_name(enum run_end r)
{
	static const char *const names[] = {
		[RUN_END_ERROR] = "error", [RUN_END_EXIT] = "exit", [RUN_END_CRASH] = "crash",
		[RUN_END_PANIC] = "panic", [RUN_END_TIMEOUT] = "timeout", [RUN_END_CPU] = "cpu",
		[RUN_END_OUTPUT] = "output", [RUN_END_MEMORY] = "memory", [RUN_END_READY] = "ready",
		[RUN_END_DECLINED] = "declined",
	};
	return names[r];
}

/* Timer signals: make KVM_RUN (or a blocking read/write) return EINTR. */
static void on_limit(int sig)
{
	stop_request(sig == SIGXCPU ? STOP_CPU : STOP_TIMEOUT);
	if (running)
		running->immediate_exit = 1;
}

/* The stop signals (Ctrl-C, SIGTERM, ...) husk gets while the guest runs go
 * to the program first, once per kind, so that it can clean up (Python
 * raises KeyboardInterrupt) and its workdir is written back.  With
 * namespaces the supervisor sends them here (a Ctrl-C may bring the same
 * signal twice: from the supervisor and from the terminal's process group)
 * and itself ends the run at a second request or after a grace period
 * (isolate.c).  Without, a second one of a kind (stop_signal_again), or one
 * after the guest is gone, ends husk at once with 128 + the signal
 * (exit_group: all the confined VMM may do). */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static int supervised;

static void on_stop(int sig)
{
	int bit = 1 << (sig - 1), again = stop_signal_again(sig) || !running;
	if (again && !supervised)
		_exit(128 + sig);
	if (again || (host_signals_seen & bit))
		return; /* the supervisor ends the run; or the same request twice */
	host_signals_seen |= bit;
	host_signals |= bit;
	running->immediate_exit = 1;
}

static void interrupt_guest(struct vm *v, unsigned vector)
{
	struct kvm_msi msi = { .address_lo = 0xfee00000u, .data = vector };
	if (ioctl(v->fd, KVM_SIGNAL_MSI, &msi) < 0)
		fprintf(stderr, "husk: cannot interrupt the guest: %s\n", strerror(errno));
}

/* The broker has messages (SIGIO): KVM_RUN returns for them. */
static volatile sig_atomic_t net_signal;
/* Messages went into the receive queue while the guest ran: its next sleep
 * returns at once, for it may have looked at the queue just before. */
static int net_unseen;

static void on_net(int sig)
{
	(void)sig;
	net_signal = 1;
	if (running)
		running->immediate_exit = 1;
}

void run_watch_net(int broker_fd)
{
	/* SA_RESTART: KVM_RUN, pselect and clock_nanosleep still return at it
	 * (they are never restarted), and what runs after the run (the
	 * write-back, the audit) is not cut short by the broker's last messages */
	struct sigaction sa = { .sa_handler = on_net, .sa_flags = SA_RESTART };
	sigaction(SIGIO, &sa, NULL);
	if (fcntl(broker_fd, F_SETOWN, getpid()) || fcntl(broker_fd, F_SETFL, O_NONBLOCK | O_ASYNC))
		fprintf(stderr, "husk: the network's socket cannot signal: %s\n", strerror(errno));
}

/* What came while the guest ran, handed to it: the host's signals (the bits
 * in the report page, then an interrupt), the broker's messages (into the
 * receive queue, then an interrupt).  -1 with *err: the guest broke the
 * device's protocol. */
static int take_events(struct vm *v, struct run_devices *dev, const char **err)
{
	int s = __atomic_exchange_n(&host_signals, 0, __ATOMIC_SEQ_CST);
	int net = __atomic_exchange_n(&net_signal, 0, __ATOMIC_SEQ_CST);
	if (!s && !net)
		return 0;
	v->run->immediate_exit = 0;
	if (s) {
		struct husk_report *r = gpa_fixed(&v->mem, HUSK_REPORT, sizeof *r);
		r->host_signals |= (unsigned)s;
		interrupt_guest(v, HUSK_HOST_SIGNAL_VECTOR);
	}
	if (net && dev->net) {
		int k = net_stream_deliver(dev->net, err);
		if (k < 0)
			return -1;
		if (k > 0) {
			net_unseen = 1;
			interrupt_guest(v, HUSK_DEVICE_VECTOR);
		}
	}
	/* a limit, a signal or messages that came meanwhile still stop KVM_RUN */
	if (stop_requested() != STOP_NONE || host_signals || net_signal)
		v->run->immediate_exit = 1;
	return 0;
}

/* After its first expiry a limit's timer fires again every REPEAT: a signal
 * that came just before a blocking write started is lost on it, the next
 * one interrupts it. */
static const struct timespec REPEAT = { 0, 50 * 1000 * 1000 };

static struct timespec seconds_ts(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	if (!t.tv_sec && !t.tv_nsec)
		t.tv_nsec = 1; /* 0 would disarm */
	return t;
}

static timer_t cpu_timer;
static int cpu_timer_armed;

void run_prepare(const struct run_limits *lim)
{
	supervised = lim->supervised;
	struct sigaction sa = { .sa_handler = on_limit }; /* no SA_RESTART: blocking calls return EINTR */
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGXCPU, &sa, NULL);
	sa.sa_handler = on_stop;
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
		sigaction(stop_signals[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout is handled as EPIPE */
	if (lim->cpu_s > 0) {
		/* The guest's time is accounted to the vCPU thread as user time. */
		struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGXCPU };
		struct itimerspec its = { .it_interval = REPEAT, .it_value = seconds_ts(lim->cpu_s) };
		cpu_timer_armed = timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &cpu_timer) == 0 &&
				  timer_settime(cpu_timer, 0, &its, NULL) == 0;
	}
}

static void arm_timeout(double seconds)
{
	struct timespec t = seconds_ts(seconds);
	struct itimerval it = { .it_interval = { 0, REPEAT.tv_nsec / 1000 }, .it_value = { t.tv_sec, t.tv_nsec / 1000 } };
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* No timer signal after the run: the write-back and the audit need no EINTR. */
static void disarm_timers(double timeout_s)
{
	if (timeout_s > 0)
		setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
	if (cpu_timer_armed)
		timer_settime(cpu_timer, 0, &(struct itimerspec){ 0 }, NULL);
}

static const char *const signal_names[32] = {
	[1] = "SIGHUP", [2] = "SIGINT", [3] = "SIGQUIT", [4] = "SIGILL", [5] = "SIGTRAP", [6] = "SIGABRT",
	[7] = "SIGBUS", [8] = "SIGFPE", [9] = "SIGKILL", [10] = "SIGUSR1", [11] = "SIGSEGV", [12] = "SIGUSR2",
	[13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM", [16] = "SIGSTKFLT", [19] = "SIGSTOP",
	[20] = "SIGTSTP", [21] = "SIGTTIN", [22] = "SIGTTOU", [24] = "SIGXCPU", [25] = "SIGXFSZ",
	[26] = "SIGVTALRM", [27] = "SIGPROF", [29] = "SIGIO", [30] = "SIGPWR", [31] = "SIGSYS",
};
static const char *const vector_names[32] = {
	[0] = "divide error", [1] = "debug trap", [3] = "breakpoint", [4] = "overflow",
	[5] = "bound range", [6] = "invalid opcode", [7] = "FPU not available", [10] = "invalid TSS",
	[11] = "segment not present", [12] = "stack fault", [13] = "general protection fault",
	[14] = "page fault", [16] = "x87 error", [17] = "alignment check", [19] = "SIMD error",
};

_Static_assert(HUSK_REPORT + sizeof(struct husk_report) <= HUSK_RAM_MIN, "the report page is in any guest's RAM");

/* The guest's report page, copied once per exit: the guest is stopped, but
 * untrusted, and every reader of one copy sees the same values. */
static void copy_report(const struct vm *v, struct husk_report *r)
{
	memcpy(r, gpa_fixed(&v->mem, HUSK_REPORT, sizeof *r), sizeof *r);
}

static int program_fault(const struct husk_report *r)
{
	struct husk_fault f = r->fault;
	if (f.vector == HUSK_FAULT_SIGNAL && f.signal > 0 && f.signal <= 64) {
		fprintf(stderr, "husk: program killed by %s%.0lu (%s)\n",
			f.signal < 32 && signal_names[f.signal] ? signal_names[f.signal] : "signal ",
			f.signal < 32 && signal_names[f.signal] ? 0ul : f.signal,
			f.error == HUSK_SIGNAL_BAD_FRAME ? "a signal frame did not fit on its stack, or rt_sigreturn's was bad"
			: f.error == HUSK_SIGNAL_FROM_HOST ? "husk received it and passed it on"
			: f.error == HUSK_SIGNAL_NO_MEMORY ? "the guest's memory ran out: raise -m"
							   : "it sent the signal to itself");
		return 128 + (int)f.signal;
	}
	if (f.signal >= 32 || !signal_names[f.signal] || f.vector >= 32) {
		fprintf(stderr, "husk: guest reported a fault with signal %lu, vector %lu\n", f.signal, f.vector);
		return EXIT_PANIC;
	}
	fprintf(stderr, "husk: program killed by %s (%s) at rip %#lx", signal_names[f.signal],
		vector_names[f.vector] ? vector_names[f.vector] : "exception", f.rip);
	if (f.vector == 14)
		fprintf(stderr, ", address %#lx (%s)", f.addr, f.error & 2 ? "write" : "read");
	fputc('\n', stderr);
	return 128 + (int)f.signal;
}

static int kernel_panic(const struct husk_report *r)
{
	char msg[sizeof r->msg];
	memcpy(msg, r->msg, sizeof msg);
	msg[sizeof msg - 1] = 0;
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	fprintf(stderr, "husk: guest kernel panic: %s\n", msg);
	return EXIT_PANIC;
}

static void print_syscalls(const struct husk_report *r)
{
	fprintf(stderr, "husk: system calls made (number name count [not implemented]):\n");
	for (int nr = 0; nr < HUSK_NSYSCALLS; nr++) {
		unsigned calls = r->calls[nr], enosys = r->enosys[nr];
		if (!calls)
			continue;
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		fprintf(stderr, "husk:   %3d %-20s %u%s\n", nr, name ? name : "?", calls,
			enosys ? " ENOSYS" : "");
		free(name);
	}
	if (r->out_of_range)
		fprintf(stderr, "husk:   numbers outside 0..%d  %u ENOSYS\n", HUSK_NSYSCALLS - 1, r->out_of_range);
	fprintf(stderr, "husk: of them by the `syscall` instruction: %u; its sites made fast entries: %u\n",
		r->by_instruction, r->syscall_sites);
}

/* The guest has nothing to run until r->sleep_ns from now: the host thread
 * sleeps, and wakes early for a stop, a signal to pass on, input for a
 * receive buffer the guest is waiting on (filled then), or the broker's
 * messages (delivered then). */
static int guest_sleep(const struct husk_report *r, struct run_devices *dev, const char **err)
{
	if (net_unseen) {
		net_unseen = 0;
		return 0;
	}
	if (dev->net) {
		int k = net_stream_deliver(dev->net, err);
		if (k)
			return k < 0 ? -1 : 0;
	}
	uint64_t ns = r->sleep_ns;
	if (ns > 366ull * 86400 * 1000000000)
		ns = 366ull * 86400 * 1000000000;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ns / 1000000000 + (until.tv_nsec + ns % 1000000000) / 1000000000;
	until.tv_nsec = (until.tv_nsec + ns % 1000000000) % 1000000000;
	struct console *input = dev->input;
	while (!stop_requested() && !host_signals) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t left = (until.tv_sec - now.tv_sec) * 1000000000ll + (until.tv_nsec - now.tv_nsec);
		if (left < 1000000)
			break; /* the last millisecond: slept below */
		int fds[2] = { input && input->rx_held ? input->in_fd : -1, dev->net ? net_stream_wait_fd(dev->net) : -1 };
		if (input && input->rx_held && input->in_fd < 0)
			return console_input(input, err); /* no input: its end, at once */
		if (fds[0] < 0 && fds[1] < 0)
			break;
		unsigned ready = host_fds_wait(fds, 2, 0, left / 1000000);
		if (ready & 1)
			return console_input(input, err);
		if (ready & 2)
			return net_stream_deliver(dev->net, err) < 0 ? -1 : 0;
	}
	while (!stop_requested() && !host_signals && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
	return 0;
}

/* KVM could not run an instruction.  kvm_pvm's emulator fails on `int n`
 * (a software interrupt); on Linux, and on hardware KVM through the guest's
 * IDT, the program gets a #GP for it: SIGSEGV (`int $0x80`, the i386 system
 * call gate, included: husk runs 64-bit programs only). */
static int internal_error(struct vm *v)
{
	struct kvm_regs r = { 0 };
	const uint8_t *ins = NULL;
	if (v->run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION && ioctl(v->vcpu, KVM_GET_REGS, &r) == 0 &&
	    r.rip >= HUSK_PROGRAM_MIN)
		ins = gpa_ptr(&v->mem, r.rip, 2); /* the program's addresses are identity-mapped */
	if (ins && ins[0] == 0xcd) {
		fprintf(stderr, "husk: program killed by SIGSEGV (software interrupt int $%#x) at rip %#llx\n", ins[1],
			(unsigned long long)r.rip);
		end_reason = RUN_END_CRASH;
		return 128 + SIGSEGV;
	}
	fprintf(stderr, "husk: the guest ran an instruction KVM cannot handle (internal error %u)\n",
		v->run->internal.suberror);
	return EXIT_PANIC;
}

static int guest_error(struct vm *v, const char *what)
{
	struct kvm_regs r = { 0 };
	ioctl(v->vcpu, KVM_GET_REGS, &r);
	fprintf(stderr, "husk: guest misbehaved: %s (rip %#llx); run stopped\n", what, (unsigned long long)r.rip);
	return EXIT_GUEST_ERROR;
}

static int handle_mmio(struct vm *v, struct run_devices *dev)
{
	struct kvm_run *run = v->run;
	uint64_t a = run->mmio.phys_addr;
	for (int i = 0; i < dev->n; i++) {
		struct virtio_mmio *d = dev->mmio[i];
		if (a >= d->base && a < d->base + HUSK_MMIO_SIZE) {
			const char *err = NULL;
			if (!virtio_mmio_access(d, a - d->base, run->mmio.data, run->mmio.len, run->mmio.is_write, &err))
				return 0;
			fprintf(stderr, "husk: guest misbehaved: %s; run stopped\n", err);
			return -1;
		}
	}
	fprintf(stderr, "husk: guest misbehaved: %s of unknown MMIO address %#llx; run stopped\n",
		run->mmio.is_write ? "write" : "read", (unsigned long long)a);
	return -1;
}

/* The guest kernel's ports (husk/abi.h): the run's end, or a sleep.  Copies
 * the report into *rep first.  Returns the run's status, or -1 to go on
 * running. */
static int handle_port(struct vm *v, struct run_devices *dev, struct husk_report *rep)
{
	struct kvm_run *run = v->run;
	copy_report(v, rep);
	if (run->io.direction != KVM_EXIT_IO_OUT || run->io.size != 4 || run->io.count != 1)
		return guest_error(v, "unexpected I/O port access");
	uint32_t val;
	memcpy(&val, (uint8_t *)run + run->io.data_offset, 4);
	switch (run->io.port) {
	case HUSK_PORT_EXIT:
		end_reason = RUN_END_EXIT;
		return val & 0xff;
	case HUSK_PORT_FAULT:
		end_reason = RUN_END_CRASH;
		return program_fault(rep);
	case HUSK_PORT_PANIC:
		end_reason = RUN_END_PANIC;
		return kernel_panic(rep);
	case HUSK_PORT_READY:
		if (!until_ready)
			return guest_error(v, "snapshot point outside a snapshot's build");
		end_reason = val ? RUN_END_DECLINED : RUN_END_READY;
		return 0;
	case HUSK_PORT_SLEEP: {
		const char *err = NULL;
		if (guest_sleep(rep, dev, &err))
			return guest_error(v, err);
		return -1;
	}
	}
	return guest_error(v, "write to an unknown I/O port");
}

static int stopped(const struct run_limits *lim)
{
	switch (stop_requested()) {
	case STOP_PIPE:
		end_reason = RUN_END_OUTPUT;
		return 128 + SIGPIPE; /* like a program writing to a closed pipe */
	case STOP_OUTPUT:
		end_reason = RUN_END_OUTPUT;
		return EXIT_OUTPUT; /* the console said so on stderr */
	case STOP_CPU:
		end_reason = RUN_END_CPU;
		fprintf(stderr, "husk: CPU time limit of %g s reached; run stopped\n", lim->cpu_s);
		return EXIT_CPU;
	default:
		end_reason = RUN_END_TIMEOUT;
		fprintf(stderr, "husk: timed out after %g s; run stopped\n", lim->timeout_s);
		return EXIT_TIMEOUT;
	}
}

/* A time or CPU limit ends the program as SIGKILL would, inside the guest:
 * the guest kernel then writes what its file systems hold (the program's
 * last writes wait in its cache until a sync: a file written and closed
 * before the limit must come back), and exits.  It gets this long to; then,
 * or if it does not cooperate, it is stopped as it is. */
#define FINISH_GRACE_MS 500

/* The stop asked for now ends the run (its status), or -1: the guest is
 * given its grace to finish (*finishing set; stop_now says when it is over). */
static int stop_or_finish(const struct run_limits *lim, int *finishing, int *finish_status)
{
	enum stop_reason r = stop_requested();
	if (*finishing)
		return stop_now() ? *finish_status : -1;
	if ((r != STOP_TIMEOUT && r != STOP_CPU) || until_ready)
		return stopped(lim);
	*finish_status = stopped(lim);
	*finishing = 1;
	stop_finish(FINISH_GRACE_MS); /* the devices serve it meanwhile */
	__atomic_or_fetch(&host_signals, 1 << (SIGKILL - 1), __ATOMIC_SEQ_CST);
	return -1;
}

int run_guest(struct vm *v, struct run_devices *dev, const struct run_limits *lim, int syscall_stats,
	      struct husk_report *rep)
{
	struct kvm_run *run = v->run;
	double timeout_s = lim->timeout_s;
	running = run;
	until_ready = lim->until_ready;
	if (timeout_s > 0)
		arm_timeout(timeout_s);
	int status = -1;
	int copied = 0; /* *rep is the report as the guest left it: no KVM_RUN since */
	int finishing = 0; /* a limit was reached: the guest is given time to finish */
	int finish_status = 0;
	while (status < 0) {
		if (stop_requested() && (status = stop_or_finish(lim, &finishing, &finish_status)) >= 0)
			break;
		const char *err = NULL;
		if (take_events(v, dev, &err)) {
			fprintf(stderr, "husk: guest misbehaved: %s; run stopped\n", err);
			status = EXIT_GUEST_ERROR;
			break;
		}
		copied = 0;
		if (finishing) /* the limit's timer signal stops KVM_RUN again (REPEAT) */
			run->immediate_exit = 0;
		if (ioctl(v->vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "husk: KVM_RUN: %s\n", strerror(errno));
			status = EXIT_INTERNAL;
			break;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (finishing && (run->io.port == HUSK_PORT_EXIT || run->io.port == HUSK_PORT_FAULT)) {
				copy_report(v, rep); /* finished: the run ended by its limit */
				status = finish_status;
			} else {
				status = handle_port(v, dev, rep);
			}
			copied = 1;
			break;
		case KVM_EXIT_MMIO:
			if (handle_mmio(v, dev))
				status = EXIT_GUEST_ERROR;
			break;
		case KVM_EXIT_SHUTDOWN:
			fprintf(stderr, "husk: guest kernel crashed (triple fault)\n");
			status = EXIT_PANIC;
			break;
		case KVM_EXIT_HLT:
			fprintf(stderr, "husk: guest halted without exiting\n");
			status = EXIT_PANIC;
			break;
		case KVM_EXIT_INTERNAL_ERROR:
			status = internal_error(v);
			break;
		default:
			fprintf(stderr, "husk: unexpected KVM exit %u\n", run->exit_reason);
			status = EXIT_INTERNAL;
		}
	}
	running = NULL;
	disarm_timers(timeout_s);
	/* The run's last view of the report, for --syscalls and the caller: a
	 * port exit that ended the run has just taken it. */
	if (!copied)
		copy_report(v, rep);
	if (syscall_stats)
		print_syscalls(rep);
	return status;
}
