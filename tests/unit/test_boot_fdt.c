/* SPDX-License-Identifier: GPL-2.0-only */
/* boot_fdt_build(): the boot device tree, parsed back with the host libfdt. */
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>
#include "boot_fdt.h"
#include "tap.h"

#define FDT_SIZE (64u << 10)
#define GUARD 4096
#define GUARD_BYTE 0x5a

static char *const argv[] = { "lua", "-e", "print(1)" };
static char *const envv[] = { "A=1" };

/* What vmm/main.c passes, with fixed values. */
static struct boot_params params(void)
{
	struct boot_params p = {
		.ram_size = 256ull << 20, .argv = argv, .argc = 3, .envv = envv, .envc = 1,
		.entry = 0x401234, .phdr = 0x400040, .phnum = 9, .image_end = 0x4a0000,
		.wall_ns = 1700000000123456789ull, .mono_ns = 987654321ull, .tsc = 0x123456789abcull,
		.tsc_khz = 2994000, .tty = { 0, 1, 0 }, .rows = 50, .cols = 132,
		.dev = { { 0xd0000000, 0, NULL, 0 }, { 0xd0001000, 1, NULL, 0 }, { 0xd0002000, 2, NULL, 0 } },
		.ndev = 3,
	};
	for (int i = 0; i < 32; i++)
		p.seed[i] = (uint8_t)(0xc3 ^ i * 37);
	return p;
}

/* The buffer sits between two guard areas of one allocation. */
static uint8_t *alloc_guarded(size_t size)
{
	uint8_t *a = malloc(size + 2 * GUARD);
	if (!a) {
		printf("Bail out! malloc\n");
		exit(1);
	}
	memset(a, GUARD_BYTE, size + 2 * GUARD);
	return a;
}

static int guards_intact(const uint8_t *a, size_t size)
{
	for (size_t i = 0; i < GUARD; i++)
		if (a[i] != GUARD_BYTE || a[GUARD + size + i] != GUARD_BYTE)
			return 0;
	return 1;
}

/* Builds p into a fresh guarded buffer of size bytes; returns the allocation
 * (the tree at + GUARD) and the result in *r. */
static uint8_t *build(const struct boot_params *p, size_t size, int *r, char *err, size_t errlen)
{
	uint8_t *a = alloc_guarded(size);
	err[0] = 0;
	*r = boot_fdt_build(a + GUARD, size, p, err, errlen);
	return a;
}

static const void *prop(const void *fdt, const char *path, const char *name, int *len)
{
	int node = fdt_path_offset(fdt, path);
	*len = -1;
	return node < 0 ? NULL : fdt_getprop(fdt, node, name, len);
}

/* Property path:name is exactly the n big-endian 64-bit values v. */
static int prop_is_u64s(const void *fdt, const char *path, const char *name, const uint64_t *v, int n)
{
	int len;
	const uint8_t *d = prop(fdt, path, name, &len);
	if (!d || len != n * 8)
		return 0;
	for (int i = 0; i < n; i++) {
		fdt64_t be; /* property values are only 4-byte aligned */
		memcpy(&be, d + 8 * i, 8);
		if (fdt64_to_cpu(be) != v[i])
			return 0;
	}
	return 1;
}

static int prop_is_u32s(const void *fdt, const char *path, const char *name, const uint32_t *v, int n)
{
	int len;
	const fdt32_t *be = prop(fdt, path, name, &len);
	if (!be || len != n * 4)
		return 0;
	for (int i = 0; i < n; i++)
		if (fdt32_to_cpu(be[i]) != v[i])
			return 0;
	return 1;
}

static int prop_is_bytes(const void *fdt, const char *path, const char *name, const void *v, int n)
{
	int len;
	const void *d = prop(fdt, path, name, &len);
	return d && len == n && !memcmp(d, v, n);
}

static void check_console(const void *fdt, const char *path, uint64_t base, uint32_t fd)
{
	int node = fdt_path_offset(fdt, path);
	ok(node >= 0 && fdt_node_check_compatible(fdt, node, "virtio,mmio") == 0, "%s is virtio,mmio", path);
	ok(prop_is_u64s(fdt, path, "reg", (uint64_t[]){ base, 0x1000 }, 2), "%s reg", path);
	ok(prop_is_u32s(fdt, path, "husk,fd", &fd, 1), "%s husk,fd", path);
}

