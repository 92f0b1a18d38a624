/* SPDX-License-Identifier: GPL-2.0-only */
/* futex(2): what musl's and glibc's threads, locks and condition variables
 * use (WAIT, WAKE, their BITSET forms, REQUEUE, CMP_REQUEUE, WAKE_OP; no
 * priority inheritance).  Waiters are blocked tasks whose `futex` and
 * `futex_at` name the word. */
#include <errno.h>
#include "kernel.h"
#include "mm/mm.h"
#include "mm/pmem.h"
#include "proc/futex.h"
#include "proc/sched.h"

#define FUTEX_WAIT           0
#define FUTEX_WAKE           1
#define FUTEX_REQUEUE        3
#define FUTEX_CMP_REQUEUE    4
#define FUTEX_WAKE_OP        5
#define FUTEX_WAIT_BITSET    9
#define FUTEX_WAKE_BITSET    10
#define FUTEX_PRIVATE        128
#define FUTEX_CLOCK_REALTIME 256
#define BITSET_ANY           0xffffffffu

struct timespec_k { int64_t sec, nsec; };

static int word_ok(const uint32_t *a)
{
	return (uintptr_t)a % 4 == 0 && user_ok(a, 4);
}

/* A futex is its word in its address space, as Linux's private keys: a
 * fork's copy of a word at the same address is another futex, and a word
 * stays the same futex when a write copies its page after a fork (the
 * physical address changes then).  A word in a shared mapping is its
 * physical page's, which processes share at any address. */
struct key { const void *space; uintptr_t at; };
static const char physical; /* the space of words in shared mappings */

static struct key key(const uint32_t *a)
{
	if (!mm_is_program((uintptr_t)a))
		return (struct key){ a, 0 }; /* the kernel's own (ipc/stream.c's queue) */
	if (mm_is_shared((uintptr_t)a))
		return (struct key){ &physical, (uintptr_t)virt_to_phys(a) };
	return (struct key){ mm_current, (uintptr_t)a };
}

/* Wakes (or, with to, moves to the futex `to`) at most n waiters of `a`
 * whose bitset meets `bits`, in task order from the caller on. */
static long for_waiters(const uint32_t *word, long n, uint32_t bits, const uint32_t *to_word)
{
	struct key a = key(word), to = to_word ? key(to_word) : (struct key){ 0, 0 };
	long done = 0;
	struct task *t = current;
	do {
		t = t->next;
		if (done >= n)
			break;
		if (t->state != TASK_BLOCKED || t->futex != a.space || t->futex_at != a.at || !(t->futex_bitset & bits))
			continue;
		if (to.space)
			t->futex = to.space, t->futex_at = to.at;
		else
			sched_wake(t, 0);
		done++;
	} while (t != current);
	return done;
}

long futex_wake(const uint32_t *a, long n)
{
	return for_waiters(a, n, BITSET_ANY, 0);
}

/* The deadline in monotonic ns for a timeout (0: none): relative for WAIT,
 * absolute for WAIT_BITSET on the clock the op names. */
static long deadline_of(const struct timespec_k *ts, int absolute, int realtime, uint64_t *out)
{
	if (!absolute)
		return deadline_ts((const int64_t *)ts, out);
	*out = 0;
	if (!ts)
		return 0;
	if (!user_ok(ts, sizeof *ts))
		return -EFAULT;
	struct timespec_k t = *ts;
	if (t.sec < 0 || t.nsec < 0 || t.nsec >= NSEC_PER_SEC)
		return -EINVAL;
	if (t.sec > 9000000000ll)
		return 0; /* centuries: as good as none */
	uint64_t ns = (uint64_t)t.sec * NSEC_PER_SEC + (uint64_t)t.nsec;
	if (!realtime)
		*out = ns ? ns : 1;
	else {
		uint64_t wall = clock_wall_ns();
		*out = ns > wall ? clock_mono_ns() + (ns - wall) : 1; /* 1: passed already */
	}
	return 0;
}

