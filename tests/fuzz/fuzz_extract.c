/* SPDX-License-Identifier: GPL-2.0-only */
/* The whole workdir write-back, vmm/extract.c workdir_extract(), on an
 * arbitrary image: the confined reader child (vmm/workdir_reader.c) parses
 * it with libext2fs and streams records, the writer compares them with the
 * copy-in record (vmm/copyin.c) and applies what changed to the workdir.
 *
 * The image file is the input (at most 256 KiB) zero-extended to 1 MiB, so
 * seeds can be small images with their trailing zeros cut off.  Per
 * process: BASE=/dev/shm/husk-fuzz-extract-XXXXXX (tmpfs: file creation is
 * the cost here; /tmp without /dev/shm) holding img (the input), copyin.img,
 * canary/keep and out/ (the workdir).  The host tree below is made in out/
 * and copied in once with copyin_build (copyin.img, the record and its
 * guest inode numbers); mkseeds-ext2 makes seeds from that very image.
 * Before each input out/ is made afresh, its record taken again
 * (copyin_measure: the new inodes and times, the first record's guest
 * inodes), then the host changes it as it could during a run:
 *     a -> BASE/canary      d -> ../canary      f -> ../canary/f
 *     u             "old", mtime 1000000000
 *     h1            "linked", also named olddir/h2 (a hard link)
 *     olddir/{x, sub/y, link -> ../../canary, h2}
 *     gone/g
 *   after the record (the host during the run):
 *     host-file, host-dir/inner    made
 *     olddir/x                     rewritten in place
 *     olddir/sub/y                 deleted
 * After workdir_extract:
 *   - BASE holds exactly img, copyin.img, canary and out, and canary exactly
 *     keep with its content: nothing was written or removed outside out/;
 *   - what the host made or changed after the record is as the host left
 *     it: host-file, host-dir/inner and olddir/x the same inode with the same
 *     content, mode, link count, mtime and ctime (nothing written, renamed,
 *     linked or chmod'ed), host-dir the same directory (the program may add
 *     to a directory the host made too), olddir/sub/y still absent (the
 *     program's version of a path the host deleted goes beside it);
 *   - no file under out/ is set-uid or set-gid, none has more links than
 *     names in out/, and there is nothing but files, directories and
 *     symlinks;
 *   - the outcome is one of the three, with a reason, the limits held, and
 *     no file descriptor leaked;
 *   - the reader child was waited for and ended as the reader can end
 *     (exit 0, its exit 3 or SIGPIPE when the writer stopped reading):
 *     SIGSYS (its seccomp filter), SIGSEGV, SIGABRT or a sanitizer's exit
 *     status 1 is a bug in the reader (seen through --wrap=waitpid);
 *   - the reader's memory stayed within its budget: its peak RSS (wait4),
 *     less what it shared with this process when forked, under 64 MiB
 *     (the sanitizer build has no RLIMIT_AS to enforce it).
 * Once per process, before fuzzing, the copy-in image itself is written
 * back: nothing may be written, removed or be in conflict, every entry is
 * counted unchanged, and the same checks hold.
 *
 * Coverage comes from the writer side only: the child's counters stay in
 * the child, and libext2fs is not instrumented.  FUZZ_EXTRACT_VERBOSE=1
 * prints the result of each input.  For mkseeds-ext2, with
 * FUZZ_EXTRACT_COPYIN_TO=FILE the binary writes the copy-in image to FILE
 * and exits, and with FUZZ_EXTRACT_STREAM_OF=IMAGE FUZZ_EXTRACT_STREAM_TO=FILE
 * it writes the reader's record stream of IMAGE to FILE and exits.
 *
 * Built with -DFUZZ_MAPPED (fuzz_extract_mapped), the image is read as a
 * copy-on-write workdir's (vmm/disks/mapped.c): the map of the copy-in
 * tree's data (copyin_build_mapped), its host files out/'s (their inodes
 * renewed per input), a file server of its own per input, and the dirty
 * bits from the input's bytes 512..543 (unused by ext2): the reader's view,
 * its pinning and splices face hostile block maps over real host files.
 *
 * Built with -DFUZZ_STREAM (fuzz_extract_stream), the input is instead the
 * record stream itself, as a compromised reader could send it: the child's
 * ext2fs_open (--wrap; the child is confined by then, with the input on fd
 * 3 and the stream on fd 4) copies the input into the stream and exits, so
 * the writer parses arbitrary records with the same checks after it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "disks/copyin.h"
#include "disks/extract.h"
#include "fuzz.h"
#include "disks/workdir_reader.h"
#ifdef FUZZ_MAPPED
#include "disks/disks.h"
#include "disks/file_server.h"
#include "disks/mapped.h"
#endif

#define MAX_IMAGE_INPUT (256u << 10)
#define IMAGE_SIZE (1u << 20)
#define COPYIN_INODES 64
#define READER_RSS_MAX (64ll << 20)
/* The fds the reader keeps (vmm/workdir_reader.c). */
#define READER_IMAGE_FD 3
#define READER_STREAM_FD 4

