/* SPDX-License-Identifier: GPL-2.0-only */
/* User and group ids (creds.h), with Linux's rules for who may set what:
 * an effective uid of 0 may set any id, others only among their own. */
#include <errno.h>
#include <string.h>
#include "kernel.h"
#include "linux_syscall.h"
#include "proc/creds.h"
#include "proc/process.h"
#include "proc/sched.h"

#define KEEP ((uint32_t)-1) /* an id given as -1: left as it is */
enum { REAL, EFFECTIVE, SAVED };

static struct creds *mine(void)
{
	return &current->proc->creds;
}

static int privileged(void)
{
	return mine()->uid[EFFECTIVE] == 0;
}

static int one_of(const uint32_t *ids, uint32_t id)
{
	return id == ids[REAL] || id == ids[EFFECTIVE] || id == ids[SAVED];
}

/* setresuid/setresgid: each id given must be one of the three already,
 * unless privileged. */
static long set_res(uint32_t *ids, uint32_t r, uint32_t e, uint32_t s)
{
	const uint32_t want[3] = { r, e, s };
	for (int i = 0; i < 3; i++)
		if (want[i] != KEEP && !privileged() && !one_of(ids, want[i]))
			return -EPERM;
	for (int i = 0; i < 3; i++)
		if (want[i] != KEEP)
			ids[i] = want[i];
	return 0;
}

/* setuid/setgid: privileged, all three; else the effective one, to the
 * real or saved one. */
static long set_one(uint32_t *ids, uint32_t id)
{
	if (privileged()) {
		ids[REAL] = ids[EFFECTIVE] = ids[SAVED] = id;
		return 0;
	}
	if (id != ids[REAL] && id != ids[SAVED])
		return -EPERM;
	ids[EFFECTIVE] = id;
	return 0;
}

/* setreuid/setregid: the real one to the real or effective, the effective
 * to any of the three; the saved one follows the new effective one when
 * the real one is set or the effective one leaves the old real one. */
static long set_re(uint32_t *ids, uint32_t r, uint32_t e)
{
	if (!privileged() && ((r != KEEP && r != ids[REAL] && r != ids[EFFECTIVE]) ||
			      (e != KEEP && !one_of(ids, e))))
		return -EPERM;
	uint32_t old_real = ids[REAL];
	if (r != KEEP)
		ids[REAL] = r;
	if (e != KEEP)
		ids[EFFECTIVE] = e;
	if (r != KEEP || (e != KEEP && e != old_real))
		ids[SAVED] = ids[EFFECTIVE];
	return 0;
}

static long get_res(const uint32_t *ids, uint32_t *r, uint32_t *e, uint32_t *s)
{
	if (!user_ok(r, 4) || !user_ok(e, 4) || !user_ok(s, 4))
		return -EFAULT;
	*r = ids[REAL], *e = ids[EFFECTIVE], *s = ids[SAVED];
	return 0;
}

static long get_groups(long size, uint32_t *list)
{
	struct creds *c = mine();
	if (size < 0)
		return -EINVAL;
	if (!size)
		return c->ngroups;
	if (size < c->ngroups)
		return -EINVAL;
	if (!user_ok(list, (size_t)c->ngroups * 4))
		return -EFAULT;
	memcpy(list, c->groups, (size_t)c->ngroups * 4);
	return c->ngroups;
}

static long set_groups(long n, const uint32_t *list)
{
	struct creds *c = mine();
	if (!privileged())
		return -EPERM;
	if (n < 0 || n > NGROUPS_KEPT)
		return -EINVAL; /* Linux takes up to 65536; a program needing more than 64 is not expected */
	if (n && !user_ok(list, (size_t)n * 4))
		return -EFAULT;
	memcpy(c->groups, list, (size_t)n * 4);
	c->ngroups = (int)n;
	return 0;
}

int creds_may_fork(const struct creds *c, uint64_t limit)
{
	uint64_t n = 0;
	if (!c->uid[REAL])
		return 1;
	for (struct process *p = processes; p; p = p->next)
		if (!p->zombie && p->creds.uid[REAL] == c->uid[REAL])
			n += (uint64_t)p->threads;
	return n < limit;
}

long creds_syscall(long nr, long a1, long a2, long a3)
{
	struct creds *c = mine();
	uint32_t x = (uint32_t)a1, y = (uint32_t)a2, z = (uint32_t)a3;
	switch (nr) {
	case SYS_getuid: return c->uid[REAL];
	case SYS_geteuid: return c->uid[EFFECTIVE];
	case SYS_getgid: return c->gid[REAL];
	case SYS_getegid: return c->gid[EFFECTIVE];
	case SYS_getresuid: return get_res(c->uid, (uint32_t *)a1, (uint32_t *)a2, (uint32_t *)a3);
	case SYS_getresgid: return get_res(c->gid, (uint32_t *)a1, (uint32_t *)a2, (uint32_t *)a3);
	case SYS_setuid: return set_one(c->uid, x);
	case SYS_setgid: return set_one(c->gid, x);
	case SYS_setreuid: return set_re(c->uid, x, y);
	case SYS_setregid: return set_re(c->gid, x, y);
	case SYS_setresuid: return set_res(c->uid, x, y, z);
	case SYS_setresgid: return set_res(c->gid, x, y, z);
	case SYS_getgroups: return get_groups(a1, (uint32_t *)a2);
	case SYS_setgroups: return set_groups(a1, (const uint32_t *)a2);
	}
	return -ENOSYS;
}
