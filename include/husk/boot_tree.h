/* SPDX-License-Identifier: GPL-2.0-only */
/* The boot device tree the VMM writes (vmm/boot_fdt.c) and the guest kernel
 * reads (guest/arch/bootinfo.c): node and property names and what each holds.
 * Numbers are big-endian cells, as in every device tree. */
#ifndef HUSK_BOOT_TREE_H
#define HUSK_BOOT_TREE_H

#define HUSK_DT_COMPATIBLE     "husk,microvm"
#define HUSK_DT_MEMORY         "memory@0"      /* reg = <u64 base, u64 size> */
#define HUSK_DT_CHOSEN         "chosen"

/* In /chosen */
#define HUSK_DT_PROGRAM        "husk,program"  /* u64 entry, phdr, phnum, image_end */
#define HUSK_DT_PROGRAM_LEN    32
#define HUSK_DT_CLOCK          "husk,clock"    /* u64 wall_ns, mono_ns, tsc, tsc_khz */
#define HUSK_DT_CLOCK_LEN      32
#define HUSK_DT_SEED           "rng-seed"      /* bytes for the guest's getrandom */
#define HUSK_DT_SEED_LEN       32
#define HUSK_DT_TTY            "husk,tty"      /* u32 per stdin/out/err: 1 if a terminal */
#define HUSK_DT_TTY_LEN        12
#define HUSK_DT_WINSIZE        "husk,winsize"  /* u32 rows, cols */
#define HUSK_DT_WINSIZE_LEN    8
#define HUSK_DT_OPEN_FILES     "husk,open-files" /* u32: the program's RLIMIT_NOFILE */
#define HUSK_DT_PIDS           "husk,pids"     /* u32: threads and processes alive at once, at least 1 */
#define HUSK_PIDS_DEFAULT      256             /* husk,pids when husk --pids is not given or the property is absent */
#define HUSK_DT_SELFTEST       "husk,selftest" /* empty: run the kernel self-test */
#define HUSK_DT_LOOPBACK       "husk,loopback" /* empty: AF_INET/AF_INET6 sockets on the guest's loopback */
#define HUSK_DT_ARGV           "husk,argv"     /* NUL-separated strings */
#define HUSK_DT_ENVP           "husk,envp"     /* NUL-separated strings */
/* Optional: a host file named on the command line, copied by the VMM into
 * guest RAM at a page boundary above the program's image; the guest kernel
 * moves it into the scratch /workdir under this name and frees the pages. */
#define HUSK_DT_SCRIPT         "husk,script"   /* u64 gpa, size */
#define HUSK_DT_SCRIPT_LEN     16
#define HUSK_DT_SCRIPT_NAME    "husk,script-name" /* a file name: no '/', not . or .. */
/* Or the script's bytes in the tree itself, in place of husk,script: a run
 * restored from a snapshot, whose program arena is no longer free. */
#define HUSK_DT_SCRIPT_DATA    "husk,script-data"
/* Optional, u32: this boot builds a snapshot (guest/sys/snapshot.c), and
 * where the VM stops for it: HUSK_SNAPSHOT_* (husk/abi.h). */
#define HUSK_DT_SNAPSHOT       "husk,snapshot"

/* One node per device, "virtio_mmio@ADDR", reg = <u64 base, u64 HUSK_MMIO_SIZE> */
#define HUSK_DT_VIRTIO_MMIO    "virtio,mmio"   /* its compatible */
#define HUSK_DT_FD             "husk,fd"       /* u32: a console, for this fd */
#define HUSK_DT_MOUNT          "husk,mount"    /* a disk: where to mount it */
#define HUSK_DT_READ_ONLY      "husk,read-only" /* empty: the disk is read-only */
#define HUSK_DT_NETWORK        "husk,network"  /* empty: the filtered network's device */

#endif