static char base[64], img[96], copyin_img[96], canary[96], out[96];
static const char keep[] = "the canary";
static const struct extract_limits lim = { 256, 4u << 20 };
static struct copyin_record first, rec; /* copyin_build's; this input's */
#ifdef FUZZ_MAPPED
static struct copyin_map map; /* out/'s data, as copyin_build_mapped lays it out */
static uint64_t dirty[(IMAGE_SIZE / MAPPED_BLOCK + 63) / 64];
#endif

/* Each input frees a few hundred KiB (directory streams, the record, the
 * writer's tables): ASan's default 256 MiB quarantine would keep this
 * process's RSS there, and each fork for the reader then copies it and
 * every write after it faults (twice the runs a second at 32 MiB, which
 * still holds every block freed within an input).  ASAN_OPTIONS overrides. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=32";
}

/* ---- the reader child, seen through --wrap=waitpid ------------------------- */

static int last_status = -1, waits;
static long last_maxrss_kib;

pid_t __wrap_waitpid(pid_t pid, int *status, int options);
pid_t __wrap_waitpid(pid_t pid, int *status, int options)
{
	struct rusage ru;
	int s = 0;
	pid_t r = wait4(pid, &s, options, &ru);
	if (r > 0) {
		last_status = s;
		last_maxrss_kib = ru.ru_maxrss;
		waits++;
		if (status)
			*status = s;
	}
	return r;
}

/* This process's resident bytes: what a child forked now starts with. */
static long long resident(void)
{
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	char buf[128] = "";
	ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	long long size, pages;
	CHECK(k > 0 && sscanf(buf, "%lld %lld", &size, &pages) == 2, "reading /proc/self/statm");
	return pages * sysconf(_SC_PAGESIZE);
}

/* The reader's own ways to end (vmm/workdir_reader.c child_exit(0), and 3
 * or SIGPIPE when the writer stopped reading). */
static int reader_status_ok(int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGPIPE;
	return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3);
}

#ifdef FUZZ_STREAM
#include <ext2fs/ext2fs.h>
#include <sys/syscall.h>

static volatile int feeding; /* set around a fuzzed workdir_extract */

/* In the child, under its seccomp filter (pread on fd 3, write on fd 4 and
 * exit_group are allowed): the "image" is the stream. */
errcode_t __real_ext2fs_open(const char *name, int flags, int super, unsigned int block_size, io_manager manager,
			     ext2_filsys *ret_fs);
errcode_t __wrap_ext2fs_open(const char *name, int flags, int super, unsigned int block_size, io_manager manager,
			     ext2_filsys *ret_fs);
errcode_t __wrap_ext2fs_open(const char *name, int flags, int super, unsigned int block_size, io_manager manager,
			     ext2_filsys *ret_fs)
{
	if (!feeding)
		return __real_ext2fs_open(name, flags, super, block_size, manager, ret_fs);
	static char buf[65536];
	ssize_t n;
	for (off_t at = 0; (n = pread(READER_IMAGE_FD, buf, sizeof buf, at)) > 0; at += n)
		for (ssize_t done = 0, k; done < n; done += k)
			if ((k = write(READER_STREAM_FD, buf + done, n - done)) <= 0)
				for (;;)
					syscall(SYS_exit_group, 3);
	for (;;)
		syscall(SYS_exit_group, 0);
}
#endif

/* ---- files ------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	CHECK(remove(path) == 0, "cannot remove %s", path);
	return 0;
}

static int rm_quiet(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void cleanup(void)
{
	nftw(base, rm_quiet, 16, FTW_DEPTH | FTW_PHYS); /* at exit; a crash leaves BASE */
}

