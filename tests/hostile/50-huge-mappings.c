/* expected: huge and absurd mappings fail with an errno (ENOMEM, EINVAL, EEXIST...), never crash or hang the guest; a file mapped past its end reads zeros; prints "0 unexpected" */
/* SPDX-License-Identifier: GPL-2.0-only */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int unexpected;

static void expect_fail(const char *what, void *p)
{
	int fine = p == MAP_FAILED;
	printf("%s: %s%s\n", what, fine ? strerror(errno) : "mapped", fine ? "" : " UNEXPECTED");
	unexpected += !fine;
}

int main(int argc, char **argv)
{
	int fd = open(argc > 1 ? argv[1] : "/proc/self/exe", O_RDONLY); /* a file the guest can read */
	if (fd < 0)
		return 1;
	expect_fail("anonymous 1 TiB", mmap(0, 1ull << 40, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	expect_fail("anonymous 2^63", mmap(0, 1ull << 63, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	expect_fail("anonymous ~0", mmap(0, ~0ull, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	expect_fail("file 1 TiB", mmap(0, 1ull << 40, PROT_READ, MAP_PRIVATE, fd, 0));
	expect_fail("file at offset -4096", mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, -4096));
	expect_fail("fixed over the kernel", mmap((void *)0x200000, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	expect_fail("fixed at 0", mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	expect_fail("fixed in the high half", mmap((void *)0xffff800000000000ull, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	expect_fail("fixed wrapping", mmap((void *)(uintptr_t)(~0ull - 4095), 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	expect_fail("misaligned fixed", mmap((void *)0x10000001, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	expect_fail("neither shared nor private", mmap(0, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0));
	expect_fail("a bad fd", mmap(0, 4096, PROT_READ, MAP_PRIVATE, 999, 0));
	/* the memory there is, all of it, in pieces: ENOMEM at the end, then it comes back */
	size_t got = 0;
	void *v[4096];
	int n = 0;
	while (n < 4096 && (v[n] = mmap(0, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) != MAP_FAILED)
		got += 16 << 20, n++;
	int again = n > 0 && errno == ENOMEM;
	while (n > 0)
		munmap(v[--n], 16 << 20);
	void *p = mmap(0, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("16 MiB pieces until ENOMEM: %s, usable again after munmap: %s\n", again ? "yes" : "no UNEXPECTED",
	       p != MAP_FAILED ? "yes" : "no UNEXPECTED");
	unexpected += !again || p == MAP_FAILED;
	/* a file mapped past its end */
	off_t size = lseek(fd, 0, SEEK_END);
	size_t len = ((size_t)size + 4095) / 4096 * 4096 + 4096;
	unsigned char *f = mmap(0, len, PROT_READ, MAP_PRIVATE, fd, 0);
	int zeros = f != MAP_FAILED && f[size] == 0 && f[len - 4096] == 0;
	printf("file mapped past its end: %s\n", zeros ? "zeros" : "UNEXPECTED");
	unexpected += !zeros;
	printf("%d unexpected\n", unexpected);
	return 0;
}
