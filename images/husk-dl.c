// SPDX-License-Identifier: GPL-2.0-only
/*
 * husk-dl.c: dlopen/dlsym for a static binary, over a table of its own
 * global symbols.  Static musl has no dynamic loader: its dlopen fails for
 * every name, NULL included, so `import ctypes` (pythonapi = PyDLL(None))
 * would fail.  Linked into the python image with
 *   -Wl,--wrap=dlopen,--wrap=dlsym,--wrap=dlclose,--wrap=dlerror
 * so every call lands here:
 *   dlopen(NULL) and dlopen of a libc soname (libc.so.6, libm.so.6, ...: musl
 *     is one library and it is linked in) give the binary itself;
 *   dlsym on it looks the name up in husk_syms[], the binary's global symbols
 *     (functions and data) listed by nm after a first link and linked in
 *     with a second (python.sh), sorted by name, as weak references (so the
 *     table pulls nothing new into the link);
 *   anything else fails with a message that says why (dlerror).
 * Only what the link pulled in is there: a libc function nothing in the
 * interpreter uses is not (`husk_syms` lists them all).
 * This file is under the project's licence, like the scripts that build it.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct husk_sym {
	const char *name;
	void *addr;
};
extern const struct husk_sym husk_syms[];
extern const size_t husk_nsyms;

char *__real_dlerror(void);

/* The handle dlopen(NULL) returns; its address is all that matters. */
static const char self_handle[] = "husk: this static binary";

static _Thread_local char err_buf[320];
static _Thread_local int err_set;

static void set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof err_buf, fmt, ap);
	va_end(ap);
	err_set = 1;
}

/* libc.so, libc.so.6, libm.so.6, libpthread.so.0, ... with any directory. */
static int is_libc_name(const char *file)
{
	static const char *const libs[] = { "c", "m", "dl", "pthread", "rt", "util", "resolv", "crypt", "xnet" };
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	if (strncmp(b, "lib", 3) != 0)
		return 0;
	b += 3;
	for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
		size_t n = strlen(libs[i]);
		if (strncmp(b, libs[i], n) == 0 && strncmp(b + n, ".so", 3) == 0 &&
		    (b[n + 3] == '\0' || b[n + 3] == '.'))
			return 1;
	}
	return 0;
}

void *__wrap_dlopen(const char *file, int mode)
{
	(void)mode;
	if (!file || is_libc_name(file))
		return (void *)self_handle;
	set_error("%s: cannot load: this program is a static binary without a dynamic loader; "
		  "only its own symbols can be looked up (dlopen(NULL), ctypes.CDLL(None))", file);
	return NULL;
}

void *__wrap_dlsym(void *restrict handle, const char *restrict name)
{
	if (handle != (void *)self_handle && handle != RTLD_DEFAULT) {
		set_error("dlsym: invalid handle %p", handle);
		return NULL;
	}
	size_t lo = 0, hi = husk_nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, husk_syms[mid].name);
		if (c == 0 && husk_syms[mid].addr) /* a weak reference left unresolved: not linked */
			return husk_syms[mid].addr;
		if (c == 0)
			break;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	set_error("%s: symbol not found (this static binary offers only the symbols linked into it)", name);
	return NULL;
}

int __wrap_dlclose(void *handle)
{
	if (handle == (void *)self_handle)
		return 0;
	set_error("dlclose: invalid handle %p", handle);
	return 1;
}

char *__wrap_dlerror(void)
{
	if (err_set) {
		err_set = 0;
		return err_buf;
	}
	return __real_dlerror();
}