static void remove_out(void)
{
	if (access(out, F_OK) == 0)
		CHECK(nftw(out, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0, "cannot remove %s", out);
}

static void make_file(int dir, const char *name, const char *content, time_t mtime)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	size_t n = strlen(content);
	CHECK(fd >= 0 && write(fd, content, n) == (ssize_t)n, "creating %s", name);
	if (mtime) {
		struct timespec t[2] = { { mtime, 0 }, { mtime, 0 } };
		CHECK(futimens(fd, t) == 0, "futimens %s", name);
	}
	close(fd);
}

static int read_file(int dir, const char *name, char *buf, size_t len)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t k = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[k > 0 ? k : 0] = 0;
	return (int)k;
}

static void copy_fd(int from, int to, const char *what)
{
	static char buf[65536];
	ssize_t n;
	while ((n = read(from, buf, sizeof buf)) > 0)
		CHECK(write(to, buf, n) == n, "writing %s", what);
	CHECK(n == 0, "reading for %s", what);
}

static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open /dev/null");
	close(fd);
	return fd;
}

/* ---- the host tree -------------------------------------------------------------- */

static void make_tree(void)
{
	CHECK(mkdir(out, 0755) == 0, "mkdir %s", out);
	int root = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0 && symlinkat(canary, root, "a") == 0 && symlinkat("../canary", root, "d") == 0 &&
	      symlinkat("../canary/f", root, "f") == 0 && mkdirat(root, "olddir", 0755) == 0 &&
	      mkdirat(root, "olddir/sub", 0755) == 0 && symlinkat("../../canary", root, "olddir/link") == 0 &&
	      mkdirat(root, "gone", 0755) == 0,
	      "populating %s", out);
	make_file(root, "u", "old", 1000000000);
	make_file(root, "h1", "linked", 0);
	CHECK(linkat(root, "h1", root, "olddir/h2", 0) == 0, "linking olddir/h2");
	make_file(root, "olddir/x", "x", 0);
	make_file(root, "olddir/sub/y", "y", 0);
	make_file(root, "gone/g", "g", 0);
	close(root);
}

/* What the host makes or changes after the record, and must find as it
 * left it after the write-back (content NULL: a directory). */
static const struct host_change {
	const char *path, *content;
} host_changes[] = {
	{ "host-file", "made by the host during the run" },
	{ "host-dir", NULL },
	{ "host-dir/inner", "inner" },
	{ "olddir/x", "rewritten by the host" }, /* another size: changed even within a clock tick */
};
#define NHOST (sizeof host_changes / sizeof host_changes[0])
static const char host_deleted[] = "olddir/sub/y";
static struct stat host_st[NHOST];

