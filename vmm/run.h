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

/* Signal handlers: before the VMM is confined. */
void run_prepare(void);
int run_guest(struct vm *v, struct run_devices *dev, double timeout_s, int syscall_stats);
#endif
