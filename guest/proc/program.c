/* SPDX-License-Identifier: GPL-2.0-only */
/* Starts the program: its initial stack as Linux lays it out (argc, argv,
 * envp, auxv, then the strings) at the top of RAM, and a jump to its entry.
 * execve (exec.c) builds an exec'd program's stack the same way. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "arch/cpu.h"
#include "kernel.h"
#include "linux_abi.h"
#include "fs/vfs.h"
#include "mm/mm.h"
#include "proc/exec.h"
#include "proc/process.h"
#include "proc/signal.h"
#include "proc/sched.h"

#define NAUXV 21 /* the entries stack_build puts in auxv, AT_NULL's included */

static char *push_bytes(uintptr_t *sp, const void *p, size_t n)
{
	*sp -= n;
	return memcpy((void *)*sp, p, n);
}

/* Copy a NUL-separated list to the stack, storing each string's address. */
static void push_strings(uintptr_t *sp, const struct strlist *l, uint64_t *ptrs)
{
	char *copy = push_bytes(sp, l->s, l->len);
	for (size_t off = 0, i = 0; off < l->len; i++) {
		ptrs[i] = (uintptr_t)copy + off;
		off += strlen(copy + off) + 1;
	}
}

static size_t table_words(const struct strlist *argv, const struct strlist *envp)
{
	return 1 + argv->n + 1 + envp->n + 1 + 2 * NAUXV;
}

size_t stack_bytes(const struct strlist *argv, const struct strlist *envp, const char *execfn)
{
	size_t top = execfn ? strlen(execfn) + 1 : 0;
	return top + 16 + 7 + argv->len + envp->len + table_words(argv, envp) * 8 + 15;
}

uintptr_t stack_build(uintptr_t top, const struct strlist *argv, const struct strlist *envp, const char *execfn,
		      uint64_t entry, uint64_t phdr, uint64_t phnum, uint64_t base)
{
	uintptr_t sp = top;
	char *fn = execfn ? push_bytes(&sp, execfn, strlen(execfn) + 1) : 0;
	uint8_t rnd[16];
	random_fill(rnd, sizeof rnd);
	char *at_random = push_bytes(&sp, rnd, sizeof rnd);
	char *platform = push_bytes(&sp, "x86_64", 7);
	uint32_t a, b, c, hwcap; /* as Linux: CPUID 1's edx */
	cpuid(1, &a, &b, &c, &hwcap);

	/* Pointer arrays are built in place below the strings. */
	uint64_t auxv[NAUXV][2] = {
		{ AT_PHDR, phdr }, { AT_PHENT, 56 }, { AT_PHNUM, phnum },
		{ AT_PAGESZ, PAGE_SIZE }, { AT_BASE, base }, { AT_FLAGS, 0 }, { AT_ENTRY, entry },
		{ AT_UID, 0 }, { AT_EUID, 0 }, { AT_GID, 0 }, { AT_EGID, 0 },
		{ AT_PLATFORM, (uintptr_t)platform }, { AT_CLKTCK, 100 }, { AT_SECURE, 0 },
		{ AT_RANDOM, (uintptr_t)at_random }, { AT_EXECFN, (uintptr_t)fn },
		{ AT_SYSINFO, (uintptr_t)fast_entry }, { AT_HWCAP, hwcap }, { AT_HWCAP2, boot.fsgsbase ? HWCAP2_FSGSBASE : 0 },
		{ AT_MINSIGSTKSZ, signal_frame_size() }, { AT_NULL, 0 },
	};
	int argc = argv->n, envc = envp->n;
	uintptr_t strings_end = sp;
	sp -= argv->len + envp->len;
	uintptr_t table = (sp - table_words(argv, envp) * 8) & ~15ul;
	uint64_t *w = (uint64_t *)table;
	sp = strings_end;
	w[0] = argc;
	push_strings(&sp, argv, w + 1);
	w[1 + argc] = 0;
	push_strings(&sp, envp, w + 2 + argc);
	w[2 + argc + envc] = 0;
	if (!fn)
		auxv[15][1] = w[1]; /* AT_EXECFN: argv[0] */
	memcpy(w + 3 + argc + envc, auxv, sizeof auxv);
	uintptr_t args = strings_end - argv->len, env = args - envp->len; /* for /proc (fs/procfs.c) */
	mm_current->layout = (struct mm_layout){ args, strings_end, env, args, table, phdr, phnum };
	return table;
}