static void host_run(int root)
{
	make_file(root, "host-file", host_changes[0].content, 1100000000);
	CHECK(mkdirat(root, "host-dir", 0755) == 0, "mkdir host-dir");
	make_file(root, "host-dir/inner", host_changes[2].content, 0);
	int fd = openat(root, "olddir/x", O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	size_t n = strlen(host_changes[3].content);
	CHECK(fd >= 0 && write(fd, host_changes[3].content, n) == (ssize_t)n, "rewriting olddir/x");
	close(fd);
	CHECK(unlinkat(root, host_deleted, 0) == 0, "deleting %s", host_deleted);
	for (size_t i = 0; i < NHOST; i++)
		CHECK(fstatat(root, host_changes[i].path, &host_st[i], AT_SYMLINK_NOFOLLOW) == 0, "stat %s",
		      host_changes[i].path);
}

static int same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static void check_host_run(int root)
{
	for (size_t i = 0; i < NHOST; i++) {
		const struct host_change *h = &host_changes[i];
		const struct stat *was = &host_st[i];
		struct stat s;
		CHECK(fstatat(root, h->path, &s, AT_SYMLINK_NOFOLLOW) == 0, "%s, made or changed by the host, is gone",
		      h->path);
		CHECK(s.st_dev == was->st_dev && s.st_ino == was->st_ino && s.st_mode == was->st_mode,
		      "%s, made or changed by the host, was replaced (mode %o, was %o)", h->path, s.st_mode,
		      was->st_mode);
		if (!h->content)
			continue;
		char buf[128];
		CHECK(read_file(root, h->path, buf, sizeof buf) >= 0 && !strcmp(buf, h->content),
		      "%s, made or changed by the host, was written: \"%s\"", h->path, buf);
		CHECK(s.st_nlink == was->st_nlink && s.st_size == was->st_size && same_time(s.st_mtim, was->st_mtim) &&
		      same_time(s.st_ctim, was->st_ctim),
		      "%s, made or changed by the host, was touched (links %lu, was %lu)", h->path,
		      (unsigned long)s.st_nlink, (unsigned long)was->st_nlink);
	}
	struct stat s;
	/* ENOTDIR: the program replaced its directory by a file, legitimately */
	CHECK(fstatat(root, host_deleted, &s, AT_SYMLINK_NOFOLLOW) < 0 && (errno == ENOENT || errno == ENOTDIR),
	      "%s, deleted by the host, is back", host_deleted);
}

/* out/ afresh: the tree, its record (the first one's guest inodes), then
 * the host's changes. */
static void fresh_tree(void)
{
	remove_out();
	make_tree();
	char err[256] = "";
	int root = copyin_open_dir(out, err, sizeof err);
	CHECK(root >= 0, "copyin_open_dir: %s", err);
	uint64_t bytes, entries;
	copyin_record_free(&rec);
	CHECK(copyin_measure(root, &bytes, &entries, &rec, err, sizeof err) == 0, "copyin_measure: %s", err);
	CHECK(rec.n == first.n, "the record has %zu entries, the first %zu", rec.n, first.n);
	for (size_t i = 0; i < rec.n; i++) {
		CHECK(!strcmp(rec.e[i].path, first.e[i].path), "record entry %zu: %s, first %s", i, rec.e[i].path,
		      first.e[i].path);
		rec.e[i].guest_ino = first.e[i].guest_ino;
	}
	host_run(root);
	close(root);
}

/* ---- the checks ------------------------------------------------------------------ */

/* Regular files seen in the output, with their names counted there: a file
 * with more links than names is linked to something outside (hard links
 * the image asks for must stay inside). */
static struct seen { ino_t ino; nlink_t nlink; unsigned names; } seen[4096];
static unsigned nseen;

static int check_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	CHECK(flag != FTW_NS && flag != FTW_DNR, "cannot stat or read %s", path);
	if (S_ISREG(st->st_mode)) {
		CHECK(!(st->st_mode & (S_ISUID | S_ISGID)), "%s is set-uid or set-gid (mode %o)", path, st->st_mode);
		unsigned i = 0;
		while (i < nseen && seen[i].ino != st->st_ino)
			i++;
		CHECK(i < sizeof seen / sizeof seen[0], "too many files to check");
		if (i == nseen)
			seen[nseen++] = (struct seen){ st->st_ino, st->st_nlink, 0 };
		seen[i].names++;
	}
	CHECK(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode), "%s is not a file, directory or symlink",
	      path);
	return 0;
}

