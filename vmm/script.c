/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "errmsg.h"
#include "full_io.h"
#include "husk/abi.h"
#include "script.h"

#define MAX_NOTES 3

/* What one option argument (not "-" or "--") is to an interpreter. */
enum option_kind { OPT_ALONE, OPT_TAKES_NEXT, OPT_NO_SCRIPT };

/* CPython 3.11: letters may be grouped, -c and -m end the options with no
 * script, -W and -X take an argument (attached or next), one long option
 * takes one. */
static enum option_kind python_option(const char *a)
{
	if (a[1] == '-')
		return strcmp(a, "--check-hash-based-pycs") ? OPT_ALONE : OPT_TAKES_NEXT;
	for (const char *p = a + 1; *p; p++) {
		if (*p == 'c' || *p == 'm')
			return OPT_NO_SCRIPT;
		if (*p == 'W' || *p == 'X')
			return p[1] ? OPT_ALONE : OPT_TAKES_NEXT;
	}
	return OPT_ALONE;
}

/* Lua 5.4: one option per argument; -e and -l take one (attached or next);
 * a script may follow -e. */
static enum option_kind lua_option(const char *a)
{
	return (a[1] == 'e' || a[1] == 'l') && !a[2] ? OPT_TAKES_NEXT : OPT_ALONE;
}

static const struct interpreter {
	const char *image;
	enum option_kind (*option)(const char *a);
} interpreters[] = {
	{ "python", python_option },
	{ "lua", lua_option },
};

/* Where the script is among the program's arguments (0: none; it reads a
 * command, a module or stdin, or the image is no interpreter we know). */
static int script_index(const char *image, const struct options *o)
{
	const struct interpreter *it = NULL;
	for (size_t i = 0; image && i < sizeof interpreters / sizeof interpreters[0]; i++)
		if (!strcmp(image, interpreters[i].image))
			it = &interpreters[i];
	for (int i = 1; it && i < o->nargs; i++) {
		const char *a = o->args[i];
		if (a[0] != '-')
			return i;
		if (!strcmp(a, "-"))
			return 0;
		if (!strcmp(a, "--"))
			return i + 1 < o->nargs ? i + 1 : 0;
		enum option_kind k = it->option(a);
		if (k == OPT_NO_SCRIPT)
			return 0;
		i += k == OPT_TAKES_NEXT;
	}
	return 0;
}

/* p is one of roots, or below one. */
static int under(const char *p, const char *const *roots, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(roots[i]);
		if (!strncmp(p, roots[i], l) && (p[l] == '/' || !p[l]))
			return 1;
	}
	return 0;
}

/* An absolute path into what the guest has from the start (the system
 * disk, the datasets, the workdir, its /dev and /etc; with a Debian image,
 * the image's system directories too, and / and /tmp themselves).  Its /tmp
 * starts empty: a path below it, as one below /home or /srv, can only be
 * the host's. */
