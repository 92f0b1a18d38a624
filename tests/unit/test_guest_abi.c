/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest kernel's Linux ABI headers (guest/include: errno.h, limits.h,
 * linux_abi.h, linux_syscall.h) against the host's: every constant they
 * define must have the value Linux x86-64 gives it.
 *
 * Both sets of headers define the same names, so this file is compiled
 * twice: with GUEST_SIDE and guest/include first on the path it records the
 * guest's values; without, it compares them with the host's.  The list of
 * names, guest_abi_names.h, is generated from the guest headers by the
 * Makefile (one X(NAME) per #define), so a new constant is checked without
 * being listed here; one the host's headers below lack fails the build. */
#include <stddef.h>
#include <string.h>

size_t guest_abi_values(long long *out, size_t max);

#ifdef GUEST_SIDE
#include <errno.h>
#include <limits.h>
#include "linux_abi.h"
#include "linux_syscall.h"

size_t guest_abi_values(long long *out, size_t max)
{
	const long long v[] = {
#define X(name) (long long)(name),
#include "guest_abi_names.h"
#undef X
	};
	size_t n = sizeof v / sizeof v[0];
	memcpy(out, v, (n < max ? n : max) * sizeof v[0]);
	return n;
}
#else
#include <asm/hwcap2.h>
#include <asm/prctl.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ext2.h"
#include "tap.h"

/* Linux's own, not in the headers programs see */
#define ERESTARTSYS 512     /* include/linux/errno.h */
#define MEMFD_NAME_MAX 249  /* mm/memfd.c: NAME_MAX less "memfd:" */
#undef MINSIGSTKSZ          /* glibc's is sysconf(_SC_MINSIGSTKSZ) since 2.34 */
#define MINSIGSTKSZ 2048    /* arch/x86/include/uapi/asm/signal.h */

static const struct {
	const char *name;
	long long value;
} host[] = {
#define X(name) { #name, (long long)(name) },
#include "guest_abi_names.h"
#undef X
};

int main(void)
{
	enum { N = sizeof host / sizeof host[0] };
	long long guest[N + 1];
	size_t n = guest_abi_values(guest, N + 1);
	ok(n == N && N > 200, "both sides list the same %d constants", (int)N);
	for (size_t i = 0; i < N && i < n; i++)
		ok(guest[i] == host[i].value, "%s: guest %#llx, host %#llx", host[i].name, guest[i], host[i].value);

	/* ext2.h's prefixed copies, which fs_ext2.c passes through unconverted */
	ok(EXT2_S_IFMT == S_IFMT && EXT2_S_IFSOCK == S_IFSOCK && EXT2_S_IFLNK == S_IFLNK &&
	   EXT2_S_IFREG == S_IFREG && EXT2_S_IFBLK == S_IFBLK && EXT2_S_IFDIR == S_IFDIR &&
	   EXT2_S_IFCHR == S_IFCHR && EXT2_S_IFIFO == S_IFIFO, "ext2.h: EXT2_S_IF* are Linux's S_IF*");
	ok(EXT2_DT_UNKNOWN == DT_UNKNOWN && EXT2_DT_FIFO == DT_FIFO && EXT2_DT_CHR == DT_CHR &&
	   EXT2_DT_DIR == DT_DIR && EXT2_DT_BLK == DT_BLK && EXT2_DT_REG == DT_REG &&
	   EXT2_DT_LNK == DT_LNK && EXT2_DT_SOCK == DT_SOCK, "ext2.h: EXT2_DT_* are Linux's DT_*");
	return tap_done();
}
#endif