static int count_entries(const char *dir, const char **names, int nnames)
{
	DIR *d = opendir(dir);
	CHECK(d, "cannot open %s", dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int known = 0;
		for (int i = 0; i < nnames; i++)
			known |= !strcmp(e->d_name, names[i]);
		CHECK(known, "%s/%s was created outside the workdir", dir, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static const char *ended(int status, int *code)
{
	*code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
	return WIFSIGNALED(status) ? "signal" : "status";
}

/* The write-back of image_fd over a fresh out/, and every check;
 * pristine: the image is the copy-in image itself, so nothing changes. */
static void run_one(int image_fd, int pristine)
{
	fresh_tree();
	char err[256] = "";
	int root = copyin_open_dir(out, err, sizeof err);
	CHECK(root >= 0, "copyin_open_dir: %s", err);
	int fd_before = lowest_free_fd();
	struct extract_stats st;
	int w0 = waits;
	long long rss = resident();
#ifdef FUZZ_STREAM
	feeding = !pristine;
#endif
#ifdef FUZZ_MAPPED
	for (size_t i = 0; i < map.nf; i++) {
		const struct copyin_entry *e = copyin_find(&rec, map.f[i].path);
		if (e)
			map.f[i].dev = e->dev, map.f[i].ino = e->ino;
	}
	memset(dirty, 0, sizeof dirty);
	CHECK(pread(image_fd, dirty, 32, 512) >= 0, "reading the dirty bits");
	static struct disks one;
	one.n = 1;
	one.d[0] = (struct disk){ .fd = -1, .mapped = 1, .map = map, .top_fd = root };
	int files;
	pid_t server = file_server_start(&one, &files, err, sizeof err);
	CHECK(server > 0, "file_server_start: %s", err);
	struct workdir_image wi = { image_fd, &map, dirty, files, 0 };
#else
	struct workdir_image wi = { .fd = image_fd, .files = -1 };
#endif
	int r = workdir_extract(&wi, root, &rec, &lim, &st, err, sizeof err);
#ifdef FUZZ_MAPPED
	close(files);
	CHECK(wait4(server, NULL, 0, NULL) == server, "waiting for the file server");
#endif
#ifdef FUZZ_STREAM
	feeding = 0;
#endif
	long long grown = last_maxrss_kib * 1024ll - rss;
	int code;
	const char *how = ended(last_status, &code);
	if (getenv("FUZZ_EXTRACT_VERBOSE")) /* when looking at one input */
		fprintf(stderr, "workdir_extract: %d (%s), reader %s %d, %lld KiB over the parent's RSS; %llu files, "
			"%llu dirs, %llu symlinks, %llu skipped, %llu unchanged, %llu removed, %llu conflicts, %llu failed\n",
			r, err, how, code, grown >> 10, (unsigned long long)st.files, (unsigned long long)st.dirs,
			(unsigned long long)st.symlinks, (unsigned long long)st.skipped, (unsigned long long)st.unchanged,
			(unsigned long long)st.removed, (unsigned long long)st.conflicts, (unsigned long long)st.failed);
	CHECK(r == EXTRACT_OK || ((r == EXTRACT_BAD_IMAGE || r == EXTRACT_HOST_ERROR) && err[0]),
	      "returned %d, err \"%s\"", r, err);
	CHECK((r == EXTRACT_HOST_ERROR) == (st.failed && r != EXTRACT_BAD_IMAGE),
	      "returned %d with %llu failed paths", r, (unsigned long long)st.failed);
	CHECK(waits == w0 + 1, "the reader child was not waited for");
	CHECK(reader_status_ok(last_status), "the reader child ended with %s %d (a bug in the reader; err \"%s\")", how,
	      code, err);
	CHECK(r == EXTRACT_BAD_IMAGE || (WIFEXITED(last_status) && WEXITSTATUS(last_status) == 0),
	      "success, but the reader failed");
	CHECK(grown <= READER_RSS_MAX, "the reader's RSS peaked %lld KiB over the parent's (budget %lld KiB)",
	      grown >> 10, READER_RSS_MAX >> 10);
	CHECK(lowest_free_fd() == fd_before, "a file descriptor leaked");
	CHECK(st.bytes <= lim.max_bytes, "%llu bytes written, limit %llu", (unsigned long long)st.bytes,
	      (unsigned long long)lim.max_bytes);
	CHECK(st.files + st.dirs + st.symlinks + st.unchanged <= lim.max_files, "more entries than the limit");

	static const char *top[] = { "img", "copyin.img", "canary", "out" }, *inside[] = { "keep" };
	count_entries(base, top, 4);
	CHECK(count_entries(canary, inside, 1) == 1, "the canary file is gone");
	char buf[sizeof keep + 1] = "";
	int cfd = open(canary, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cfd >= 0 && read_file(cfd, "keep", buf, sizeof buf) == sizeof keep - 1 && !strcmp(buf, keep),
	      "the canary file changed");
	close(cfd);
	check_host_run(root);
	nseen = 0;
	CHECK(nftw(out, check_entry, 16, FTW_PHYS) == 0, "walking %s", out);
	for (unsigned i = 0; i < nseen; i++)
		CHECK(seen[i].nlink == seen[i].names, "a file has %lu links but %u names in the output",
		      (unsigned long)seen[i].nlink, seen[i].names);
	if (pristine) {
		uint64_t files = 0;
		for (size_t i = 0; i < rec.n; i++)
			files += !S_ISDIR(rec.e[i].mode);
		CHECK(r == EXTRACT_OK && !st.files && !st.dirs && !st.symlinks && !st.skipped && !st.removed &&
		      !st.conflicts && !st.failed && st.unchanged == files,
		      "the copy-in image written back changed something (%s): %llu files, %llu dirs, %llu symlinks, "
		      "%llu skipped, %llu removed, %llu conflicts, %llu unchanged of %llu",
		      err, (unsigned long long)st.files, (unsigned long long)st.dirs, (unsigned long long)st.symlinks,
		      (unsigned long long)st.skipped, (unsigned long long)st.removed, (unsigned long long)st.conflicts,
		      (unsigned long long)st.unchanged, (unsigned long long)files);
		for (size_t i = 0; i < rec.n; i++) {
			struct stat s;
			const char *p = rec.e[i].path[0] ? rec.e[i].path : ".";
			CHECK(!strcmp(p, host_deleted) || (fstatat(root, p, &s, AT_SYMLINK_NOFOLLOW) == 0 &&
							    s.st_ino == rec.e[i].ino),
			      "%s was replaced or removed", p);
		}
	}
	close(root);
	remove_out();
}

/* ---- per process ----------------------------------------------------------------- */

static void setup(void)
{
	strcpy(base, access("/dev/shm", W_OK) ? "/tmp/husk-fuzz-extract-XXXXXX" : "/dev/shm/husk-fuzz-extract-XXXXXX");
	CHECK(mkdtemp(base), "mkdtemp");
	atexit(cleanup);
	snprintf(img, sizeof img, "%s/img", base);
	snprintf(copyin_img, sizeof copyin_img, "%s/copyin.img", base);
	snprintf(canary, sizeof canary, "%s/canary", base);
	snprintf(out, sizeof out, "%s/out", base);
	CHECK(mkdir(canary, 0755) == 0, "mkdir %s", canary);
	int dfd = open(canary, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0, "open %s", canary);
	make_file(dfd, "keep", keep, 0);
	close(dfd);
	make_tree();
	char err[256] = "";
	int root = copyin_open_dir(out, err, sizeof err);
	int fd = open(copyin_img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(root >= 0 && fd >= 0, "opening %s, %s: %s", out, copyin_img, err);
	CHECK(copyin_build(root, fd, IMAGE_SIZE, COPYIN_INODES, &first, err, sizeof err) == 0, "copyin_build: %s", err);
	close(fd);
#ifdef FUZZ_MAPPED
	struct copyin_record again = { 0 };
	char scratch[128];
	snprintf(scratch, sizeof scratch, "%s/mapped.img", base);
	fd = open(scratch, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && copyin_build_mapped(root, fd, IMAGE_SIZE, COPYIN_INODES, &again, &map, err, sizeof err) == 0,
	      "copyin_build_mapped: %s", err);
	CHECK(map.nx > 0, "the tree's data is mapped");
	copyin_record_free(&again);
	close(fd);
	unlink(scratch);
#endif
	close(root);
}

/* For mkseeds-ext2: the copy-in image, or the reader's stream of an image. */
static void dump(void)
{
	const char *to = getenv("FUZZ_EXTRACT_COPYIN_TO"), *of = getenv("FUZZ_EXTRACT_STREAM_OF"),
		   *sto = getenv("FUZZ_EXTRACT_STREAM_TO");
	if (!to && !(of && sto))
		return;
	int from = open(to ? copyin_img : of, O_RDONLY | O_CLOEXEC);
	int dest = open(to ? to : sto, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(from >= 0 && dest >= 0, "opening %s, %s", to ? copyin_img : of, to ? to : sto);
	int status = 0;
	if (to) {
		copy_fd(from, dest, to);
	} else {
		int stream;
		pid_t pid = workdir_reader_start(&(struct workdir_image){ .fd = from, .files = -1 }, NULL, &lim, &stream);
		CHECK(pid > 0, "workdir_reader_start");
		copy_fd(stream, dest, sto);
		close(stream);
		CHECK(__wrap_waitpid(pid, &status, 0) == pid, "waitpid");
	}
	close(from);
	close(dest);
	exit(status != 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	setup();
	dump();
	int fd = open(copyin_img, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open %s", copyin_img);
	run_one(fd, 1);
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_IMAGE_INPUT)
		return 0;
	int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
#ifdef FUZZ_STREAM
	uint64_t file_size = size;
#else
	uint64_t file_size = size > IMAGE_SIZE ? size : IMAGE_SIZE;
#endif
	CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size && ftruncate(fd, file_size) == 0, "writing %s", img);
	close(fd);
	fd = open(img, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open %s", img);
	run_one(fd, 0);
	close(fd);
	return 0;
}