static int guest_path(const struct options *o, const char *p)
{
	static const char *const roots[] = { "/usr", "/data", "/workdir", "/dev", "/etc" };
	static const char *const image_roots[] = { "/bin", "/sbin", "/lib", "/lib64", "/opt", "/var", "/proc", "/run" };
	if (under(p, roots, sizeof roots / sizeof roots[0]))
		return 1;
	return o->image && (!strcmp(p, "/") || !strcmp(p, "/tmp") ||
			    under(p, image_roots, sizeof image_roots / sizeof image_roots[0]));
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Is the relative path rel inside the workdir (and so in the guest's
 * /workdir)? */
static int in_workdir(const char *workdir, const char *rel)
{
	char path[8192];
	return snprintf(path, sizeof path, "%s/%s", workdir, rel) < (int)sizeof path && exists(path);
}

/* Would the guest fail to see what the host has at this argument? */
static int host_only(const struct options *o, const char *arg)
{
	if (!*arg || arg[0] == '-' || (arg[0] == '/' && guest_path(o, arg)) || !exists(arg))
		return 0;
	return arg[0] == '/' || !o->workdir || !in_workdir(o->workdir, arg);
}

/* The script, opened for copying into the scratch /workdir. */
static int open_script(const char *arg, struct script *sc, char *err, size_t n)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 && errno == ENOENT)
		return errmsg(err, n,
			      "%s: no such file on the host (without -w the program starts in an empty /workdir, "
			      "where the script named on the command line is copied)", arg);
	if (fd < 0 || fstat(fd, &st) < 0) {
		errmsg_errno(err, n, "cannot open the script %s", arg);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return errmsg(err, n, "%s is a directory: give it as the workdir (-w %s) to run from it", arg, arg);
		return errmsg(err, n, "the script %s is not a regular file", arg);
	}
	const char *slash = strrchr(arg, '/'), *name = slash ? slash + 1 : arg;
	if (strlen(name) >= sizeof sc->name) {
		close(fd);
		return errmsg(err, n, "the script's name is longer than 255 bytes");
	}
	sc->fd = fd;
	sc->size = (uint64_t)st.st_size;
	strcpy(sc->name, name);
	return 0;
}

/* With -w: the script must be where the guest will look, in the workdir. */
static int check_in_workdir(const struct options *o, const char *arg, char *err, size_t n)
{
	if (arg[0] == '/' ? guest_path(o, arg) || !exists(arg) : in_workdir(o->workdir, arg))
		return 0;
	if (arg[0] == '/')
		return errmsg(err, n,
			      "%s is a host path the guest cannot see (it sees /workdir = %s, /data/NAME for --ro, "
			      "/usr): copy the script into %s", arg, o->workdir, o->workdir);
	return errmsg(err, n, "%s is not in the workdir %s: the program starts in /workdir, a copy of %s; put the "
		      "script there (or run without -w to have it copied)", arg, o->workdir, o->workdir);
}

int script_find(const char *image, struct options *o, struct script *sc, char *err, size_t n)
{
	sc->fd = -1;
	int at = script_index(image, o);
	if (at > 0) {
		const char *arg = o->args[at];
		if (o->workdir) {
			if (check_in_workdir(o, arg, err, n))
				return -1;
		} else if (!(arg[0] == '/' && guest_path(o, arg))) {
			if (open_script(arg, sc, err, n))
				return -1;
			o->args[at] = sc->name;
		}
	}
	int notes = 0;
	for (int i = 1; i < o->nargs && notes < MAX_NOTES; i++)
		if (i != at && host_only(o, o->args[i])) {
			fprintf(stderr, "husk: note: '%s' is a host path the guest cannot see (give its folder with "
				"-w DIR or --ro NAME=DIR)\n", o->args[i]);
			notes++;
		}
	return 0;
}

int script_read(struct script *sc, void *buf, char *err, size_t n)
{
	int r = full_pread(sc->fd, buf, sc->size, 0);
	if (r && errno)
		errmsg_errno(err, n, "reading the script %s", sc->name);
	else if (r)
		errmsg(err, n, "the script %s shrank while it was read", sc->name);
	close(sc->fd);
	sc->fd = -1;
	return r;
}

int script_load(struct script *sc, struct guest_mem *mem, uint64_t image_end, uint64_t ram_size, char *err,
		size_t n)
{
	uint64_t gpa = (image_end + 4095) & ~4095ull, room = HUSK_IMAGE_LIMIT(ram_size);
	if (gpa > room || sc->size > room - gpa) {
		close(sc->fd);
		sc->fd = -1;
		return errmsg(err, n, "the script %s (%llu bytes) does not fit in guest memory with the program "
			      "(--memory)", sc->name, (unsigned long long)sc->size);
	}
	sc->gpa = gpa;
	return script_read(sc, gpa_fixed(mem, gpa, sc->size ? sc->size : 1), err, n);
}
