/* SPDX-License-Identifier: GPL-2.0-only */
/* Namespaces and an empty root for the VMM, where the host allows them.
 * husk forks before the VM exists: the parent stays behind as a small
 * supervisor (confined to waiting and forwarding a kill) and the child, the
 * VMM, is pid 1 of a new pid namespace, in mount, network, IPC and UTS
 * namespaces of husk's own (made once and kept in /run/husk/ns, or new for
 * the run where they cannot be kept); just before the first KVM_RUN its
 * root becomes an empty read-only tmpfs.  What it got is recorded, never
 * assumed. */
#ifndef HUSK_ISOLATE_H
#define HUSK_ISOLATE_H
#include <stddef.h>

struct isolation {
	int namespaces;   /* CLONE_NEW* flags the VMM is in */
	int empty_root;
	int shared;       /* mnt, net, ipc, uts are the kept ones */
	int mnt_fd;       /* the kept mount namespace, until joined */
	char why[160];    /* why something was not had, "" if everything was */
};

/* Returns 0 in the VMM (a new process if namespaces are allowed; the
 * caller's process becomes the supervisor and exits as the VMM does), -1
 * with a reason in err if the fork failed. */
int isolate_vmm(struct isolation *iso, char *err, size_t errlen);
/* Into an empty root: after the last file the VMM opens. */
void isolate_root(struct isolation *iso);
/* Fills names ("pid", "mnt", "net", "ipc", "uts": room for 5) with the
 * namespaces the VMM is in; returns how many. */
int isolation_names(const struct isolation *iso, const char **names);
#endif
