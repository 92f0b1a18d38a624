/* Runs the vCPU until the guest ends the run, and turns that into an exit status. */
#ifndef HUSK_RUN_H
#define HUSK_RUN_H
#include "husk/abi.h"
#include "virtio_mmio.h"
#include "vm.h"

struct run_devices {
	struct virtio_mmio *mmio[HUSK_MMIO_MAX];
	int n;
};

struct run_limits {
	double timeout_s;   /* wall clock; 0: none */
	double cpu_s;       /* CPU time of the VMM, the vCPU's included; 0: none */
};

/* Signal handlers and the CPU-time timer: before the VMM is confined. */
void run_prepare(const struct run_limits *lim);
/* Why the run ended: exit, timeout, cpu, output, crash, panic, error. */
const char *run_end_reason(void);
int run_guest(struct vm *v, struct run_devices *dev, const struct run_limits *lim, int syscall_stats);
#endif
