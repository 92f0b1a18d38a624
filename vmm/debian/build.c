/* SPDX-License-Identifier: GPL-2.0-only */
/* husk image build NAME PACKAGE... (docs/debian-binaries.md has the steps).
 * A build works in images/.build-NAME-XXXXXX and replaces images/NAME by
 * a rename only when everything is there: a failed or interrupted build
 * leaves the old image as it was. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cache.h"
#include "debian/debian.h"
#include "disks/copyin.h"
#include "disks/disks.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "options.h"

#define IMAGE_FORMAT "husk debian image 2" /* changes with what a build puts in an image */
#define DEBIAN_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *const base_packages[] = { DEBIAN_BASE_PACKAGES };
#define NBASE ((int)(sizeof base_packages / sizeof base_packages[0]))

/* A Debian package name (Debian policy 5.6.7): a-z 0-9 + - ., at least two
 * long, starting with a letter or digit. */
static int good_package_name(const char *s)
{
	size_t n = strlen(s);
	return n >= 2 && n <= 128 && strchr("abcdefghijklmnopqrstuvwxyz0123456789", s[0]) &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789+-.") == n;
}

/* --- progress ------------------------------------------------------------------ */

static int tty;

static void progress(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%shusk: image %s: ", tty ? "\r\033[K" : "", name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A counter, rewritten in place on a terminal; elsewhere only its first
 * and last step are shown (a log gets no 200 lines). */
static void counter(const char *name, const char *what, int i, int n, const char *item)
{
	if (tty)
		fprintf(stderr, "\r\033[Khusk: image %s: %s %d/%d %s", name, what, i, n, item);
	else if (i == 1)
		fprintf(stderr, "husk: image %s: %s %d packages\n", name, what, n);
	if (tty && i == n)
		fputc('\n', stderr);
}

/* --- the manifest --------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct deb *)a)->name, ((const struct deb *)b)->name);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_t *string_array(char *const *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* Does the manifest describe an image of these packages, as apt resolves
 * them today, made by this husk's way of building? */
static int up_to_date(json_t *m, char *const *requested, int nreq, const struct deb_list *debs)
{
	json_t *req = json_object_get(m, "requested"), *pk = json_object_get(m, "packages");
	if (!json_is_string(json_object_get(m, "format")) ||
	    strcmp(json_string_value(json_object_get(m, "format")), IMAGE_FORMAT) || !json_is_array(req) ||
	    !json_is_array(pk) || json_array_size(req) != (size_t)nreq || json_array_size(pk) != (size_t)debs->n)
		return 0;
	for (int i = 0; i < nreq; i++) {
		const char *s = json_string_value(json_array_get(req, i));
		if (!s || strcmp(s, requested[i]))
			return 0;
	}
	for (int i = 0; i < debs->n; i++) {
		json_t *p = json_array_get(pk, i);
		const char *n = json_string_value(json_object_get(p, "name")),
			   *v = json_string_value(json_object_get(p, "version")),
			   *a = json_string_value(json_object_get(p, "arch"));
		if (!n || !v || !a || strcmp(n, debs->v[i].name) || strcmp(v, debs->v[i].version) ||
		    strcmp(a, debs->v[i].arch))
			return 0;
	}
	return 1;
}

/* SHA-256 of the file, in hex. */
static int file_sha256(int fd, char hex[2 * SHA256_DIGEST_SIZE + 1])
{
	struct sha256_ctx c;
	sha256_init(&c);
	static uint8_t buf[1 << 20];
	ssize_t k;
	off_t off = 0;
	while ((k = pread(fd, buf, sizeof buf, off)) > 0) {
		sha256_update(&c, k, buf);
		off += k;
	}
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&c, sizeof d, d);
	for (size_t i = 0; i < sizeof d; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return k < 0 ? -1 : 0;
}

/* --- the build ------------------------------------------------------------------ */

struct build {
	const char *name;
	char images[PATH_MAX], debs[PATH_MAX], work[PATH_MAX], root[PATH_MAX + 8];
	int images_fd, debs_fd, root_fd; /* root_fd: the tree, once unpack made it */
	char **requested; /* sorted, without repeats */
	int nreq;
	struct deb_list closure;
	int alternatives, ld_cache;
	char python[24]; /* "python3.11": its modules were compiled; "": not */
	uint64_t files, disk_bytes;
	char digest[2 * SHA256_DIGEST_SIZE + 1];
};

/* The packages not in the cache yet, downloaded by apt-get into the work
 * directory and then moved into it. */
static int download(struct build *b, char *err, size_t n)
{
	char **argv = calloc(b->closure.n + 12, sizeof *argv);
	char **files = calloc(b->closure.n, sizeof *files);
	if (!argv || !files)
		return errmsg(err, n, "out of memory");
	int k = 0, first = 0, missing = 0, r = 0;
	argv[k++] = "/usr/bin/apt-get";
	argv[k++] = "download";
	argv[k++] = "-q";
	if (geteuid() == 0) { /* apt's _apt user could not write into husk's 0700 cache */
		argv[k++] = "-o";
		argv[k++] = "APT::Sandbox::User=root";
	}
	first = k; /* from here on, NAME:ARCH=VERSION, malloc'd */
	for (int i = 0; i < b->closure.n; i++) {
		const struct deb *d = &b->closure.v[i];
		files[i] = deb_file_name(d);
		if (!files[i])
			return errmsg(err, n, "out of memory");
		if (faccessat(b->debs_fd, files[i], R_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			cache_touch(b->debs_fd, files[i]); /* used: the last the cache's cap removes */
			continue;
		}
		if (asprintf(&argv[k++], "%s:%s=%s", d->name, d->arch, d->version) < 0)
			return errmsg(err, n, "out of memory");
		missing++;
	}
	char dl[PATH_MAX + 8];
	snprintf(dl, sizeof dl, "%s/dl", b->work);
	if (missing) {
		progress(b->name, "downloading %d of %d packages (%s keeps them)", missing, b->closure.n, b->debs);
		if (mkdir(dl, 0700) < 0)
			r = errmsg(err, n, "cannot make %s: %s", dl, strerror(errno));
		int st = r ? 0 : tool_run(argv, -1, dl);
		if (st)
			r = errmsg(err, n, "apt-get download failed (exit %d; its message is above)", st);
	}
	int dfd = missing && !r ? open(dl, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	for (int i = 0; i < b->closure.n && !r && dfd >= 0; i++)
		if (faccessat(b->debs_fd, files[i], R_OK, AT_SYMLINK_NOFOLLOW) &&
		    renameat(dfd, files[i], b->debs_fd, files[i]) < 0)
			r = errmsg(err, n, "apt-get download gave no %s (%s)", files[i], strerror(errno));
	if (dfd >= 0)
		close(dfd);
	for (int i = 0; i < b->closure.n; i++)
		free(files[i]);
	free(files);
	for (int i = first; i < k; i++)
		free(argv[i]);
	free(argv);
	return r;
}

/* Debian's merged /usr first (bin, sbin, lib, lib64 are links into usr),
 * then every package: its files unpacked into an empty directory and
 * moved into the tree (root_merge: a path through a link resolves inside
 * the tree, never on the host), its control files into ctrl/NAME/ (for
 * the alternatives). */
static int unpack(struct build *b, char *err, size_t n)
{
	static const char *const merged[] = { "bin", "sbin", "lib", "lib64" };
	char path[PATH_MAX + 64], pkg[PATH_MAX + 8];
	if (mkdir(b->root, 0755) < 0)
		return errmsg(err, n, "cannot make %s: %s", b->root, strerror(errno));
	snprintf(path, sizeof path, "%s/usr", b->root);
	mkdir(path, 0755);
	for (int i = 0; i < 4; i++) {
		char target[16];
		snprintf(path, sizeof path, "%s/usr/%s", b->root, merged[i]);
		snprintf(target, sizeof target, "usr/%s", merged[i]);
		if (mkdir(path, 0755) < 0 || (snprintf(path, sizeof path, "%s/%s", b->root, merged[i]), symlink(target, path)))
			return errmsg(err, n, "cannot make %s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof path, "%s/ctrl", b->work);
	if (mkdir(path, 0700) < 0)
		return errmsg(err, n, "cannot make %s: %s", path, strerror(errno));
	if ((b->root_fd = copyin_open_dir(b->root, err, n)) < 0)
		return -1;
	snprintf(pkg, sizeof pkg, "%s/pkg", b->work);
	int r = 0;
	for (int i = 0; i < b->closure.n && !r; i++) {
		const struct deb *d = &b->closure.v[i];
		char *file = deb_file_name(d), deb[PATH_MAX + NAME_MAX + 2], ctrl[PATH_MAX + 300];
		if (!file) {
			r = errmsg(err, n, "out of memory");
			break;
		}
		snprintf(deb, sizeof deb, "%s/%s", b->debs, file);
		free(file);
		snprintf(ctrl, sizeof ctrl, "%s/ctrl/%s", b->work, d->name);
		counter(b->name, "unpacking", i + 1, b->closure.n, d->name);
		char *control[] = { "/usr/bin/dpkg-deb", "--control", deb, ctrl, NULL };
		int st = mkdir(pkg, 0700) < 0 ? -1 : tool_unpack(deb, pkg);
		if (!st)
			st = tool_run(control, -1, NULL);
		if (st) {
			r = errmsg(err, n, "cannot unpack %s (exit %d)", deb, st);
			break;
		}
		int pfd = open(pkg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = pfd < 0 ? errmsg(err, n, "cannot open %s: %s", pkg, strerror(errno)) : root_merge(b->root_fd, pfd, err, n);
		if (pfd >= 0)
			close(pfd);
		remove_tree(pkg); /* what is left: the package's directories */
	}
	return r;
}

/* The cache glibc's loader reads (ldconfig -r chroots: root only).  Without
 * one the loader searches its default directories, and finds every library
 * there; it only looks longer. */
static void ld_cache(struct build *b)
{
	if (geteuid() != 0)
		return;
	char *argv[] = { "/usr/sbin/ldconfig", "-r", b->root, NULL };
	b->ld_cache = tool_run(argv, -1, NULL) == 0;
}

/* Python's modules compiled now, as Debian's py3compile would at install:
 * by the host's python3.N of the image's very version (the bytecode
 * format is per minor version), else not at all (each run then compiles
 * what it imports, in memory: the image is read-only). */
static void compile_python(struct build *b)
{
	char dir[PATH_MAX + 64], host[64];
	for (int minor = 20; minor >= 5; minor--) {
		snprintf(dir, sizeof dir, "%s/usr/lib/python3.%d", b->root, minor);
		snprintf(host, sizeof host, "/usr/bin/python3.%d", minor);
		struct stat st;
		if (lstat(dir, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (access(host, X_OK))
			return;
		snprintf(b->python, sizeof b->python, "python3.%d", minor);
		break;
	}
	if (!b->python[0])
		return;
	progress(b->name, "compiling the Python modules (%s)", b->python);
	char dist[PATH_MAX + 64];
	snprintf(dist, sizeof dist, "%s/usr/lib/python3/dist-packages", b->root);
	char *argv[] = { host, "-m", "compileall", "-q", "-j0", "-s", b->root, "-p", "/", dir, dist, NULL };
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	tool_run(argv, null, NULL); /* a module Python 3 cannot compile (a test's fixture) is skipped */
	close(null);
}

/* The tree as an ext2 disk: out/root.ext2, and its digest. */
static int make_disk(struct build *b, char *err, size_t n)
{
	char why[1024], out[PATH_MAX + 32];
	uint64_t bytes, entries;
	int r = copyin_measure(b->root_fd, &bytes, &entries, NULL, why, sizeof why);
	snprintf(out, sizeof out, "%s/out/root.ext2", b->work);
	int fd = r ? -1 : open(out, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (!r && fd < 0)
		r = errmsg(why, sizeof why, "cannot create %s: %s", out, strerror(errno));
	if (!r) {
		progress(b->name, "writing the disk (%llu files, %llu MB)", (unsigned long long)entries,
			 (unsigned long long)(bytes >> 20));
		r = copyin_build(b->root_fd, fd, disks_ro_image_bytes(bytes, entries), entries + 64, NULL, why, sizeof why);
	}
	struct stat st;
	if (!r && (fsync(fd) || fstat(fd, &st) || file_sha256(fd, b->digest)))
		r = errmsg(why, sizeof why, "cannot write %s: %s", out, strerror(errno));
	if (!r)
		b->files = entries, b->disk_bytes = st.st_size;
	if (fd >= 0)
		close(fd);
	return r ? errmsg(err, n, "%s", why) : 0;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wxe");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int write_manifest(struct build *b, char *err, size_t n)
{
	char path[PATH_MAX + 32], when[32];
	time_t now = time(NULL);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	json_t *pk = json_array();
	for (int i = 0; i < b->closure.n; i++)
		json_array_append_new(pk, json_pack("{s:s, s:s, s:s}", "name", b->closure.v[i].name, "version",
						    b->closure.v[i].version, "arch", b->closure.v[i].arch));
	json_t *m = json_pack("{s:s, s:s, s:o, s:o, s:o, s:s, s:s, s:I, s:s, s:I, s:i, s:b, s:o}", "format",
			      IMAGE_FORMAT, "name", b->name, "requested", string_array(b->requested, b->nreq), "base",
			      string_array((char *const *)base_packages, NBASE), "packages", pk, "husk_version",
			      HUSK_VERSION, "built", when, "disk_bytes", (json_int_t)b->disk_bytes, "disk_sha256",
			      b->digest, "files", (json_int_t)b->files, "alternatives", b->alternatives, "ld_so_cache",
			      b->ld_cache, "python_bytecode", b->python[0] ? json_string(b->python) : json_null());
	snprintf(path, sizeof path, "%s/out/manifest.json", b->work);
	int r = !m || json_dump_file(m, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(m);
	snprintf(path, sizeof path, "%s/out/root.env", b->work);
	if (!r)
		r = write_text(path, DEBIAN_PATH "\n");
	return r ? errmsg(err, n, "cannot write %s: %s", path, strerror(errno)) : 0;
}

/* out/ becomes images/NAME; the old image (if any) goes to the work
 * directory, removed with it.  A run still using the old disk keeps it. */
static int install(struct build *b, char *err, size_t n)
{
	char out[PATH_MAX + 8], old[PATH_MAX + 8];
	snprintf(out, sizeof out, "%s/out", b->work);
	snprintf(old, sizeof old, "%s/old", b->work);
	if (renameat(b->images_fd, b->name, AT_FDCWD, old) < 0 && errno != ENOENT)
		return errmsg(err, n, "cannot replace %s/%s: %s", b->images, b->name, strerror(errno));
	if (renameat(AT_FDCWD, out, b->images_fd, b->name) < 0)
		return errmsg(err, n, "cannot install %s/%s: %s", b->images, b->name, strerror(errno));
	return 0;
}

static int build_steps(struct build *b, char *err, size_t n, int *user_error)
{
	char **want = calloc(NBASE + b->nreq, sizeof *want);
	if (!want)
		return errmsg(err, n, "out of memory");
	memcpy(want, base_packages, NBASE * sizeof *want);
	memcpy(want + NBASE, b->requested, b->nreq * sizeof *want);
	progress(b->name, "resolving %d package%s with apt", b->nreq, b->nreq == 1 ? "" : "s");
	int r = closure_resolve(want, NBASE + b->nreq, b->work, &b->closure, err, n);
	free(want);
	if (r) {
		*user_error = 1;
		return -1;
	}
	qsort(b->closure.v, b->closure.n, sizeof *b->closure.v, by_name);
	json_t *m = manifest_load(b->images_fd, b->name);
	char disk[NAME_MAX + 16];
	snprintf(disk, sizeof disk, "%s/root.ext2", b->name);
	if (m && up_to_date(m, b->requested, b->nreq, &b->closure) &&
	    !faccessat(b->images_fd, disk, R_OK, AT_SYMLINK_NOFOLLOW)) {
		json_decref(m);
		progress(b->name, "up to date (%d packages, as apt resolves them today); husk image rm %s rebuilds it",
			 b->closure.n, b->name);
		return 1;
	}
	json_decref(m);
	char out[PATH_MAX + 8];
	snprintf(out, sizeof out, "%s/out", b->work);
	if (download(b, err, n) || unpack(b, err, n))
		return -1;
	char ctrl[PATH_MAX + 8];
	snprintf(ctrl, sizeof ctrl, "%s/ctrl", b->work);
	b->alternatives = alternatives_apply(b->root_fd, ctrl, &b->closure, err, n);
	if (b->alternatives < 0 || root_fs_complete(b->root_fd, err, n))
		return -1;
	ld_cache(b);
	compile_python(b);
	if (mkdir(out, 0755) < 0)
		return errmsg(err, n, "cannot make %s: %s", out, strerror(errno));
	if (make_disk(b, err, n) || write_manifest(b, err, n) || install(b, err, n))
		return -1;
	return 0;
}

int debian_image_build(int argc, char **argv)
{
	if (argc < 5)
		usage_error("usage: husk image build NAME PACKAGE... (Debian package names, e.g. python3-numpy)");
	struct build b = { .name = argv[3], .images_fd = -1, .debs_fd = -1, .root_fd = -1 };
	if (!image_name_ok(b.name))
		usage_error("bad image name '%s' (a-z, 0-9, '.', '_', '-'; at most 64)", b.name);
	b.requested = calloc(argc - 4, sizeof *b.requested);
	if (!b.requested)
		die(EXIT_INTERNAL, "out of memory");
	for (int i = 4; i < argc; i++) {
		if (!good_package_name(argv[i]))
			usage_error("bad package name '%s' (a Debian package name: a-z, 0-9, '+', '-', '.')", argv[i]);
		b.requested[b.nreq++] = argv[i];
	}
	qsort(b.requested, b.nreq, sizeof *b.requested, by_string);
	int k = 0;
	for (int i = 0; i < b.nreq; i++)
		if (!k || strcmp(b.requested[k - 1], b.requested[i]))
			b.requested[k++] = b.requested[i];
	b.nreq = k;
	tty = isatty(2);
	char err[PATH_MAX + 512];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((b.images_fd = cache_open("images", b.images, sizeof b.images, err, sizeof err)) < 0 ||
	    (b.debs_fd = cache_open("debs", b.debs, sizeof b.debs, err, sizeof err)) < 0)
		die(EXIT_USAGE, "%s", err);
	if ((size_t)snprintf(b.work, sizeof b.work, "%s/.build-%s-XXXXXX", b.images, b.name) >= sizeof b.work)
		die(EXIT_USAGE, "husk's cache: %s: path too long", b.images);
	if (!mkdtemp(b.work))
		die(EXIT_INTERNAL, "cannot make a work directory in %s: %s", b.images, strerror(errno));
	snprintf(b.root, sizeof b.root, "%s/root", b.work);
	int user_error = 0, r = build_steps(&b, err, sizeof err, &user_error);
	if (b.root_fd >= 0)
		close(b.root_fd);
	if (tty)
		fputs("\r\033[K", stderr);
	remove_tree(b.work);
	if (r < 0)
		die(user_error ? EXIT_USAGE : EXIT_INTERNAL, "image %s: %s", b.name, err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	char entry[NAME_MAX + 16];
	snprintf(entry, sizeof entry, "images/%s", b.name);
	cache_touch(b.images_fd, b.name);
	cache_trim(entry); /* within HUSK_CACHE_MAX, this image kept */
	if (r == 0)
		progress(b.name, "%d packages, %llu MB disk, built in %.0f s: husk run --image %s COMMAND...",
			 b.closure.n, (unsigned long long)(b.disk_bytes >> 20),
			 t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9, b.name);
	deb_list_free(&b.closure);
	free(b.requested);
	return 0;
}
