/* The whole workdir write-back, vmm/extract.c workdir_extract(), on an
 * arbitrary image: the confined reader child parses it with libext2fs and
 * streams records, the writer puts them under a fresh directory.
 *
 * The image file is the input (at most 256 KiB) zero-extended to 1 MiB, so
 * seeds can be small mke2fs images with their trailing zeros cut off.  Per
 * process: BASE=/tmp/husk-fuzz-extract-XXXXXX holding img, canary/ and out/.
 * Before each run out/ is made afresh with host symlinks in the way (out/a
 * to the canary directory, out/d to ../canary, out/f to ../canary/f, the
 * names the seeds use).  After it:
 *   - BASE holds exactly img, canary and out, and canary is empty: nothing
 *     was written outside out/ (through a symlink or a bad name);
 *   - no file under out/ is set-uid or set-gid, none is a hard link;
 *   - no file descriptor leaked;
 *   - the reader child ended as the reader can end (exit 0, or one of its
 *     child_exit codes, or SIGPIPE when the writer stopped reading):
 *     SIGSYS, SIGSEGV, SIGABRT or a sanitizer's exit status 1 is a bug
 *     in the reader (found through --wrap=waitpid).
 * Then out/ is removed (never following a symlink). */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "extract.h"
#include "fuzz.h"

#define MAX_INPUT (256u << 10)
#define IMAGE_SIZE (1u << 20)

static char base[64], img[96], canary[96], out[96];
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

static void cleanup(void)
{
	if (base[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
		if (system(cmd)) {
			/* best effort at exit */
		}
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	CHECK(remove(path) == 0, "cannot remove %s", path);
	return 0;
}

static void remove_out(void)
{
	if (access(out, F_OK) == 0)
		CHECK(nftw(out, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0, "cannot remove %s", out);
}

static int check_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	CHECK(flag != FTW_NS && flag != FTW_DNR, "cannot stat or read %s", path);
	if (S_ISREG(st->st_mode)) {
		CHECK(!(st->st_mode & (S_ISUID | S_ISGID)), "%s is set-uid or set-gid (mode %o)", path, st->st_mode);
		CHECK(st->st_nlink == 1, "%s has %lu links", path, (unsigned long)st->st_nlink);
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

static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open /dev/null");
	close(fd);
	return fd;
}

/* The reader's own ways to end (vmm/extract.c child_exit codes 0, 2-8). */
static int reader_status_ok(int status)
{
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGPIPE;
	return WIFEXITED(status) && WEXITSTATUS(status) != 1 && WEXITSTATUS(status) <= 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	if (!base[0]) {
		strcpy(base, "/tmp/husk-fuzz-extract-XXXXXX");
		CHECK(mkdtemp(base), "mkdtemp");
		snprintf(img, sizeof img, "%s/img", base);
		snprintf(canary, sizeof canary, "%s/canary", base);
		snprintf(out, sizeof out, "%s/out", base);
		CHECK(mkdir(canary, 0755) == 0, "mkdir %s", canary);
		atexit(cleanup);
	}
	int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size && ftruncate(fd, size > IMAGE_SIZE ? size : IMAGE_SIZE) == 0,
	      "writing %s", img);
	close(fd);
	remove_out();
	CHECK(mkdir(out, 0755) == 0, "mkdir %s", out);
	int root = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0 && symlinkat(canary, root, "a") == 0 && symlinkat("../canary", root, "d") == 0 &&
	      symlinkat("../canary/f", root, "f") == 0, "symlinks in %s", out);
	close(root);

	int fd_before = lowest_free_fd();
	struct extract_limits lim = { 256, 4u << 20 };
	struct extract_stats st;
	char err[256] = "";
	int w0 = waits;
	int r = workdir_extract(img, out, &lim, &st, err, sizeof err);
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

	static const char *top[] = { "img", "canary", "out" };
	count_entries(base, top, 3);
	CHECK(count_entries(canary, NULL, 0) == 0, "the canary directory is not empty");
	CHECK(nftw(out, check_entry, 16, FTW_PHYS) == 0, "walking %s", out);
	remove_out();
	return 0;
}
