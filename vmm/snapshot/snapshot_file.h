/* SPDX-License-Identifier: GPL-2.0-only */
/* A snapshot file: a VM stopped at its snapshot point (guest/sys/snapshot.c)
 * as husk wrote it.  A header, the vCPU's and devices' state, the guest
 * memory's non-zero extents and their bytes, page-aligned for mapping.
 *
 * A file is only ever read back by the husk build that wrote it, for the
 * same CPU and the same boot (the key).  It is checked before anything in it
 * is used: its owner and mode, every count and extent, and a keyed digest
 * (HMAC-SHA256, the key in the snapshot directory, readable by its owner
 * only) over all of it.  Computing that digest over the memory costs ~10 ms
 * per 20 MB, more than a restore, so it is computed when the file is
 * written and when the file is first opened after any change, and a stamp
 * beside it (NAME.ok, itself keyed) records that this inode, size, mtime and
 * ctime carry a verified digest: a file modified since has a new ctime and
 * is verified again. */
#ifndef HUSK_SNAPSHOT_FILE_H
#define HUSK_SNAPSHOT_FILE_H
#include <stddef.h>
#include <stdint.h>
#include "devices/virtio_mmio.h"
#include "guest_mem.h"
#include "snapshot/vcpu_state.h"

#define SNAPSHOT_DEVICES 8        /* devices a snapshot may hold: the consoles and the system disk */
#define SNAPSHOT_MAX_EXTENTS 65536
#define SNAPSHOT_MAC_KEY 32

/* What a snapshot is of: it is restored only where all of this is the run's. */
struct snapshot_key {
	uint8_t build_id[20];  /* husk's (the linker's build ID) */
	uint8_t cpuid[32];     /* SHA-256 of the CPUID table the vCPU had */
	uint8_t boot[32];      /* SHA-256 of what was booted (snapshot.c) */
};

/* The machine at its snapshot point: plain data. */
struct snapshot_state {
	uint64_t ram_size;
	uint32_t pvm, fsgsbase;   /* how the VM was made (struct vm) */
	uint32_t level;           /* HUSK_SNAPSHOT_* */
	uint32_t ndev;            /* the first ndev MMIO windows, in order */
	uint64_t entry, phdr, phnum, image_end; /* the program loaded (the boot tree's husk,program) */
	struct virtio_mmio_state dev[SNAPSHOT_DEVICES];
	struct vcpu_state vcpu;
};

/* Guest memory [gpa, gpa + len) is the file's [off, off + len). */
struct snapshot_extent {
	uint64_t gpa, len, off;
};

/* An opened and checked snapshot. */
struct snapshot {
	int fd;
	struct snapshot_state state;
	struct snapshot_extent *ext;
	uint32_t next;
	int64_t created_ns;   /* when it was written (CLOCK_REALTIME) */
	uint64_t bytes;       /* the file's size */
};

/* Writes the snapshot of the VM whose memory is m as `name` in dir:
 * through a temporary file renamed into place (never a torn file), mode
 * 0600, then its stamp.  0, or -1 with a reason in err. */
int snapshot_write(int dir, const char *name, const uint8_t mac_key[SNAPSHOT_MAC_KEY], const struct snapshot_key *k,
		   const struct snapshot_state *st, const struct guest_mem *m, char *err, size_t errlen);
/* Opens `name` in dir and checks it (see above) against the key k.
 * Returns 0; 1 when there is no such file; -1 with a reason in err (a file
 * that must not be used: the caller removes it and says why). */
int snapshot_open(int dir, const char *name, const uint8_t mac_key[SNAPSHOT_MAC_KEY], const struct snapshot_key *k,
		  struct snapshot *s, char *err, size_t errlen);
/* Maps the snapshot's extents over guest memory m (made as large as the
 * snapshot's RAM): private, copy-on-write; the rest of m stays zero. */
int snapshot_map(const struct snapshot *s, struct guest_mem *m, char *err, size_t errlen);
void snapshot_close(struct snapshot *s);
/* Computes the digest of the snapshot file in fd, as it is, and writes it
 * in: for the tests and the fuzzer, a file changed on purpose yet sealed
 * as husk's.  0, or -1. */
int snapshot_file_seal(int fd, const uint8_t mac_key[SNAPSHOT_MAC_KEY]);
/* The stamp's name for a snapshot's name. */
#define SNAPSHOT_STAMP_SUFFIX ".ok"
#endif
