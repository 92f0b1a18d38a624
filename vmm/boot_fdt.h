/* SPDX-License-Identifier: GPL-2.0-only */
/* The boot information handed to the guest kernel: a flattened device tree. */
#ifndef HUSK_BOOT_FDT_H
#define HUSK_BOOT_FDT_H
#include <stddef.h>
#include <stdint.h>
#include "husk/abi.h"
#include "husk/boot_tree.h"

/* A virtio-mmio device: a console serving one guest fd, a disk, or the
 * network. */
struct boot_device {
	uint64_t mmio;
	int fd;             /* console: the guest fd it serves; else -1 */
	const char *mount;  /* disk: where the guest mounts it */
	int read_only;
	int network;        /* the network's device */
};

struct boot_params {
	uint64_t ram_size;
	char *const *argv;
	int argc;
	char *const *envv;
	int envc;
	uint64_t entry, phdr, phnum, image_end;
	uint64_t wall_ns, mono_ns, tsc, tsc_khz;
	uint8_t seed[HUSK_DT_SEED_LEN];
	int tty[3];
	uint16_t rows, cols;
	int selftest;
	int loopback;          /* AF_INET sockets between the guest's processes (--net-loopback, --allow-net) */
	uint32_t open_files;
	uint32_t pids;
	struct boot_device dev[HUSK_MMIO_MAX];
	int ndev;
	const char *script_name;       /* a script for /workdir, or NULL: */
	uint64_t script_gpa, script_size; /* in guest RAM, */
	const void *script_data;       /* or (not NULL) in the tree: these script_size bytes */
	int snapshot;                  /* HUSK_SNAPSHOT_*: the boot stops at the snapshot point; 0: none */
};

/* Writes the tree into buf.  Returns 0, or -1 with a reason in err. */
int boot_fdt_build(void *buf, size_t size, const struct boot_params *p, char *err, size_t errlen);
#endif
