/* SPDX-License-Identifier: GPL-2.0-only */
/* Reads the boot device tree the VMM built (libfdt). */
#include <libfdt.h>
#include <limits.h>
#include <string.h>
#include "husk/boot_tree.h"
#include "kernel.h"

struct bootinfo boot;

static const void *prop(const void *fdt, int node, const char *name, int *len, int min)
{
	int l;
	const void *p = fdt_getprop(fdt, node, name, &l);
	if (!p || l < min)
		panic("boot device tree: %s missing or short", name);
	if (len)
		*len = l;
	return p;
}

static uint64_t u64_at(const void *p, int i)
{
	return fdt64_ld((const fdt64_t *)p + i);
}

static int count_strings(const char *s, int len)
{
	int n = 0;
	for (int i = 0; i < len; i++)
		n += s[i] == 0;
	return n;
}

/* The script the VMM passed: in the tree, or put in RAM, where it must lie in
 * the program's arena, above the image, page-aligned; its name must be one
 * file name. */
static void script_parse(const void *fdt, int chosen)
{
	int len;
	const void *data = fdt_getprop(fdt, chosen, HUSK_DT_SCRIPT_DATA, &len);
	uint64_t gpa = 0, size = data ? (uint64_t)len : 0;
	if (!data) {
		const void *p = prop(fdt, chosen, HUSK_DT_SCRIPT, 0, HUSK_DT_SCRIPT_LEN);
		gpa = u64_at(p, 0), size = u64_at(p, 1);
		if (gpa % PAGE_SIZE || gpa < ALIGN_UP(boot.image_end, PAGE_SIZE) || size > boot.ram_size ||
		    gpa + size > boot.ram_size - HUSK_STACK_SIZE)
			panic("boot device tree: bad " HUSK_DT_SCRIPT);
	}
	const char *name = prop(fdt, chosen, HUSK_DT_SCRIPT_NAME, &len, 2);
	if (name[len - 1] || len - 1 > NAME_MAX || memchr(name, '/', len) || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		panic("boot device tree: bad " HUSK_DT_SCRIPT_NAME);
	boot.script_data = data, boot.script_gpa = gpa, boot.script_size = size, boot.script_name = name;
}

void bootinfo_parse(const void *fdt, int pvm)
{
	if (fdt_check_header(fdt))
		panic("boot device tree: bad header");
	boot.pvm = pvm;
	int mem = fdt_path_offset(fdt, "/" HUSK_DT_MEMORY);
	int chosen = fdt_path_offset(fdt, "/" HUSK_DT_CHOSEN);
	if (mem < 0 || chosen < 0)
		panic("boot device tree: /memory@0 or /chosen missing");
	boot.ram_size = u64_at(prop(fdt, mem, "reg", 0, 16), 1);

	boot.argv = prop(fdt, chosen, HUSK_DT_ARGV, &boot.argv_len, 2);
	boot.argc = count_strings(boot.argv, boot.argv_len);
	boot.envp = prop(fdt, chosen, HUSK_DT_ENVP, &boot.envp_len, 0);
	boot.envc = count_strings(boot.envp, boot.envp_len);

	const void *p = prop(fdt, chosen, HUSK_DT_PROGRAM, 0, HUSK_DT_PROGRAM_LEN);
	boot.entry = u64_at(p, 0), boot.phdr = u64_at(p, 1);
	boot.phnum = u64_at(p, 2), boot.image_end = u64_at(p, 3);
	p = prop(fdt, chosen, HUSK_DT_CLOCK, 0, HUSK_DT_CLOCK_LEN);
	boot.wall_ns = u64_at(p, 0), boot.mono_ns = u64_at(p, 1);
	boot.tsc = u64_at(p, 2), boot.tsc_khz = u64_at(p, 3);
	boot.seed = prop(fdt, chosen, HUSK_DT_SEED, 0, HUSK_DT_SEED_LEN);
	const fdt32_t *t = prop(fdt, chosen, HUSK_DT_TTY, 0, HUSK_DT_TTY_LEN);
	for (int i = 0; i < 3; i++)
		boot.tty[i] = fdt32_ld(t + i);
	t = prop(fdt, chosen, HUSK_DT_WINSIZE, 0, HUSK_DT_WINSIZE_LEN);
	boot.rows = fdt32_ld(t), boot.cols = fdt32_ld(t + 1);
	boot.selftest = fdt_getprop(fdt, chosen, HUSK_DT_SELFTEST, 0) != 0;
	boot.loopback = fdt_getprop(fdt, chosen, HUSK_DT_LOOPBACK, 0) != 0;
	boot.open_files = (int)fdt32_ld(prop(fdt, chosen, HUSK_DT_OPEN_FILES, 0, 4));
	boot.max_tasks = HUSK_PIDS_DEFAULT;
	if (fdt_getprop(fdt, chosen, HUSK_DT_PIDS, 0))
		boot.max_tasks = (int)fdt32_ld(prop(fdt, chosen, HUSK_DT_PIDS, 0, 4));
	if (boot.max_tasks < 1)
		panic("boot device tree: bad " HUSK_DT_PIDS);
	boot.script_data = 0, boot.script_gpa = boot.script_size = 0, boot.script_name = 0;
	if (fdt_getprop(fdt, chosen, HUSK_DT_SCRIPT, 0) || fdt_getprop(fdt, chosen, HUSK_DT_SCRIPT_DATA, 0))
		script_parse(fdt, chosen);
	boot.snapshot = 0;
	if (fdt_getprop(fdt, chosen, HUSK_DT_SNAPSHOT, 0))
		boot.snapshot = (int)fdt32_ld(prop(fdt, chosen, HUSK_DT_SNAPSHOT, 0, 4));
	boot.net_mmio = 0, boot.ndisks = 0;
	memset(boot.console, 0, sizeof boot.console);

	int n = 0, node;
	fdt_for_each_subnode(node, fdt, 0) {
		if (fdt_node_check_compatible(fdt, node, HUSK_DT_VIRTIO_MMIO))
			continue;
		uintptr_t mmio = u64_at(prop(fdt, node, "reg", 0, 16), 0);
		const fdt32_t *fd = fdt_getprop(fdt, node, HUSK_DT_FD, 0);
		if (fdt_getprop(fdt, node, HUSK_DT_NETWORK, 0)) {
			boot.net_mmio = mmio;
		} else if (fd && n < (int)ARRAY_SIZE(boot.console)) {
			boot.console[n++] = (struct console_info){ mmio, (int)fdt32_ld(fd) };
		} else if (!fd && boot.ndisks < MAX_DISKS) {
			int len;
			const char *mount = prop(fdt, node, HUSK_DT_MOUNT, &len, 2);
			if (mount[len - 1] || mount[0] != '/')
				panic("boot device tree: bad husk,mount");
			boot.disk[boot.ndisks++] = (struct disk_info){
				mmio, mount, fdt_getprop(fdt, node, HUSK_DT_READ_ONLY, 0) != 0 };
		}
	}
}
