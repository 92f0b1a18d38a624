/* SPDX-License-Identifier: GPL-2.0-only */
#include <libfdt.h>
#include <stdio.h>
#include <string.h>
#include "boot_fdt.h"

/* NUL-separated list of strings, the device tree's stringlist */
static int prop_strings(void *fdt, const char *name, char *const *v, int n)
{
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		total += strlen(v[i]) + 1;
		if (total > INT32_MAX)
			return -FDT_ERR_NOSPACE;
	}
	char *dst;
	int err = fdt_property_placeholder(fdt, name, (int)total, (void **)&dst);
	for (int i = 0; !err && i < n; i++) {
		size_t len = strlen(v[i]) + 1;
		memcpy(dst, v[i], len);
		dst += len;
	}
	return err;
}

static int prop_u64s(void *fdt, const char *name, const uint64_t *v, int n)
{
	fdt64_t be[8];
	for (int i = 0; i < n; i++)
		be[i] = cpu_to_fdt64(v[i]);
	return fdt_property(fdt, name, be, n * sizeof be[0]);
}

static int prop_u32s(void *fdt, const char *name, const uint32_t *v, int n)
{
	fdt32_t be[8];
	for (int i = 0; i < n; i++)
		be[i] = cpu_to_fdt32(v[i]);
	return fdt_property(fdt, name, be, n * sizeof be[0]);
}

static int build(void *fdt, size_t size, const struct boot_params *p)
{
	int e = fdt_create(fdt, (int)size);
	e = e ? e : fdt_finish_reservemap(fdt);
	e = e ? e : fdt_begin_node(fdt, "");
	e = e ? e : fdt_property_u32(fdt, "#address-cells", 2);
	e = e ? e : fdt_property_u32(fdt, "#size-cells", 2);
	e = e ? e : fdt_property_string(fdt, "compatible", HUSK_DT_COMPATIBLE);

	e = e ? e : fdt_begin_node(fdt, HUSK_DT_MEMORY);
	e = e ? e : fdt_property_string(fdt, "device_type", "memory");
	e = e ? e : prop_u64s(fdt, "reg", (uint64_t[]){ 0, p->ram_size }, 2);
	e = e ? e : fdt_end_node(fdt);

	e = e ? e : fdt_begin_node(fdt, HUSK_DT_CHOSEN);
	e = e ? e : prop_u64s(fdt, HUSK_DT_PROGRAM, (uint64_t[]){ p->entry, p->phdr, p->phnum, p->image_end }, 4);
	e = e ? e : prop_u64s(fdt, HUSK_DT_CLOCK, (uint64_t[]){ p->wall_ns, p->mono_ns, p->tsc, p->tsc_khz }, 4);
	e = e ? e : fdt_property(fdt, HUSK_DT_SEED, p->seed, sizeof p->seed);
	e = e ? e : prop_u32s(fdt, HUSK_DT_TTY, (uint32_t[]){ p->tty[0], p->tty[1], p->tty[2] }, 3);
	e = e ? e : prop_u32s(fdt, HUSK_DT_WINSIZE, (uint32_t[]){ p->rows, p->cols }, 2);
	e = e ? e : fdt_property_u32(fdt, HUSK_DT_OPEN_FILES, p->open_files);
	e = e ? e : fdt_property_u32(fdt, HUSK_DT_PIDS, p->pids);
	if (!e && p->selftest)
		e = fdt_property(fdt, HUSK_DT_SELFTEST, NULL, 0);
	if (!e && p->loopback)
		e = fdt_property(fdt, HUSK_DT_LOOPBACK, NULL, 0);
	e = e ? e : prop_strings(fdt, HUSK_DT_ARGV, p->argv, p->argc);
	e = e ? e : prop_strings(fdt, HUSK_DT_ENVP, p->envv, p->envc);
	if (!e && p->script_name) {
		e = p->script_data ? fdt_property(fdt, HUSK_DT_SCRIPT_DATA, p->script_data, (int)p->script_size)
				   : prop_u64s(fdt, HUSK_DT_SCRIPT, (uint64_t[]){ p->script_gpa, p->script_size }, 2);
		e = e ? e : fdt_property_string(fdt, HUSK_DT_SCRIPT_NAME, p->script_name);
	}
	if (!e && p->snapshot)
		e = fdt_property_u32(fdt, HUSK_DT_SNAPSHOT, (uint32_t)p->snapshot);
	e = e ? e : fdt_end_node(fdt);

	for (int i = 0; !e && i < p->ndev; i++) {
		const struct boot_device *c = &p->dev[i];
		char name[32];
		snprintf(name, sizeof name, "virtio_mmio@%llx", (unsigned long long)c->mmio);
		e = fdt_begin_node(fdt, name);
		e = e ? e : fdt_property_string(fdt, "compatible", HUSK_DT_VIRTIO_MMIO);
		e = e ? e : prop_u64s(fdt, "reg", (uint64_t[]){ c->mmio, HUSK_MMIO_SIZE }, 2);
		if (c->fd >= 0)
			e = e ? e : fdt_property_u32(fdt, HUSK_DT_FD, (uint32_t)c->fd);
		if (c->mount)
			e = e ? e : fdt_property_string(fdt, HUSK_DT_MOUNT, c->mount);
		if (c->read_only)
			e = e ? e : fdt_property(fdt, HUSK_DT_READ_ONLY, NULL, 0);
		if (c->network)
			e = e ? e : fdt_property(fdt, HUSK_DT_NETWORK, NULL, 0);
		e = e ? e : fdt_end_node(fdt);
	}
	e = e ? e : fdt_end_node(fdt);
	return e ? e : fdt_finish(fdt);
}

int boot_fdt_build(void *buf, size_t size, const struct boot_params *p, char *err, size_t errlen)
{
	int e = build(buf, size, p);
	if (e == -FDT_ERR_NOSPACE) {
		snprintf(err, errlen, "arguments and environment do not fit in the %zu KiB of boot information",
			 size >> 10);
		return -1;
	}
	if (e) {
		snprintf(err, errlen, "building the boot device tree: %s", fdt_strerror(e));
		return -1;
	}
	return 0;
}
