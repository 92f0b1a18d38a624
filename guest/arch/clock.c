/* SPDX-License-Identifier: GPL-2.0-only */
/* Time without exits: the VMM's (wall, monotonic, TSC) triple taken at boot,
 * advanced by rdtsc at the TSC frequency it reported. */
#include <errno.h>
#include "arch/cpu.h"
#include "kernel.h"

static uint64_t ns_per_tick_32; /* ns per TSC tick, 32.32 fixed point */

void clock_init(void)
{
	if (!boot.tsc_khz)
		panic("boot device tree: TSC frequency is 0");
	ns_per_tick_32 = (1000000ull << 32) / boot.tsc_khz;
}

uint64_t clock_since_boot_ns(void)
{
	uint64_t now = rdtsc();
	uint64_t delta = now > boot.tsc ? now - boot.tsc : 0;
	return (uint64_t)(((unsigned __int128)delta * ns_per_tick_32) >> 32);
}

uint64_t clock_mono_ns(void)
{
	return boot.mono_ns + clock_since_boot_ns();
}

uint64_t clock_wall_ns(void)
{
	return boot.wall_ns + clock_since_boot_ns();
}

int64_t clock_wall_s(void)
{
	return (int64_t)(clock_wall_ns() / NSEC_PER_SEC);
}

/* Timeouts a program gives, as monotonic deadlines (0: none; 1: passed
 * already): milliseconds (negative: none), and a relative timespec (NULL:
 * none; centuries count as none). */
uint64_t deadline_ms(long ms)
{
	return ms < 0 ? 0 : !ms ? 1 : clock_mono_ns() + (uint64_t)ms * 1000000;
}

/* sec, nsec from now as a deadline (already checked as the program's). */
long deadline_in(int64_t sec, int64_t nsec, uint64_t *out)
{
	*out = 0;
	if (sec < 0 || nsec < 0 || nsec >= NSEC_PER_SEC)
		return -EINVAL;
	if (sec > 9000000000ll)
		return 0;
	uint64_t ns = (uint64_t)sec * NSEC_PER_SEC + (uint64_t)nsec;
	*out = ns ? clock_mono_ns() + ns : 1;
	return 0;
}

long deadline_ts(const int64_t *ts, uint64_t *out)
{
	*out = 0;
	if (!ts)
		return 0;
	if (!user_ok(ts, 16))
		return -EFAULT;
	return deadline_in(ts[0], ts[1], out);
}
