/* expected: every dangerous raw syscall (ptrace, mount, kexec_load, reboot, bpf, perf_event_open, io_uring_setup, init_module, chroot, ...) returns -1 with ENOSYS or EPERM (kill(-1): ESRCH, no other process): "0 unexpected", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
/* (setuid and setgid are not here: a process's ids are kept and checked as Linux's, proc/creds.c, and
 * change nothing outside the guest.) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	static const struct {
		const char *name;
		long nr, a[6];
	} calls[] = {
		{ "ptrace", SYS_ptrace, { 16 /* PTRACE_ATTACH */, 1 } },
		{ "mount", SYS_mount, { (long)"none", (long)"/tmp", (long)"tmpfs", 0, 0 } },
		{ "umount2", SYS_umount2, { (long)"/usr", 2 } },
		{ "kexec_load", SYS_kexec_load, { 0, 0, 0, 0 } },
		{ "reboot", SYS_reboot, { 0xfee1dead, 672274793, 0x4321fedc /* POWER_OFF */ } },
		{ "bpf", SYS_bpf, { 0, 0, 0 } },
		{ "perf_event_open", SYS_perf_event_open, { 0, 0, -1, -1, 0 } },
		{ "io_uring_setup", SYS_io_uring_setup, { 8, 0 } },
		{ "init_module", SYS_init_module, { 0, 0, (long)"" } },
		{ "finit_module", SYS_finit_module, { 0, (long)"", 0 } },
		{ "delete_module", SYS_delete_module, { (long)"kvm", 0 } },
		{ "chroot", SYS_chroot, { (long)"/tmp" } },
		{ "pivot_root", SYS_pivot_root, { (long)"/tmp", (long)"/tmp" } },
		{ "unshare", SYS_unshare, { 0x10000000 /* CLONE_NEWUSER */ } },
		{ "setns", SYS_setns, { 0, 0 } },
		{ "kill(-1, SIGKILL)", SYS_kill, { -1, 9 } },
		{ "iopl", SYS_iopl, { 3 } },
		{ "ioperm", SYS_ioperm, { 0, 0x10000, 1 } },
		{ "modify_ldt", SYS_modify_ldt, { 1, 0, 0 } },
		{ "process_vm_writev", SYS_process_vm_writev, { 1, 0, 0, 0, 0, 0 } },
		{ "keyctl", SYS_keyctl, { 0 } },
		{ "userfaultfd", SYS_userfaultfd, { 0 } },
		{ "swapon", SYS_swapon, { (long)"/dev/zero", 0 } },
		{ "settimeofday", SYS_settimeofday, { 0, 0 } },
		{ "syslog", SYS_syslog, { 3, 0, 0 } },
		{ "seccomp", SYS_seccomp, { 0, 0, 0 } },
		{ "syscall 1000", 1000, { 0 } },
		{ "syscall -1", -1, { 0 } },
		{ "syscall 0x40000000 (x32)", 0x40000000, { 0 } },
	};
	int bad = 0;
	for (unsigned i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		errno = 0;
		long r = syscall(calls[i].nr, calls[i].a[0], calls[i].a[1], calls[i].a[2],
				 calls[i].a[3], calls[i].a[4], calls[i].a[5]);
		/* kill(-1) reaches every process but the caller: there is none (ESRCH) */
		int e = errno, good = r == -1 && (e == ENOSYS || e == EPERM || (calls[i].nr == SYS_kill && e == ESRCH));
		printf("%-26s -> %ld %s%s\n", calls[i].name, r,
		       e == ENOSYS ? "ENOSYS" : e == EPERM ? "EPERM" : strerror(e), good ? "" : "  UNEXPECTED");
		bad += !good;
	}
	printf("%d unexpected\n", bad);
	return bad != 0;
}
