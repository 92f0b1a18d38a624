/* The boot information handed to the guest kernel: a flattened device tree. */
#ifndef HUSK_BOOT_FDT_H
#define HUSK_BOOT_FDT_H
#include <stddef.h>
#include <stdint.h>

struct boot_console {
	uint64_t mmio;
	int fd; /* the guest fd it serves */
};

struct boot_params {
	uint64_t ram_size;
	char *const *argv;
	int argc;
	char *const *envv;
	int envc;
	uint64_t entry, phdr, phnum, image_end;
	uint64_t wall_ns, mono_ns, tsc, tsc_khz;
	uint8_t seed[32];
	int tty[3];
	uint16_t rows, cols;
	int selftest;
	struct boot_console console[3];
	int nconsoles;
};

/* Writes the tree into buf.  Returns 0, or -1 with a reason in err. */
int boot_fdt_build(void *buf, size_t size, const struct boot_params *p, char *err, size_t errlen);
#endif
