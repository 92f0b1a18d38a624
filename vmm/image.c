/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a program comes from: an image name looked up in the image
 * directory (with its system disk and default environment), or a path; and
 * the environment the program gets. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "errmsg.h"
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

/* The image directory: $HUSK_IMAGES, else build/images beside the husk
 * binary (where `make` puts them). */
static void image_dir(char dir[PATH_MAX])
{
	const char *env = getenv("HUSK_IMAGES");
	if (env && *env) {
		snprintf(dir, PATH_MAX, "%s", env);
		return;
	}
	ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
	if (n < 0)
		die(EXIT_INTERNAL, "cannot find my own binary: %s", strerror(errno));
	dir[n] = 0;
	char *slash = strrchr(dir, '/');
	snprintf(slash, PATH_MAX - (slash - dir), "/build/images");
}

/* An image name (no slash) is looked up in the image directory; an image
 * may come with a system disk, NAME.disk, mounted on /usr. */
char *resolve_program(const char *name, char **system_disk)
{
	*system_disk = NULL;
	if (strchr(name, '/'))
		return strdup(name);
	if (!*name || name[0] == '.')
		usage_error("bad image name '%s'", name);
	char dir[PATH_MAX];
	image_dir(dir);
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		die(EXIT_INTERNAL, "out of memory");
	if (access(path, F_OK))
		usage_error("unknown image '%s' (no %s; give a path like ./%s to run a file)", name, path, name);
	if (asprintf(system_disk, "%s.disk", path) < 0)
		die(EXIT_INTERNAL, "out of memory");
	if (access(*system_disk, F_OK)) {
		free(*system_disk);
		*system_disk = NULL;
	}
	return path;
}
