/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a program comes from: an image name looked up in the image
 * directory (with its system disk and default environment), or a path; and
 * the environment the program gets. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "errmsg.h"
#include "husk/abi.h"
#include "exit_codes.h"
#include "image.h"

/* Is KEY (of KEY=VALUE) already set in the environment? */
static int env_has(const struct options *o, const char *kv)
{
	size_t n = strcspn(kv, "=");
	for (int i = 0; i < o->nenv; i++)
		if (!strncmp(o->env[i], kv, n) && o->env[i][n] == '=')
			return 1;
	return 0;
}

/* An image's default environment, NAME.env: KEY=VALUE lines.  Given -e
 * variables come later and win (the guest's libc takes the first match, so
 * they go in front). */
void image_env(const char *path, struct options *o)
{
	char *file;
	if (asprintf(&file, "%s.env", path) < 0)
		die(EXIT_INTERNAL, "out of memory");
	FILE *f = fopen(file, "re");
	free(file);
	if (!f)
		return;
	char line[4096];
	int given = o->nenv;
	char **env = calloc(given + 64, sizeof *env);
	if (!env)
		die(EXIT_INTERNAL, "out of memory");
	memcpy(env, o->env, given * sizeof *env);
	int n = given;
	while (n < given + 64 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		/* env_has looks at the lines taken so far too */
		o->nenv = n;
		o->env = env;
		if (strchr(line, '=') && line[0] != '=' && line[0] != '#' && !env_has(o, line) && !(env[n++] = strdup(line)))
			die(EXIT_INTERNAL, "out of memory");
	}
	fclose(f);
	o->env = env;
	o->nenv = n;
}

/* The guest's environment is what -e gives, then the image's NAME.env, then
 * this small default set, each only for names not set yet; nothing of the
 * host's. */
void add_default_env(struct options *o)
{
	static char *defaults[] = { "PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8" };
	char **env = calloc(o->nenv + 3, sizeof *env);
	if (!env)
		die(EXIT_INTERNAL, "out of memory");
	memcpy(env, o->env, o->nenv * sizeof *env);
	o->env = env;
	for (int i = 0; i < 3; i++)
		if (!env_has(o, defaults[i]))
			env[o->nenv++] = defaults[i];
}

/* The image directory, the first of these that applies:
 *  1. $HUSK_IMAGES when it is set: the user's choice, used as given (a
 *     missing one is an error, not a reason to look elsewhere: that would
 *     hide a typo behind other images);
 *  2. build/images beside the husk binary, when it is a directory: husk run
 *     from a checkout, where `make` puts ./husk and build/ side by side;
 *  3. ../lib/husk from the binary's directory: an installed husk, PREFIX/bin/
 *     husk with its images in PREFIX/lib/husk (`make install`).
 * The binary is /proc/self/exe, its real path (no symlink in it), so a
 * symlink to husk (~/bin/husk) finds the images of the husk it points to,
 * from any current directory.  The checkout comes before the installed
 * layout because a checkout's ../lib/husk is outside it (some unrelated
 * directory), while an installed PREFIX/bin has no build/ beside it.
 * Returns 0, or -1 with a one-line reason in err. */
static int image_dir(char dir[PATH_MAX], char *err, size_t n)
{
	struct stat st;
	const char *env = getenv("HUSK_IMAGES");
	if (env && *env) {
		if (strlen(env) >= PATH_MAX)
			return errmsg(err, n, "image directory $HUSK_IMAGES is too long");
		snprintf(dir, PATH_MAX, "%s", env);
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			return errmsg_errno(err, n, "image directory %s (from $HUSK_IMAGES) is not a directory", dir);
		return 0;
	}
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len < 0)
		return errmsg_errno(err, n, "cannot find my own binary (/proc/self/exe)");
	exe[len] = 0;
	*strrchr(exe, '/') = 0; /* the binary's directory ("" for /) */
	char checkout[PATH_MAX + 16], installed[PATH_MAX + 16];
	snprintf(checkout, sizeof checkout, "%s/build/images", exe);
	char *up = strrchr(exe, '/');
	if (up)
		*up = 0;
	snprintf(installed, sizeof installed, "%s/lib/husk", exe);
	const char *found = NULL;
	if (!stat(checkout, &st) && S_ISDIR(st.st_mode))
		found = checkout;
	else if (!stat(installed, &st) && S_ISDIR(st.st_mode))
		found = installed;
	else
		return errmsg(err, n, "no image directory: neither %s nor %s exists (set HUSK_IMAGES)", checkout,
			      installed);
	if (strlen(found) >= PATH_MAX)
		return errmsg(err, n, "image directory %s: path too long", found);
	memcpy(dir, found, strlen(found) + 1);
	return 0;
}

/* One image of the image directory, with what its NAME.info says (each
 * field malloc'd, NULL where not given). */
struct image {
	char *name, *version, *aliases, *description, *snapshot;
	unsigned long long bytes; /* on disk: the program and its system disk */
};

