/* The whole workdir write-back, vmm/extract.c workdir_extract(), on an
 * arbitrary image: the confined reader child parses it with libext2fs and
 * streams records, the writer puts them under a fresh directory.
 *
 * The image file is the input (at most 256 KiB) zero-extended to 1 MiB, so
 * seeds can be small mke2fs images with their trailing zeros cut off.  Per
 * process: BASE=/dev/shm/husk-fuzz-extract-XXXXXX (tmpfs: file creation is
 * the cost here; /tmp without /dev/shm) holding img, canary/keep and out/.
 * Before each run out/ is made afresh with what a host workdir may hold in
 * the way, under names the seeds use:
 *     a -> BASE/canary      d -> ../canary      f -> ../canary/f
 *     u     a file "old" with mtime 1000000000 (an "unchanged" candidate)
 *     olddir/{x, sub/y, link -> ../../canary}   (to be pruned)
 * After it:
 *   - BASE holds exactly img, canary and out, and canary exactly keep with
 *     its content: nothing was written or removed outside out/;
 *   - no file under out/ is set-uid or set-gid, none is a hard link, and
 *     there is nothing but files, directories and symlinks;
 *   - the limits held, and no file descriptor leaked;
 *   - the reader child ended as the reader can end (exit 0, or one of its
 *     child_exit codes, or SIGPIPE when the writer stopped reading):
 *     SIGSYS, SIGSEGV, SIGABRT or a sanitizer's exit status 1 is a bug
 *     in the reader (seen through --wrap=waitpid).
 * Then out/ is removed (never following a symlink).
 *
 * Coverage comes from the writer side only: the child's counters stay in
 * the child, and libext2fs is not instrumented.  FUZZ_EXTRACT_VERBOSE=1
 * prints the result of each input.
 *
 * Built with -DFUZZ_STREAM (fuzz_extract_stream), the input is instead the
 * record stream itself, as a compromised reader could send it: the child's
 * ext2fs_open (--wrap) copies the input file into the pipe and exits, so the
 * writer parses arbitrary records with the same checks after it. */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "extract.h"
#include "fuzz.h"

#define MAX_IMAGE_INPUT (256u << 10)
#define IMAGE_SIZE (1u << 20)

static char base[64], img[96], canary[96], out[96];
static const char keep[] = "the canary";
static int last_status = -1, waits;

pid_t __real_waitpid(pid_t pid, int *status, int options);
pid_t __wrap_waitpid(pid_t pid, int *status, int options);
pid_t __wrap_waitpid(pid_t pid, int *status, int options)
{
	pid_t r = __real_waitpid(pid, status, options);
	if (r > 0 && status) {
		last_status = *status;
		waits++;
	}
	return r;
}

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

static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open /dev/null");
	close(fd);
	return fd;
}

#ifdef FUZZ_STREAM
#include <ext2fs/ext2fs.h>
#include <sys/syscall.h>

static int pipe_out = -1; /* the write end of workdir_extract's pipe */

int __real_pipe2(int fd[2], int flags);
int __wrap_pipe2(int fd[2], int flags);
int __wrap_pipe2(int fd[2], int flags)
{
	int r = __real_pipe2(fd, flags);
	pipe_out = r ? -1 : fd[1];
	return r;
}

/* In the child, before its seccomp filter: the "image" is the stream. */
errcode_t __wrap_ext2fs_open(const char *name, int flags, int super, unsigned int block_size, io_manager manager,
			     ext2_filsys *ret_fs);
errcode_t __wrap_ext2fs_open(const char *name, int flags, int super, unsigned int block_size, io_manager manager,
			     ext2_filsys *ret_fs)
{
	(void)flags, (void)super, (void)block_size, (void)manager, (void)ret_fs;
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	static char buf[65536];
	ssize_t n;
	while (fd >= 0 && pipe_out >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t done = 0, k; done < n; done += k)
			if ((k = write(pipe_out, buf + done, n - done)) <= 0)
				for (;;)
					syscall(SYS_exit_group, 3);
	for (;;)
		syscall(SYS_exit_group, 0);
}
#endif

