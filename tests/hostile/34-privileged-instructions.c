/* SPDX-License-Identifier: GPL-2.0-only */
/* expected, by argv[1]: guest code trying to break its own kernel or the device protocol ends the run with 121 (protocol), 122 (guest crashed) or a signal status, never 120 and never a husk crash (see hostile.t for each) */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "";
	printf("trying %s\n", w);
	fflush(stdout);
	if (!strcmp(w, "hlt"))
		__asm__ volatile("cli; hlt");
	else if (!strcmp(w, "out-unknown-port"))
		__asm__ volatile("outl %%eax, %%dx" : : "a"(1), "d"(0x3f8));
	else if (!strcmp(w, "in-exit-port")) {
		uint32_t v;
		__asm__ volatile("inl %%dx, %%eax" : "=a"(v) : "d"(0x510));
		printf("in -> %u\n", v);
	} else if (!strcmp(w, "forge-fault-report")) {
		memset((void *)0x310000, 0xff, 40); /* struct husk_fault in the report page */
		__asm__ volatile("outl %%eax, %%dx" : : "a"(0), "d"(0x511));
	} else if (!strcmp(w, "forge-long-sleep")) {
		memset((void *)(0x310000 + 40), 0xff, 8); /* report.sleep_ns */
		__asm__ volatile("outl %%eax, %%dx" : : "a"(0), "d"(0x513));
	} else if (!strcmp(w, "forge-exit")) {
		__asm__ volatile("outl %%eax, %%dx" : : "a"(7), "d"(0x510));
	} else if (!strcmp(w, "zero-idt")) {
		struct __attribute__((packed)) { uint16_t limit; uint64_t base; } d = { 0, 0 };
		__asm__ volatile("lidt %0; ud2" : : "m"(d));
	} else if (!strcmp(w, "zero-cr3"))
		__asm__ volatile("mov %0, %%cr3" : : "r"(0ul));
	else if (!strcmp(w, "smash-page-tables")) {
		memset((void *)0x1000, 0, 0x3000);
		__asm__ volatile("mov %%cr3, %%rax; mov %%rax, %%cr3" : : : "rax", "memory");
	} else if (!strcmp(w, "smash-kernel")) {
		memset((void *)0x200000, 0xcc, 0x100000); /* the guest kernel's image */
		printf("after smashing the kernel\n");
	} else if (!strcmp(w, "wrmsr-lstar")) {
		long nr = 39; /* getpid through a syscall entry pointing at 0 */
		__asm__ volatile("wrmsr" : : "c"(0xc0000082), "a"(0), "d"(0));
		__asm__ volatile("syscall" : "+a"(nr) : : "rcx", "r11", "memory");
	} else if (!strcmp(w, "mmio-garbage")) {
		volatile uint32_t *m = (uint32_t *)0xd0000000; /* the first virtio-mmio device */
		for (int i = 0; i < 1024; i++)
			m[i] = 0xffffffff;
	} else if (!strcmp(w, "mmio-hole")) {
		volatile uint32_t *m = (uint32_t *)0xd000f000;
		printf("%u\n", m[0]);
	} else if (!strcmp(w, "past-ram")) {
		volatile uint32_t *m = (uint32_t *)0xb0000000;
		printf("%u\n", m[0]);
	}
	printf("survived %s\n", w);
	return 0;
}
