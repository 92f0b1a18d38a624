/* SPDX-License-Identifier: GPL-2.0-only */
/* Time without exits: the VMM's (wall, monotonic, TSC) triple taken at boot,
 * advanced by rdtsc at the TSC frequency it reported. */
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
