/* SPDX-License-Identifier: GPL-2.0-only */
/* Starts the program: its initial stack as Linux lays it out (argc, argv,
 * envp, auxv, then the strings) at the top of RAM, and a jump to its entry. */
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"
#include "proc/sched.h"

static char *push_bytes(uintptr_t *sp, const void *p, size_t n)
{
	*sp -= n;
	return memcpy((void *)*sp, p, n);
}

/* Copy a NUL-separated list to the stack, storing each string's address. */
static void push_strings(uintptr_t *sp, const char *list, int len, uint64_t *ptrs)
{
	char *copy = push_bytes(sp, list, len);
	for (int off = 0, i = 0; off < len; i++) {
		ptrs[i] = (uintptr_t)copy + off;
		off += strlen(copy + off) + 1;
	}
}

_Noreturn void program_start(void)
{
	sched_init();
	uintptr_t sp = mem_stack_top();
	uint8_t rnd[16];
	random_fill(rnd, sizeof rnd);
	char *at_random = push_bytes(&sp, rnd, sizeof rnd);
	char *platform = push_bytes(&sp, "x86_64", 7);

	/* Pointer arrays are built in place below the strings. */
	uint64_t auxv[][2] = {
		{ AT_PHDR, boot.phdr }, { AT_PHENT, 56 }, { AT_PHNUM, boot.phnum },
		{ AT_PAGESZ, PAGE_SIZE }, { AT_BASE, 0 }, { AT_FLAGS, 0 }, { AT_ENTRY, boot.entry },
		{ AT_UID, 0 }, { AT_EUID, 0 }, { AT_GID, 0 }, { AT_EGID, 0 },
		{ AT_PLATFORM, (uintptr_t)platform }, { AT_CLKTCK, 100 }, { AT_SECURE, 0 },
		{ AT_RANDOM, (uintptr_t)at_random }, { AT_EXECFN, 0 },
		{ AT_SYSINFO, (uintptr_t)fast_entry }, { AT_NULL, 0 },
	};
	size_t words = 1 + boot.argc + 1 + boot.envc + 1 + 2 * ARRAY_SIZE(auxv);
	uintptr_t strings_end = sp;
	sp -= boot.argv_len + boot.envp_len;
	uintptr_t table = (sp - words * 8) & ~15ul;
	uint64_t *w = (uint64_t *)table;
	sp = strings_end;
	w[0] = boot.argc;
	push_strings(&sp, boot.argv, boot.argv_len, w + 1);
	w[1 + boot.argc] = 0;
	push_strings(&sp, boot.envp, boot.envp_len, w + 2 + boot.argc);
	w[2 + boot.argc + boot.envc] = 0;
	auxv[15][1] = w[1]; /* AT_EXECFN: argv[0] */
	memcpy(w + 3 + boot.argc + boot.envc, auxv, sizeof auxv);
	enter_program(boot.entry, table);
}
