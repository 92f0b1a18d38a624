/* expected: execve of malformed ELF files (mutations of the program itself: truncated, absurd program headers, segments over the kernel or past the address space, bad or missing PT_INTERP) fails with an errno, or (as Linux does for some) goes through and the new program dies of a signal or runs; the guest kernel lives on: prints "22 tried, 0 unexpected" */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char *self;
static size_t self_len;
static int unexpected, tried;

/* A copy of the program with mutate() applied, exec'd in a child: what
 * became of it. */
static void try(const char *name, void (*mutate)(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph))
{
	size_t len = self_len;
	unsigned char *b = malloc(len + 4096);
	memcpy(b, self, len);
	Elf64_Ehdr *e = (Elf64_Ehdr *)b;
	mutate(b, &len, e, (Elf64_Phdr *)(b + e->e_phoff));
	char path[64];
	snprintf(path, sizeof path, "/tmp/elf-%s", name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, b, len) != (ssize_t)len || close(fd)) {
		tried++;
		printf("%s: cannot write it\n", name);
		unexpected++;
		return;
	}
	free(b);
	int p[2];
	if (pipe(p))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		char *argv[] = { path, "ran", NULL };
		execve(path, argv, NULL);
		int err = errno;
		if (write(p[1], &err, sizeof err) < 0)
			_exit(2);
		_exit(1);
	}
	close(p[1]);
	int err = 0, st;
	ssize_t got = read(p[0], &err, sizeof err);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (got == sizeof err) {
		int fine = err == ENOEXEC || err == EINVAL || err == ENOMEM || err == EACCES || err == ENOENT ||
			   err == E2BIG || err == ELIBBAD || err == EIO;
		printf("%s: %s%s\n", name, strerror(err), fine ? "" : " UNEXPECTED");
		unexpected += !fine;
	} else { /* past the point of no return, as Linux goes for some: the program it became died or ran */
		printf("%s: exec went through, %s %d\n", name, WIFSIGNALED(st) ? "signal" : "status",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
	tried++;
}

static Elf64_Phdr *first_load(Elf64_Ehdr *e, Elf64_Phdr *ph)
{
	for (int i = 0; i < e->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			return &ph[i];
	return ph;
}

/* An entry that is not needed to load (PT_NOTE, PT_GNU_STACK ...) made a
 * PT_INTERP of the string at the end of the file. */
static void add_interp(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph, const char *s, size_t n)
{
	for (int i = 0; i < e->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_STACK || ph[i].p_type == PT_NOTE || ph[i].p_type == PT_GNU_PROPERTY) {
			memcpy(b + *len, s, n);
			ph[i] = (Elf64_Phdr){ .p_type = PT_INTERP, .p_offset = *len, .p_filesz = n, .p_memsz = n, .p_align = 1 };
			*len += n;
			return;
		}
}

static void truncated(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)e, (void)ph; *len = 30; }
static void phnum_max(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len, (void)ph; e->e_phnum = 0xffff; }
static void phoff_out(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)ph; e->e_phoff = *len + 4096; }
static void phoff_wrap(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len, (void)ph; e->e_phoff = ~0ull - 8; }
static void phentsize(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len, (void)ph; e->e_phentsize = 1; }
static void filesz_big(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; first_load(e, ph)->p_filesz = 1ull << 40; }
static void memsz_small(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; Elf64_Phdr *l = first_load(e, ph); l->p_memsz = l->p_filesz / 2; }
static void memsz_huge(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; first_load(e, ph)->p_memsz = 1ull << 46; }
static void offset_out(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b; first_load(e, ph)->p_offset = *len + 8192; }
static void over_kernel(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; Elf64_Phdr *l = first_load(e, ph); l->p_vaddr = l->p_paddr = 0x200000; }
static void at_zero(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; Elf64_Phdr *l = first_load(e, ph); l->p_vaddr = l->p_paddr = 0; }
static void wraps(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; Elf64_Phdr *l = first_load(e, ph); l->p_vaddr = l->p_paddr = ~0ull - 4095; }
static void high_half(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len; Elf64_Phdr *l = first_load(e, ph); l->p_vaddr = l->p_paddr = 0xffff800000000000ull; }
static void entry_out(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len, (void)ph; e->e_entry = 0x10; }
static void wrong_machine(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)b, (void)len, (void)ph; e->e_machine = EM_AARCH64; }
static void elf32(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { (void)len, (void)e, (void)ph; b[EI_CLASS] = ELFCLASS32; }
static void interp_missing(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { add_interp(b, len, e, ph, "/nonexistent/ld.so", 19); }
static void interp_dir(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { add_interp(b, len, e, ph, "/tmp", 5); }
static void interp_no_nul(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { add_interp(b, len, e, ph, "/tmp/elf-x", 10); }
static void interp_huge(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph)
{
	add_interp(b, len, e, ph, "/x", 3);
	for (int i = 0; i < e->e_phnum; i++)
		if (ph[i].p_type == PT_INTERP)
			ph[i].p_filesz = 1ull << 40;
}
static void interp_devzero(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { add_interp(b, len, e, ph, "/dev/zero", 10); }
static void interp_truncated(unsigned char *b, size_t *len, Elf64_Ehdr *e, Elf64_Phdr *ph) { add_interp(b, len, e, ph, "/tmp/elf-truncated", 19); }

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "ran")) {
		puts("a malformed program ran");
		return 3;
	}
	int fd = open(argc > 1 ? argv[1] : "/proc/self/exe", O_RDONLY); /* a copy of itself the guest can read */
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		return 1;
	self_len = st.st_size;
	self = malloc(self_len);
	if (read(fd, self, self_len) != (ssize_t)self_len)
		return 1;
	try("truncated", truncated);
	try("phnum-max", phnum_max);
	try("phoff-past-end", phoff_out);
	try("phoff-wraps", phoff_wrap);
	try("phentsize-1", phentsize);
	try("filesz-1TiB", filesz_big);
	try("memsz-below-filesz", memsz_small);
	try("memsz-64TiB", memsz_huge);
	try("offset-past-end", offset_out);
	try("load-over-kernel", over_kernel);
	try("load-at-0", at_zero);
	try("load-wraps", wraps);
	try("load-high-half", high_half);
	try("entry-outside", entry_out);
	try("aarch64", wrong_machine);
	try("elfclass32", elf32);
	try("interp-missing", interp_missing);
	try("interp-directory", interp_dir);
	try("interp-no-nul", interp_no_nul);
	try("interp-1TiB", interp_huge);
	try("interp-dev-zero", interp_devzero);
	try("interp-truncated-elf", interp_truncated);
	printf("%d tried, %d unexpected\n", tried, unexpected);
	return 0;
}