static long wait(uint32_t *a, uint32_t val, const struct timespec_k *ts, int absolute, int realtime, uint32_t bits)
{
	uint64_t deadline;
	long r = deadline_of(ts, absolute, realtime, &deadline);
	if (r)
		return r;
	if (!bits)
		return -EINVAL;
	if (__atomic_load_n(a, __ATOMIC_SEQ_CST) != val)
		return -EAGAIN;
	struct key k = key(a);
	current->futex = k.space, current->futex_at = k.at;
	current->futex_bitset = bits;
	return sched_block(deadline, 1);
}

static int compare(uint32_t cmp, int32_t old, int32_t arg, int *res)
{
	switch (cmp) {
	case 0: *res = old == arg; return 0;
	case 1: *res = old != arg; return 0;
	case 2: *res = old < arg; return 0;
	case 3: *res = old <= arg; return 0;
	case 4: *res = old > arg; return 0;
	case 5: *res = old >= arg; return 0;
	}
	return -ENOSYS;
}

/* FUTEX_WAKE_OP: *a2 changed by the op encoded in val3; waiters of a woken,
 * and of a2 if the old value passes the encoded comparison. */
static long wake_op(uint32_t *a, long n, uint32_t *a2, long n2, uint32_t val3)
{
	if (!word_ok(a2))
		return -EFAULT;
	uint32_t op = val3 >> 28 & 15, cmp = val3 >> 24 & 15;
	int32_t oparg = (int32_t)(val3 << 8) >> 20, cmparg = (int32_t)(val3 << 20) >> 20;
	if (op & 8)
		oparg = (int32_t)(1u << (oparg & 31));
	int32_t old = (int32_t)*a2, now;
	switch (op & 7) {
	case 0: now = oparg; break;
	case 1: now = (int32_t)((uint32_t)old + (uint32_t)oparg); break;
	case 2: now = old | oparg; break;
	case 3: now = old & ~oparg; break;
	case 4: now = old ^ oparg; break;
	default: return -ENOSYS;
	}
	int pass;
	if (compare(cmp, old, cmparg, &pass))
		return -ENOSYS;
	*a2 = (uint32_t)now;
	long r = futex_wake(a, n);
	if (pass)
		r += futex_wake(a2, n2);
	return r;
}

long sys_futex(uint32_t *a, long op, uint32_t val, const void *timeout, uint32_t *a2, uint32_t val3)
{
	long cmd = op & ~(long)(FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME);
	int realtime = (op & FUTEX_CLOCK_REALTIME) != 0;
	if (realtime && cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return -ENOSYS;
	if ((uintptr_t)a % 4)
		return -EINVAL;
	if (!user_ok(a, 4))
		return -EFAULT;
	long n2 = (long)(uintptr_t)timeout; /* the second count, for the two-futex ops */
	switch (cmd) {
	case FUTEX_WAIT:
		return wait(a, val, timeout, 0, 0, BITSET_ANY);
	case FUTEX_WAIT_BITSET:
		return wait(a, val, timeout, 1, realtime, val3);
	case FUTEX_WAKE:
		return for_waiters(a, (int32_t)val < 0 ? 0 : val, BITSET_ANY, 0);
	case FUTEX_WAKE_BITSET:
		return val3 ? for_waiters(a, (int32_t)val < 0 ? 0 : val, val3, 0) : -EINVAL;
	case FUTEX_CMP_REQUEUE:
	case FUTEX_REQUEUE:
		if ((int32_t)val < 0 || n2 < 0)
			return -EINVAL;
		if (!word_ok(a2))
			return -EFAULT;
		if (cmd == FUTEX_CMP_REQUEUE && __atomic_load_n(a, __ATOMIC_SEQ_CST) != val3)
			return -EAGAIN;
		return for_waiters(a, val, BITSET_ANY, 0) + for_waiters(a, n2, BITSET_ANY, a2);
	case FUTEX_WAKE_OP:
		return wake_op(a, val, a2, n2, val3);
	}
	return -ENOSYS;
}
