/* SPDX-License-Identifier: GPL-2.0-only */
/* Debian images (docs/debian-binaries.md): `husk image build NAME PACKAGE...`
 * makes a read-only root file system from Debian's own packages, as apt on
 * the host resolves and downloads them, never running a maintainer script;
 * `husk run --image NAME COMMAND...` boots with it as the guest's "/".
 * An image lives in the cache (cache.h) as images/NAME/: root.ext2, the
 * disk; root.env, the run's default environment; manifest.json, what it
 * was built from.  The packages are kept in debs/ for the next build. */
#ifndef HUSK_DEBIAN_H
#define HUSK_DEBIAN_H
#include <jansson.h>
#include <stddef.h>

/* What every image holds besides the packages asked for: a shell, the
 * core tools and the other usual ones of a shell script (grep, sed, find,
 * diff, gzip, tar), the C.UTF-8 locale and ldconfig (libc-bin), /etc/services,
 * time zones, /etc/os-release. */
#define DEBIAN_BASE_PACKAGES "base-files", "bash", "coreutils", "dash", "diffutils", "findutils", "grep", "gzip", \
	"libc-bin", "netbase", "sed", "tar", "tzdata"

/* husk image build|ls|rm ...: husk's exit status. */
int debian_image_command(int argc, char **argv);

/* The image NAME's disk, the base of its .env file (root: root.env) and
 * the disk's digest from its manifest (NULL if the manifest has none: for
 * the record only), malloc'd; 0, or -1 with a one-line reason (no such
 * image: how to build it). */
int debian_image_find(const char *name, char **disk, char **env_base, char **digest, char *err, size_t errlen);

/* --- the steps, one file each -------------------------------------------- */

/* build.c: husk image build NAME PACKAGE... */
int debian_image_build(int argc, char **argv);

/* store.c: the cache's images. */
int debian_image_ls(int argc, char **argv);
int debian_image_rm(int argc, char **argv);
/* An image name: a-z 0-9 . _ -, not starting with . or -, 1 to 64 long. */
int image_name_ok(const char *name);
/* images/NAME/manifest.json (images: the directory's fd) as a JSON object,
 * or NULL. */
json_t *manifest_load(int images, const char *name);
/* rm -rf path: never following a symlink, never leaving its file system. */
void remove_tree(const char *path);

/* A package of the closure, as apt names it. */
struct deb {
	char *name, *version, *arch;
};

struct deb_list {
	struct deb *v;
	int n;
};

/* tools.c: host tools, run by absolute path with a small environment of
 * their own (and the host's proxy settings, for apt).  Each returns the
 * tool's exit status, or -1 if it could not run.  out: its stdout (-1:
 * husk's stderr); cwd: where it runs (NULL: here). */
int tool_run(char *const argv[], int out, const char *cwd);
/* The same, its stdout collected into *text (malloc'd, NUL-terminated). */
int tool_output(char *const argv[], char **text);
/* dpkg-deb --fsys-tarfile DEB | tar -x into dir, an empty directory (tar
 * follows no symlink of its own archive; root_merge then moves the files
 * into the image's tree, following its symlinks inside it only). */
int tool_unpack(const char *deb, const char *dir);

/* closure.c: the packages (with those they depend on, without
 * recommendations) as apt would install them on an empty system. */
int closure_resolve(char *const packages[], int n, const char *work, struct deb_list *out, char *err,
		    size_t errlen);
/* The .deb's file name as apt-get download writes it. */
char *deb_file_name(const struct deb *d);
void deb_list_free(struct deb_list *l);

/* alternatives.c: the links Debian's update-alternatives would make for
 * the packages' postinst scripts (`--install LINK NAME PATH PRIORITY`, the
 * highest priority winning, with its --slave links), made under rootfd.
 * ctrl: a directory holding one subdirectory of control files per
 * package.  Returns how many groups were set up, or -1 with a reason. */
int alternatives_apply(int rootfd, const char *ctrl, const struct deb_list *debs, char *err, size_t errlen);

/* root_fs.c: what a run needs in the unpacked tree under rootfd: /etc's
 * passwd, group, hosts, hostname, resolv.conf (the guest kernel's DNS
 * server), services if no package gave it, localtime (UTC); the mount
 * points; 0 or -1 with a reason. */
int root_fs_complete(int rootfd, char *err, size_t errlen);
/* Opens path (relative) inside rootfd as if rootfd were "/": no symlink
 * in the tree leads outside it (openat2 RESOLVE_IN_ROOT). */
int root_open(int rootfd, const char *path, int flags, unsigned mode);
/* mkdir -p of path (relative) inside rootfd, the same way; the last
 * directory's fd, or -1. */
int root_mkdirs(int rootfd, const char *path);
/* Moves everything under the directory srcfd into the tree under rootfd,
 * each directory's path resolved inside the tree (Debian's /bin -> usr/bin,
 * a package's absolute link: never out of it), files and links renamed
 * over what is there, directories merged and given the package's mode.
 * 0, or -1 with a reason. */
int root_merge(int rootfd, int srcfd, char *err, size_t errlen);
#endif