static void test_tree(void)
{
	struct boot_params p = params();
	char err[256];
	int r;
	uint8_t *a = build(&p, FDT_SIZE, &r, err, sizeof err);
	const void *fdt = a + GUARD;
	ok(r == 0, "builds (%s)", err);
	ok(fdt_check_header(fdt) == 0 && fdt_totalsize(fdt) <= FDT_SIZE, "valid header, %u bytes",
	   fdt_totalsize(fdt));
	ok(fdt_check_full(fdt, FDT_SIZE) == 0, "the whole tree is well formed");
	ok(guards_intact(a, FDT_SIZE), "nothing written outside the buffer");
	ok(fdt_node_check_compatible(fdt, 0, "husk,microvm") == 0, "root compatible husk,microvm");
	ok(fdt_address_cells(fdt, 0) == 2 && fdt_size_cells(fdt, 0) == 2, "2 address and size cells");
	ok(prop_is_u64s(fdt, "/memory@0", "reg", (uint64_t[]){ 0, 256ull << 20 }, 2), "/memory@0 reg <0 256M>");
	ok(prop_is_bytes(fdt, "/memory@0", "device_type", "memory", 7), "/memory@0 device_type");
	ok(prop_is_bytes(fdt, "/chosen", "husk,argv", "lua\0-e\0print(1)", 16), "husk,argv");
	ok(prop_is_bytes(fdt, "/chosen", "husk,envp", "A=1", 4), "husk,envp");
	ok(prop_is_u64s(fdt, "/chosen", "husk,program", (uint64_t[]){ p.entry, p.phdr, p.phnum, p.image_end }, 4),
	   "husk,program");
	ok(prop_is_u64s(fdt, "/chosen", "husk,clock", (uint64_t[]){ p.wall_ns, p.mono_ns, p.tsc, p.tsc_khz }, 4),
	   "husk,clock");
	ok(prop_is_bytes(fdt, "/chosen", "rng-seed", p.seed, 32), "rng-seed");
	ok(prop_is_u32s(fdt, "/chosen", "husk,tty", (uint32_t[]){ 0, 1, 0 }, 3), "husk,tty");
	ok(prop_is_u32s(fdt, "/chosen", "husk,winsize", (uint32_t[]){ 50, 132 }, 2), "husk,winsize");
	int len;
	ok(!prop(fdt, "/chosen", "husk,selftest", &len) && len == -FDT_ERR_NOTFOUND, "no husk,selftest");
	check_console(fdt, "/virtio_mmio@d0000000", 0xd0000000, 0);
	check_console(fdt, "/virtio_mmio@d0001000", 0xd0001000, 1);
	check_console(fdt, "/virtio_mmio@d0002000", 0xd0002000, 2);
	free(a);
}

static void test_variants(void)
{
	struct boot_params p = params();
	char err[256];
	int r, len;
	p.selftest = 1;
	p.envc = 0;
	p.ndev = 0;
	uint8_t *a = build(&p, FDT_SIZE, &r, err, sizeof err);
	const void *fdt = a + GUARD;
	ok(r == 0 && fdt_check_full(fdt, FDT_SIZE) == 0, "builds with selftest, no env, no consoles (%s)", err);
	ok(prop(fdt, "/chosen", "husk,selftest", &len) && len == 0, "husk,selftest present and empty");
	ok(prop(fdt, "/chosen", "husk,envp", &len) && len == 0, "envc 0: husk,envp of length 0");
	ok(fdt_path_offset(fdt, "/virtio_mmio@d0000000") == -FDT_ERR_NOTFOUND, "no console nodes");
	free(a);
}

static void check_no_fit(const char *what, const struct boot_params *p, size_t size)
{
	char err[256];
	int r;
	uint8_t *a = build(p, size, &r, err, sizeof err);
	ok(r == -1 && strstr(err, "do not fit"), "%s: refused (%s)", what, err);
	ok(guards_intact(a, size), "%s: nothing written outside the buffer", what);
	free(a);
}

static void test_too_big(void)
{
	struct boot_params p = params();
	char *big = malloc(200 << 10);
	if (!big) {
		ok(0, "malloc");
		return;
	}
	memset(big, 'x', (200 << 10) - 1);
	big[(200 << 10) - 1] = 0;
	char *const bigv[] = { big };
	p.argv = bigv;
	p.argc = 1;
	check_no_fit("a 200 KiB argument in 64 KiB", &p, FDT_SIZE);
	p = params();
	p.envv = bigv;
	check_no_fit("a 200 KiB environment string in 64 KiB", &p, FDT_SIZE);
	p = params();
	check_no_fit("a 32-byte buffer", &p, 32);
	free(big);
}

int main(void)
{
	test_tree();
	test_variants();
	test_too_big();
	return tap_done();
}
