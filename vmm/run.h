/* SPDX-License-Identifier: GPL-2.0-only */
/* Runs the vCPU until the guest ends the run, and turns that into an exit status. */
#ifndef HUSK_RUN_H
#define HUSK_RUN_H
#include "husk/abi.h"
#include "devices/virtio_mmio.h"
#include "vm.h"

struct console;
struct net_stream;
struct run_devices {
	struct virtio_mmio *mmio[HUSK_MMIO_MAX];
	int n;
	struct console *input; /* stdin's: a sleeping guest wakes for its input */
	struct net_stream *net; /* the network's, or NULL: what the broker sends wakes the guest */
};

struct run_limits {
	double timeout_s;   /* wall clock; 0: none */
	double cpu_s;       /* CPU time of the VMM, the vCPU's included; 0: none */
	int supervised;     /* a supervisor passes stop signals on (sandbox/isolate.c) */
	int until_ready;    /* a boot that builds a snapshot: it ends at the snapshot point */
};

/* Why the run ended, for the audit record and --stats. */
enum run_end {
	RUN_END_ERROR,   /* husk or KVM failed, the guest broke the protocol or crashed its kernel */
	RUN_END_EXIT,    /* the program exited */
	RUN_END_CRASH,   /* the program was killed by a fault or a signal */
	RUN_END_PANIC,   /* the guest kernel panicked */
	RUN_END_TIMEOUT, /* --timeout */
	RUN_END_CPU,     /* --cpu-time */
	RUN_END_OUTPUT,  /* --output-limit, or the host closed stdout or stderr */
	RUN_END_MEMORY,  /* not set by the run: main's verdict on an exit or crash after ENOMEM */
	RUN_END_READY,   /* until_ready: the VM is at its snapshot point */
	RUN_END_DECLINED, /* until_ready: the guest can take no snapshot (report.msg says why) */
};

/* Signal handlers and the CPU-time timer: before the VMM is confined. */
void run_prepare(const struct run_limits *lim);
/* The network broker's socket signals (SIGIO) when it has messages for the
 * guest: KVM_RUN returns and they go into the receive queue at once.
 * Before the VMM is confined. */
void run_watch_net(int broker_fd);
/* Whether a stop signal of the host's (Ctrl-C...) has been passed to the
 * guest: a snapshot's boot that saw one is not saved (the snapshot would
 * carry it to every run). */
int run_host_signals_seen(void);
/* Why run_guest ended. */
enum run_end run_end_reason(void);
/* Its name in the audit record: "exit", "timeout", ... */
const char *run_end_name(enum run_end r);
/* Runs the guest to the end of the run and returns husk's status.  *rep:
 * the guest's report page as the run left it, copied out of guest memory
 * (the guest's counts: for the record, not trusted for anything). */
int run_guest(struct vm *v, struct run_devices *dev, const struct run_limits *lim, int syscall_stats,
	      struct husk_report *rep);
#endif
