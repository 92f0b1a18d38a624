/* SPDX-License-Identifier: GPL-2.0-only */
/* execve (exec.c) and the program's initial stack (program.c), which the
 * first program and every exec'd one get alike. */
#ifndef GUEST_EXEC_H
#define GUEST_EXEC_H
#include <stddef.h>
#include <stdint.h>

struct node;

/* n strings one after another, each ending in its NUL: len bytes in all. */
struct strlist {
	const char *s;
	size_t len;
	int n;
};

/* The initial stack below top as Linux lays it out: argc, argv, envp and
 * the auxiliary vector (AT_PHDR, AT_PHNUM, AT_ENTRY, AT_BASE: a dynamic
 * program's interpreter, or 0,
 * AT_RANDOM, AT_EXECFN, AT_SYSINFO: fast_entry ...) at the returned stack
 * pointer, 16-aligned; above them the strings, "x86_64", 16 random bytes,
 * and at the very top execfn when there is one (AT_EXECFN; NULL: argv[0]).
 * The memory must be there: at most stack_bytes() below top. */
uintptr_t stack_build(uintptr_t top, const struct strlist *argv, const struct strlist *envp, const char *execfn,
		      uint64_t entry, uint64_t phdr, uint64_t phnum, uint64_t base);
size_t stack_bytes(const struct strlist *argv, const struct strlist *envp, const char *execfn);

/* Resolves a kernel path as the *at calls do: relative to the directory
 * open on dirfd, or to the working directory (AT_FDCWD); follow: a symlink
 * as the last component is followed.  0 or -errno (ENOENT when the last
 * component is missing: n->ino 0 is never returned). */
int exec_lookup_at(long dirfd, const char *path, int follow, struct node *n);

/* The calling process runs another program: these return only on an error
 * (-errno), the process as it was.  AT_EMPTY_PATH (the file open on dirfd)
 * and AT_SYMLINK_NOFOLLOW are execveat's flags. */
long sys_execve(const char *path, char *const argv[], char *const envp[]);
long sys_execveat(long dirfd, const char *path, char *const argv[], char *const envp[], long flags);
#endif