/* A NUL-separated list's strings below *sp, and below them its pointer
 * array (NULL-terminated, 16-aligned), where *sp ends. */
static char **push_list(uintptr_t *sp, const struct strlist *l)
{
	uint64_t *ptrs = (uint64_t *)((*sp - l->len - (l->n + 1) * 8) & ~15ul);
	push_strings(sp, l, ptrs);
	ptrs[l->n] = 0;
	*sp = (uintptr_t)ptrs;
	return (char **)ptrs;
}

/* PATH's value in the program's environment ("" when unset). */
static const char *env_path(void)
{
	for (size_t off = 0; off < (size_t)boot.envp_len; off += strlen(boot.envp + off) + 1)
		if (!strncmp(boot.envp + off, "PATH=", 5))
			return boot.envp + off + 5;
	return "";
}

/* The first program of an image with a root file system (a Debian image):
 * the VMM loaded nothing, argv[0] is looked up here as execvp does (a name
 * without '/' along PATH) and exec'd, so its PT_INTERP and "#!" resolve in
 * the image.  Its argv, envp and the path tried are laid out on the boot
 * stack, as a program's would be for execve.  A name found nowhere ends the
 * run with 127 and one line on stderr, one found but not runnable with 126,
 * as a shell.  Runs on the first task's kernel stack. */
static void exec_first(void)
{
	struct strlist argv = { boot.argv, boot.argv_len, boot.argc }, envp = { boot.envp, boot.envp_len, boot.envc };
	struct node *n = kalloc(sizeof *n);
	if (n) { /* the scratch /workdir takes the script now: the boot address space, where it is, goes at the exec */
		vfs_lookup("/", "/workdir", LOOKUP_FOLLOW, n);
		kfree(n, sizeof *n);
	}
	uintptr_t sp = mem_stack_top() - PATH_MAX;
	char *path = (char *)sp;
	char **uargv = push_list(&sp, &argv), **uenvp = push_list(&sp, &envp);
	const char *name = boot.argv;
	size_t nl = strlen(name);
	int has_slash = strchr(name, '/') != 0, denied = 0;
	long r = -ENOENT;
	if (has_slash) {
		r = nl < PATH_MAX ? sys_execve(memcpy(path, name, nl + 1), uargv, uenvp) : -ENAMETOOLONG;
	} else {
		for (const char *d = env_path();; d++) {
			const char *colon = strchr(d, ':');
			size_t dl = colon ? (size_t)(colon - d) : strlen(d);
			if (dl + 1 + nl < PATH_MAX && nl) {
				memcpy(path, d, dl); /* an empty entry is the working directory, as execvp's */
				path[dl] = '/';
				memcpy(path + dl + !!dl, name, nl + 1);
				r = sys_execve(path, uargv, uenvp);
				denied |= r == -EACCES;
				if (r != -ENOENT && r != -ENOTDIR && r != -EACCES)
					break;
			}
			d += dl;
			if (!*d)
				break;
		}
		if (denied && (r == -ENOENT || r == -ENOTDIR))
			r = -EACCES;
	}
	char msg[PATH_MAX + 128]; /* name is shorter than PATH_MAX */
	int len;
	if (r == -ENOENT || r == -ENOTDIR)
		len = ksnprintf(msg, sizeof msg, "husk: %s: %s\n", name,
				has_slash ? "no such file in the image" : "command not found in the image's PATH");
	else
		len = ksnprintf(msg, sizeof msg, "husk: %s: cannot run it (error %ld)\n", name, -r);
	console_write(2, msg, len < (int)sizeof msg ? (size_t)len : sizeof msg - 1);
	process_exit((r == -ENOENT || r == -ENOTDIR ? 127 : 126) << 8); /* a wait status */
}

_Noreturn void program_start(void)
{
	if (!boot.entry) { /* on the first task's kernel stack: the boot stack is too small for an exec */
		REPORT->tsc_program = rdtsc();
		run_on_stack(kstack_top, exec_first);
	}
	struct strlist argv = { boot.argv, boot.argv_len, boot.argc }, envp = { boot.envp, boot.envp_len, boot.envc };
	uintptr_t sp = stack_build(mem_stack_top(), &argv, &envp, 0, boot.entry, boot.phdr, boot.phnum, 0);
	REPORT->tsc_program = rdtsc();
	enter_program(boot.entry, sp);
}