/* The reader's own ways to end (vmm/extract.c child_exit codes 0, 2-8). */
static int reader_status_ok(int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGPIPE;
	return WIFEXITED(status) && WEXITSTATUS(status) != 1 && WEXITSTATUS(status) <= 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_IMAGE_INPUT)
		return 0;
	if (!base[0]) {
		strcpy(base, access("/dev/shm", W_OK) ? "/tmp/husk-fuzz-extract-XXXXXX" : "/dev/shm/husk-fuzz-extract-XXXXXX");
		CHECK(mkdtemp(base), "mkdtemp");
		snprintf(img, sizeof img, "%s/img", base);
		snprintf(canary, sizeof canary, "%s/canary", base);
		snprintf(out, sizeof out, "%s/out", base);
		CHECK(mkdir(canary, 0755) == 0, "mkdir %s", canary);
		int dfd = open(canary, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(dfd >= 0, "open %s", canary);
		make_file(dfd, "keep", keep, 0);
		close(dfd);
		atexit(cleanup);
	}
	int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
#ifdef FUZZ_STREAM
	uint64_t file_size = size;
#else
	uint64_t file_size = size > IMAGE_SIZE ? size : IMAGE_SIZE;
#endif
	CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size && ftruncate(fd, file_size) == 0, "writing %s", img);
	close(fd);
	remove_out();
	CHECK(mkdir(out, 0755) == 0, "mkdir %s", out);
	int root = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0 && symlinkat(canary, root, "a") == 0 && symlinkat("../canary", root, "d") == 0 &&
	      symlinkat("../canary/f", root, "f") == 0 && mkdirat(root, "olddir", 0755) == 0 &&
	      mkdirat(root, "olddir/sub", 0755) == 0 && symlinkat("../../canary", root, "olddir/link") == 0,
	      "populating %s", out);
	make_file(root, "u", "old", 1000000000);
	make_file(root, "olddir/x", "x", 0);
	make_file(root, "olddir/sub/y", "y", 0);
	close(root);

	int fd_before = lowest_free_fd();
	struct extract_limits lim = { 256, 4u << 20 };
	struct extract_stats st;
	char err[256] = "";
	int w0 = waits;
	int r = workdir_extract(img, out, &lim, &st, err, sizeof err);
	if (getenv("FUZZ_EXTRACT_VERBOSE")) /* when looking at one input */
		fprintf(stderr, "workdir_extract: %d (%s), reader %s %d; %llu files, %llu dirs, %llu symlinks, %llu skipped, "
			"%llu unchanged, %llu removed\n",
			r, err, WIFSIGNALED(last_status) ? "signal" : "status",
			WIFSIGNALED(last_status) ? WTERMSIG(last_status) : WEXITSTATUS(last_status),
			(unsigned long long)st.files, (unsigned long long)st.dirs, (unsigned long long)st.symlinks,
			(unsigned long long)st.skipped, (unsigned long long)st.unchanged, (unsigned long long)st.removed);
	CHECK(r == 0 || (r == -1 && err[0]), "returned %d, err \"%s\"", r, err);
	CHECK(waits == w0 + 1, "the reader child was not waited for");
	CHECK(reader_status_ok(last_status), "the reader child ended with %s %d (a bug in the reader; err \"%s\")",
	      WIFSIGNALED(last_status) ? "signal" : "status",
	      WIFSIGNALED(last_status) ? WTERMSIG(last_status) : WEXITSTATUS(last_status), err);
	CHECK(r || WIFEXITED(last_status) && WEXITSTATUS(last_status) == 0, "success, but the reader failed");
	CHECK(lowest_free_fd() == fd_before, "a file descriptor leaked");
	CHECK(st.bytes <= lim.max_bytes, "%llu bytes written, limit %llu", (unsigned long long)st.bytes,
	      (unsigned long long)lim.max_bytes);
	CHECK(st.files + st.dirs + st.symlinks + st.unchanged <= lim.max_files, "more entries than the limit");

	static const char *top[] = { "img", "canary", "out" }, *inside[] = { "keep" };
	count_entries(base, top, 3);
	CHECK(count_entries(canary, inside, 1) == 1, "the canary file is gone");
	char buf[sizeof keep + 1] = "";
	fd = openat(AT_FDCWD, canary, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int kfd = fd >= 0 ? openat(fd, "keep", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	CHECK(kfd >= 0 && read(kfd, buf, sizeof buf) == sizeof keep - 1 && !strcmp(buf, keep), "the canary file changed");
	close(kfd);
	close(fd);
	nseen = 0;
	CHECK(nftw(out, check_entry, 16, FTW_PHYS) == 0, "walking %s", out);
	for (unsigned i = 0; i < nseen; i++)
		CHECK(seen[i].nlink == seen[i].names, "a file has %lu links but %u names in the output",
		      (unsigned long)seen[i].nlink, seen[i].names);
	remove_out();
	return 0;
}
