/* expected: the program makes system calls with the direction flag set (against the ABI) and keeps it set
 * (as inside musl's backward memmove) while timer ticks, task switches and page faults enter the kernel; the
 * kernel's own copies stay right: a read with DF set gets the bytes, another thread's pipe round trips and
 * fresh pages read back what was written: prints "0 unexpected", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int stop;

/* DF=1 for as long as it runs, touching a fresh page now and then (a
 * fault with DF set) and never calling anything that needs DF=0. */
static void *backward(void *arg)
{
	char *pages = arg;
	unsigned long spins = 0;
	__asm__ volatile("std");
	for (int i = 0; !stop; i++) {
		if ((i & 0xfffff) == 0 && spins < 256)
			pages[spins++ * 4096] = 1; /* a page fault with DF set */
		__asm__ volatile("" ::: "memory");
	}
	__asm__ volatile("cld");
	return (void *)spins;
}

int main(void)
{
	int bad = 0, p[2], q[2];
	char *pages = mmap(0, 256 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || pipe(p) || pipe(q))
		return 1;
	/* a read through the system call door with DF set: the kernel copies forwards all the same */
	char msg[] = "0123456789abcdefghijklmnopqrstuvwxyz", got[sizeof msg] = { 0 };
	if (write(p[1], msg, sizeof msg) != (ssize_t)sizeof msg)
		return 1;
	__asm__ volatile("std" ::: "memory");
	ssize_t n = read(p[0], got, sizeof got);
	__asm__ volatile("cld" ::: "memory");
	if (n != (ssize_t)sizeof got || memcmp(got, msg, sizeof msg)) {
		printf("UNEXPECTED a read with DF set got %zd bytes: [%.36s]\n", n, got);
		bad++;
	}
	pthread_t t;
	pthread_create(&t, 0, backward, pages);
	char out[4096], in[4096];
	for (int round = 0; round < 3000; round++) {
		for (size_t i = 0; i < sizeof out; i++)
			out[i] = (char)(i * 7 + round);
		if (write(p[1], out, sizeof out) != (ssize_t)sizeof out || read(p[0], in, sizeof in) != (ssize_t)sizeof in) {
			printf("UNEXPECTED pipe round %d failed\n", round);
			bad++;
			break;
		}
		if (memcmp(in, out, sizeof in)) {
			printf("UNEXPECTED pipe round %d: the bytes came back changed\n", round);
			bad++;
			break;
		}
	}
	stop = 1;
	void *spins;
	pthread_join(t, &spins);
	printf("%d unexpected\n", bad);
	return bad != 0;
}
