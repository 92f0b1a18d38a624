/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel's boot sequence. */
#include "arch/cpu.h"
#include "arch/fpu.h"
#include "kernel.h"
#include "mm/mm.h"
#include "proc/process.h"
#include "sys/sys_fs.h"

_Noreturn void kmain(const void *fdt, unsigned long flags);

_Noreturn void kmain(const void *fdt, unsigned long flags)
{
	trap_init();
	bootinfo_parse(fdt, flags & HUSK_BOOT_PVM);
	boot.fsgsbase = (flags & HUSK_BOOT_FSGSBASE) != 0;
	fpu_init();
	clock_init();
	apic_init();
	random_init(boot.seed);
	if (boot.selftest)
		selftest_run();
	process_init(mm_boot(boot.image_end, boot.ram_size, boot.script_gpa, boot.script_size));
	fs_init();
	snapshot_point(HUSK_SNAPSHOT_KERNEL);
	program_start();
}