struct image_list {
	struct image *v;
	int n;
};

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		die(EXIT_INTERNAL, "out of memory");
	return d;
}

/* NAME.info: KEY=VALUE lines (scripts/image-info writes them); '#' starts a
 * comment line, unknown keys are ignored.  A missing file leaves the fields
 * NULL. */
static void read_info(int dfd, struct image *im)
{
	char file[NAME_MAX + 8];
	snprintf(file, sizeof file, "%s.info", im->name);
	int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *eq = strchr(line, '=');
		if (line[0] == '#' || !eq)
			continue;
		*eq = 0;
		char **field = NULL;
		if (!strcmp(line, "version"))
			field = &im->version;
		else if (!strcmp(line, "aliases"))
			field = &im->aliases;
		else if (!strcmp(line, "description"))
			field = &im->description;
		else if (!strcmp(line, "snapshot"))
			field = &im->snapshot;
		if (field && eq[1]) {
			free(*field);
			*field = xstrdup(eq + 1);
		}
	}
	fclose(f);
}

int image_snapshot_level(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : xstrdup(".");
	struct image im = { .name = xstrdup(slash ? slash + 1 : path) };
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		read_info(dfd, &im);
		close(dfd);
	}
	int level = im.snapshot && !strcmp(im.snapshot, "program") ? HUSK_SNAPSHOT_PROGRAM : HUSK_SNAPSHOT_KERNEL;
	free(dir);
	free(im.name), free(im.version), free(im.aliases), free(im.description), free(im.snapshot);
	return level;
}

/* Bytes a file takes on disk (its allocated blocks: a system disk is
 * sparse), 0 if there is none. */
static unsigned long long disk_bytes(int dfd, const char *name)
{
	struct stat st;
	return fstatat(dfd, name, &st, 0) ? 0 : (unsigned long long)st.st_blocks * 512;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && !strcmp(s + n - m, suffix);
}

/* An image is an executable regular file of the directory (a symlink to one
 * too) whose name is not hidden and is not one of an image's companions
 * (NAME.disk, NAME.env, NAME.info); directories (build/images/python-lib)
 * and other files (python-stdlib.zip) are not images. */
static int is_image(int dfd, const char *name)
{
	struct stat st;
	if (name[0] == '.' || has_suffix(name, ".disk") || has_suffix(name, ".env") || has_suffix(name, ".info"))
		return 0;
	return !fstatat(dfd, name, &st, 0) && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

static int image_cmp(const void *a, const void *b)
{
	return strcmp(((const struct image *)a)->name, ((const struct image *)b)->name);
}

/* The images in dir, sorted by name, with their .info and sizes.  Returns
 * 0, or -1 with a one-line reason in err. */
static int scan_images(const char *dir, struct image_list *l, char *err, size_t n)
{
	*l = (struct image_list){ 0 };
	DIR *d = opendir(dir);
	if (!d)
		return errmsg_errno(err, n, "cannot read the image directory %s", dir);
	int dfd = dirfd(d), cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_image(dfd, e->d_name))
			continue;
		if (l->n == cap) {
			cap = cap ? 2 * cap : 8;
			if (!(l->v = realloc(l->v, cap * sizeof *l->v)))
				die(EXIT_INTERNAL, "out of memory");
		}
		struct image *im = &l->v[l->n++];
		*im = (struct image){ .name = xstrdup(e->d_name) };
		read_info(dfd, im);
		char disk[NAME_MAX + 8];
		snprintf(disk, sizeof disk, "%s.disk", im->name);
		im->bytes = disk_bytes(dfd, im->name) + disk_bytes(dfd, disk);
	}
	closedir(d);
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, image_cmp);
	return 0;
}

static void free_images(struct image_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].version);
		free(l->v[i].aliases);
		free(l->v[i].description);
		free(l->v[i].snapshot);
	}
	free(l->v);
}

/* Is name one of the image's aliases (exactly; the list is separated by
 * spaces or commas)? */
static int has_alias(const struct image *im, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = im->aliases; p && *p;) {
		p += strspn(p, " ,\t");
		size_t n = strcspn(p, " ,\t");
		if (n && n == len && !strncmp(p, name, n))
			return 1;
		p += n;
	}
	return 0;
}

/* "lua (lua5.4), python (python3, python3.11)": the names a user may type,
 * for the message about an unknown one.  malloc'd. */
static char *image_names(const struct image_list *l)
{
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);
	if (!f)
		die(EXIT_INTERNAL, "out of memory");
	for (int i = 0; i < l->n; i++) {
		fprintf(f, "%s%s", i ? ", " : "", l->v[i].name);
		int k = 0;
		for (const char *p = l->v[i].aliases; p && *(p += strspn(p, " ,\t"));) {
			size_t n = strcspn(p, " ,\t");
			fprintf(f, "%s%.*s", k++ ? ", " : " (", (int)n, p);
			p += n;
		}
		if (k)
			fputc(')', f);
	}
	if (fclose(f))
		die(EXIT_INTERNAL, "out of memory");
	return s;
}

