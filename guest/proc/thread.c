/* SPDX-License-Identifier: GPL-2.0-only */
/* Threads (thread.h).  clone makes a task that starts where the caller's
 * `syscall` returns, with rax 0 on its own stack: what musl's and glibc's
 * clone wrappers expect.  A clone that makes a process (fork's flags, or
 * vfork's: CLONE_VM|CLONE_VFORK) goes to process.c. */
#include <errno.h>
#include "kernel.h"
#include "linux_abi.h"
#include "linux_syscall.h"
#include "fs/file.h"
#include "fs/vfs.h"
#include "proc/futex.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/thread.h"

#define THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD)
#define THREAD_EXTRAS (CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | \
		       CLONE_DETACHED | CLONE_CHILD_SETTID)
#define PROCESS_EXTRAS (CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID)
#define ROBUST_LIST_HEAD_SIZE 24

/* The caller's registers as its `syscall` returns them: the instruction's
 * frame, or for a fast-entry call what a SysV call preserves. */
struct user_regs caller_regs(void)
{
	if (current->frame)
		return *current->frame;
	const uint64_t *f = fast_frame;
	uint64_t flags;
	__asm__ volatile("pushfq; pop %0" : "=r"(flags));
	return (struct user_regs){ .r15 = f[0], .r14 = f[1], .r13 = f[2], .r12 = f[3], .rbx = f[4], .rbp = f[5],
				   .rip = f[6], .rsp = (uintptr_t)(f + 7), .rflags = flags };
}

long sys_clone(unsigned long flags, uint64_t stack, uint32_t *ptid, uint32_t *ctid, uint64_t tls)
{
	if (((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND)) || ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM)))
		return -EINVAL;
	if (!(flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_FILES | CLONE_FS)) &&
	    ((flags & ~0xfful) & ~(CLONE_VM | CLONE_VFORK | PROCESS_EXTRAS)) == 0 &&
	    !!(flags & CLONE_VM) == !!(flags & CLONE_VFORK))
		return process_clone(flags, stack, ptid, ctid);
	if ((flags & THREAD_FLAGS) != THREAD_FLAGS) { /* sharing only some: counted as not implemented */
		REPORT->enosys[SYS_clone]++;
		return -ENOSYS;
	}
	if (flags & ~(THREAD_FLAGS | THREAD_EXTRAS | 0xff))
		return -EINVAL;
	if (((flags & CLONE_PARENT_SETTID) && !user_ok(ptid, 4)) ||
	    ((flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) && !user_ok(ctid, 4)))
		return -EFAULT;
	if ((flags & CLONE_SETTLS) && tls >= 1ull << 47)
		return -EPERM;
	struct user_regs r = caller_regs();
	r.rax = 0;
	if (stack)
		r.rsp = stack;
	struct task *t = task_create(&r, flags & CLONE_SETTLS ? tls : fs_base_read(), current->proc);
	if (!t)
		return -EAGAIN;
	if (flags & CLONE_PARENT_SETTID)
		*ptid = (uint32_t)t->tid;
	if (flags & CLONE_CHILD_SETTID)
		*ctid = (uint32_t)t->tid;
	if (flags & CLONE_CHILD_CLEARTID)
		t->clear_tid = ctid;
	return t->tid;
}

/* The thread ends: its clear_tid word zeroed and woken (pthread_join waits
 * on it); the last thread's exit ends the process. */
_Noreturn void sys_exit(int code)
{
	uint32_t *p = current->clear_tid;
	if (p && user_ok(p, 4) && (uintptr_t)p % 4 == 0) {
		*p = 0;
		futex_wake(p, 1);
	}
	task_exit(code & 0xff);
}

/* musl's detached threads end with munmap of their own stack and then
 * SYS_exit, both by the `syscall` instruction (__unmapself): the way back
 * from the munmap still stages its return below the stack pointer, so that
 * stack goes when the thread ends. */
long sys_munmap(uintptr_t addr, size_t len)
{
	uint64_t sp = caller_regs().rsp;
	if (len && addr + len > addr && sp > addr && sp - 256 < addr + len && !current->unmap_at_exit[1]) {
		long r = addr % PAGE_SIZE ? -EINVAL : 0;
		if (!r)
			current->unmap_at_exit[0] = addr, current->unmap_at_exit[1] = len;
		return r;
	}
	return mem_munmap(addr, len);
}

long sys_set_tid_address(uint32_t *p)
{
	current->clear_tid = p;
	return current->tid;
}

/* Stored and reported; a dying thread's robust mutexes are not marked
 * (a thread only dies with its process, or by its own exit). */
long sys_set_robust_list(uint64_t head, uint64_t len)
{
	if (len != ROBUST_LIST_HEAD_SIZE)
		return -EINVAL;
	current->robust_list = head, current->robust_len = len;
	return 0;
}

long sys_get_robust_list(long tid, uint64_t *head, uint64_t *len)
{
	struct task *t = tid ? task_by_tid((int)tid) : current;
	if (!t)
		return -ESRCH;
	if (!user_ok(head, 8) || !user_ok(len, 8))
		return -EFAULT;
	*head = t->robust_list, *len = ROBUST_LIST_HEAD_SIZE;
	return 0;
}

long sys_arch_prctl(long code, uint64_t addr)
{
	if (code == ARCH_SET_FS) {
		if (addr >= 1ull << 47)
			return -EPERM;
		current->fs_base = addr;
		fs_base_write(addr);
		return 0;
	}
	if (code == ARCH_GET_FS) {
		if (!user_ok((void *)addr, 8))
			return -EFAULT;
		*(uint64_t *)addr = fs_base_read();
		return 0;
	}
	return -EINVAL;
}