/* An image name (no slash) is looked up in the image directory: a file of
 * that name, else the image that lists it among its aliases (NAME.info), so
 * python3 is the python image.  An image may come with a system disk,
 * NAME.disk, mounted on /usr. */
char *resolve_program(const char *name, char **system_disk)
{
	*system_disk = NULL;
	if (strchr(name, '/'))
		return xstrdup(name);
	if (!*name || name[0] == '.')
		usage_error("bad image name '%s'", name);
	char dir[PATH_MAX], err[2 * PATH_MAX + 128];
	if (image_dir(dir, err, sizeof err))
		usage_error("unknown image '%s': %s; give a path like ./%s to run a file", name, err, name);
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		die(EXIT_INTERNAL, "out of memory");
	if (access(path, F_OK)) {
		/* Not a file of the directory: an alias, or unknown. */
		struct image_list l;
		if (scan_images(dir, &l, err, sizeof err))
			usage_error("unknown image '%s': %s", name, err);
		int i = 0;
		while (i < l.n && !has_alias(&l.v[i], name))
			i++;
		if (i == l.n) {
			if (!l.n)
				usage_error("unknown image '%s' (no images in %s; give a path like ./%s to run a file)",
					    name, dir, name);
			usage_error("unknown image '%s' (images in %s: %s; give a path like ./%s to run a file)", name,
				    dir, image_names(&l), name);
		}
		free(path);
		if (asprintf(&path, "%s/%s", dir, l.v[i].name) < 0)
			die(EXIT_INTERNAL, "out of memory");
		free_images(&l);
	}
	if (asprintf(system_disk, "%s.disk", path) < 0)
		die(EXIT_INTERNAL, "out of memory");
	if (access(*system_disk, F_OK)) {
		free(*system_disk);
		*system_disk = NULL;
	}
	return path;
}

/* "21M", "9.5M", "320K": a size as ls -sh would print it. */
static void human_size(unsigned long long bytes, char *out, size_t n)
{
	static const char unit[] = "BKMGTP";
	double v = bytes;
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(out, n, "%lluB", bytes);
	else
		snprintf(out, n, v < 9.95 ? "%.1f%c" : "%.0f%c", v, unit[u]);
}

/* The aliases as one word, "python3,python3.11", or "-": the table's columns
 * stay separated by blanks. */
static char *alias_word(const struct image *im)
{
	char *w = xstrdup(im->aliases ? im->aliases : "");
	char *o = w;
	for (const char *p = w; *(p += strspn(p, " ,\t"));) {
		size_t n = strcspn(p, " ,\t");
		if (o != w)
			*o++ = ',';
		memmove(o, p, n);
		o += n;
		p += n;
	}
	*o = 0;
	if (!*w) {
		free(w);
		w = xstrdup("-");
	}
	return w;
}

int images_command(int argc, char **argv)
{
	if (argc > 2)
		usage_error("'husk images' takes no arguments (got '%s')", argv[2]);
	char dir[PATH_MAX], err[2 * PATH_MAX + 128];
	if (image_dir(dir, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	struct image_list l;
	if (scan_images(dir, &l, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	if (!l.n) {
		fprintf(stderr, "husk: no images in %s\n", dir);
		free_images(&l);
		return 0;
	}
	char **aliases = calloc(l.n, sizeof *aliases);
	char(*sizes)[16] = calloc(l.n, sizeof *sizes);
	if (!aliases || !sizes)
		die(EXIT_INTERNAL, "out of memory");
	int wn = 4, wa = 7, wv = 7, ws = 4; /* the headings' widths */
	for (int i = 0; i < l.n; i++) {
		const struct image *im = &l.v[i];
		aliases[i] = alias_word(im);
		human_size(im->bytes, sizes[i], sizeof sizes[i]);
		int n = strlen(im->name), a = strlen(aliases[i]), v = im->version ? strlen(im->version) : 1,
		    s = strlen(sizes[i]);
		wn = n > wn ? n : wn;
		wa = a > wa ? a : wa;
		wv = v > wv ? v : wv;
		ws = s > ws ? s : ws;
	}
	printf("%-*s  %-*s  %-*s  %*s  %s\n", wn, "NAME", wa, "ALIASES", wv, "VERSION", ws, "SIZE", "CONTENTS");
	for (int i = 0; i < l.n; i++) {
		const struct image *im = &l.v[i];
		printf("%-*s  %-*s  %-*s  %*s  %s\n", wn, im->name, wa, aliases[i], wv,
		       im->version ? im->version : "-", ws, sizes[i], im->description ? im->description : "-");
		free(aliases[i]);
	}
	free(aliases);
	free(sizes);
	free_images(&l);
	return fflush(stdout) ? EXIT_INTERNAL : 0;
}
