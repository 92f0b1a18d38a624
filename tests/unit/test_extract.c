/* SPDX-License-Identifier: GPL-2.0-only */
/* The workdir write-back (vmm/extract.c, workdir_reader.c) and its rules:
 * a host tree is copied in with copyin_build (the record), the "program"
 * changes the image with debugfs (marking what it wrote as the guest kernel
 * does), the "host" changes the tree, then the write-back must apply only
 * the program's changes, put conflicts beside the host's versions, and
 * survive hostile images within its memory and entry budgets. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "disks/copyin.h"
#include "disks/extract.h"
#include "tap.h"

static char T[64];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int r = system(cmd);
	if (r)
		printf("# command failed (%d): %s\n", r, cmd);
	return r;
}

struct run {
	int dirfd, imgfd;
	struct copyin_record rec;
	struct extract_stats st;
	char err[400];
	char img[128];
};

/* Copies $T/NAME in: the image $T/NAME.img and the record. */
static int copy_in(struct run *r, const char *name)
{
	char dir[128], err[256];
	memset(r, 0, sizeof *r);
	snprintf(dir, sizeof dir, "%s/%s", T, name);
	snprintf(r->img, sizeof r->img, "%s/%s.img", T, name);
	r->dirfd = copyin_open_dir(dir, err, sizeof err);
	r->imgfd = open(r->img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->dirfd < 0 || r->imgfd < 0 || copyin_build(r->dirfd, r->imgfd, 64 << 20, 4096, &r->rec, err, sizeof err)) {
		printf("# copy-in of %s failed: %s\n", dir, err);
		return -1;
	}
	return 0;
}

/* The program's changes: debugfs commands on the image, then each named
 * path marked as written by the guest. */
static void program(struct run *r, const char *cmds)
{
	char f[160];
	snprintf(f, sizeof f, "%s/cmds", T);
	FILE *c = fopen(f, "w");
	fputs(cmds, c);
	fclose(c);
	sh("debugfs -w -f %s %s >/dev/null 2>&1", f, r->img);
}

static int apply(struct run *r, uint64_t max_files)
{
	struct extract_limits lim = { max_files, 64 << 20 };
	return workdir_extract(&(struct workdir_image){ .fd = r->imgfd, .files = -1 }, r->dirfd, &r->rec, &lim, &r->st, r->err, sizeof r->err);
}

static void done(struct run *r)
{
	close(r->dirfd), close(r->imgfd);
	copyin_record_free(&r->rec);
}

static int file_is(const char *path, const char *content)
{
	char p[256], buf[256] = "";
	snprintf(p, sizeof p, "%s/%s", T, path);
	int fd = open(p, O_RDONLY | O_NOFOLLOW);
	ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	return k >= 0 && !strcmp(buf, content);
}

static int exists(const char *path)
{
	char p[256];
	struct stat s;
	snprintf(p, sizeof p, "%s/%s", T, path);
	return lstat(p, &s) == 0;
}

static mode_t mode_of(const char *path)
{
	char p[256];
	struct stat s;
	snprintf(p, sizeof p, "%s/%s", T, path);
	return lstat(p, &s) == 0 ? s.st_mode & 07777 : (mode_t)-1;
}

static void rules(void)
{
	struct run r;
	sh("cd %s && mkdir -p w/sub w/gone w/keepdir w/x && echo xf > w/x/f && echo 1 > 'w/x y' && echo 2 > w/x.y && "
	   "echo a > w/a && echo b > w/b && echo c > w/c && : > w/out.log && "
	   "echo s > w/sub/s && echo g > w/gone/g && echo k > w/keepdir/k && echo x > w/both && echo y > w/del && "
	   "echo h > w/h1 && ln w/h1 w/sub/h2 && echo d > w/d1 && ln w/d1 w/sub/d2", T);
	if (copy_in(&r, "w"))
		return;
	/* meanwhile on the host */
	sh("cd %s/w && echo 'husk printed this' > out.log && echo host > both && echo hostdel > del && echo new > hostnew && "
	   "mkdir hostdir && echo h > keepdir/hostfile", T);
	/* the program: modifies a, deletes b, makes n, changes both, deletes del,
	 * deletes gone/ and keepdir/, renames c to c2, makes a file with a
	 * terminal escape and a newline in its name, a set-id file, a file from
	 * the future */
	program(&r, "sif h1 mode 0100600\nsif h1 generation 1\nunlink d1\nunlink sub/d2\nrm x/f\nrm a\nwrite /etc/hostname a\nsif a generation 1\nrm b\nwrite /etc/hostname n\n"
		    "rm both\nwrite /etc/hostname both\nsif both generation 1\n"
		    "rm del\nrm gone/g\nrmdir gone\nrm keepdir/k\nrmdir keepdir\n"
		    "ln c c2\nunlink c\nsif c2 generation 1\nsif c2 links_count 1\n"
		    "write /etc/hostname \"\x1b[31mevil\thusk: fake\"\n"
		    "write /etc/hostname suid\nsif suid mode 0104777\n"
		    "write /etc/hostname future\nsif future mtime 4102444800\n");
	int rc = apply(&r, 1000);
	ok(rc == EXTRACT_OK, "write-back of a changed tree (%s)", r.err);
	ok(file_is("w/out.log", "husk printed this\n"), "a file the program left alone keeps what the host wrote (out.log)");
	ok(exists("w/hostnew") && exists("w/hostdir"), "what the host created during the run stays");
	ok(!file_is("w/a", "a\n") && exists("w/a"), "a file the program modified is written back");
	ok(!exists("w/b"), "a file the program deleted is deleted");
	ok(!exists("w/x/f") && exists("w/x y") && exists("w/x.y"), "a deletion in x/ beside names that sort between x and x/");
	ok(exists("w/n"), "a file the program created is written back");
	ok(file_is("w/both", "host\n") && exists("w/both.husk-conflict") && !file_is("w/both.husk-conflict", "host\n"),
	   "both changed: the host's stays, the program's is beside it");
	ok(file_is("w/del", "hostdel\n"), "deleted by the program, changed on the host: the host's stays");
	ok(!exists("w/gone"), "a directory the program deleted is deleted");
	ok(exists("w/keepdir/hostfile") && !exists("w/keepdir/k"),
	   "a deleted directory the host added to: the host's entry stays, the recorded one goes");
	ok(!exists("w/c") && file_is("w/c2", "c\n"), "a rename is applied");
	struct stat h1, h2;
	char p1[256], p2[256];
	snprintf(p1, sizeof p1, "%s/w/h1", T), snprintf(p2, sizeof p2, "%s/w/sub/h2", T);
	ok(!lstat(p1, &h1) && !lstat(p2, &h2) && h1.st_ino == h2.st_ino && (h1.st_mode & 0777) == 0600,
	   "a change to a host file with two names reaches both, still one file");
	ok(!exists("w/d1") && !exists("w/sub/d2"), "both names of a host file the program deleted are deleted");
	ok(r.st.conflicts == 3, "three conflicts counted (got %llu)", (unsigned long long)r.st.conflicts);
	ok(!strcmp(r.st.conflict[0], "both") || !strcmp(r.st.conflict[1], "both") || !strcmp(r.st.conflict[2], "both"),
	   "conflict paths are noted for the audit");
	ok(exists("w/_[31mevil_husk: fake"), "control characters in names become _");
	ok(mode_of("w/suid") == 0755, "set-id bits dropped and the umask applied (mode %o)", mode_of("w/suid"));
	char p[256];
	struct stat s;
	snprintf(p, sizeof p, "%s/w/future", T);
	ok(lstat(p, &s) == 0 && s.st_mtime <= time(NULL), "a time in the future is clamped to now");
	ok(exists("w/sub/s") && r.st.unchanged >= 2, "untouched entries are not rewritten (%llu unchanged)",
	   (unsigned long long)r.st.unchanged);
	done(&r);
}

/* The top renamed and a symlink to a victim put in its place: the
 * write-back follows the fd it opened at copy-in, never the path. */
static void swapped_top(void)
{
	struct run r;
	sh("cd %s && mkdir -p top victim && echo keep > victim/k && echo t > top/t", T);
	if (copy_in(&r, "top"))
		return;
	sh("cd %s && mv top top.real && ln -s victim top", T);
	program(&r, "write /etc/hostname x\nrm t\n");
	ok(apply(&r, 1000) == EXTRACT_OK, "write-back after the top was swapped for a symlink");
	ok(file_is("victim/k", "keep\n") && !exists("victim/x"), "the symlink's target is untouched");
	ok(exists("top.real/x") && !exists("top.real/t"), "the changes went to the directory copied in");
	done(&r);
}

/* A write-back that fails on the host names the paths and can be retried. */
static void host_errors(void)
{
	struct run r;
	char longname[260];
	memset(longname, 'L', 250);
	longname[250] = 0;
	sh("cd %s && mkdir -p he && echo 1 > he/%s", T, longname);
	if (copy_in(&r, "he"))
		return;
	sh("cd %s && echo host > he/%s", T, longname);
	char cmds[1000];
	snprintf(cmds, sizeof cmds, "rm %s\nwrite /etc/hostname %s\nsif %s generation 1\n", longname, longname, longname);
	program(&r, cmds);
	ok(apply(&r, 1000) == EXTRACT_HOST_ERROR && r.st.failed == 1,
	   "a conflict name too long for the host file system is a failed path (ENAMETOOLONG): %s", r.err);
	done(&r);
}

/* Directory bombs: entries that point back at their directory, and a
 * million entries of a fifo. */
static void bombs(void)
{
	struct run r;
	sh("cd %s && mkdir -p bomb/d", T);
	if (copy_in(&r, "bomb"))
		return;
	/* 512 blocks of entries pointing at /d itself */
	sh("%s/mkbomb %s 512 1 >/dev/null", getenv("UNIT_DIR"), r.img);
	int rc = apply(&r, 1000000);
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	ok(rc == EXTRACT_BAD_IMAGE && strstr(r.err, "loop"), "a directory loop is refused: %s", r.err);
	ok(ru.ru_maxrss < 64 * 1024, "the reader stays small (max RSS %ld KiB)", ru.ru_maxrss);
	done(&r);
	sh("cd %s && mkdir -p bomb2/d", T); /* bomb/ holds what the first one made before its loop */
	if (copy_in(&r, "bomb2"))
		return;
	sh("%s/mkbomb %s 3100 0 >/dev/null", getenv("UNIT_DIR"), r.img);
	int err = dup(2);
	char log[128];
	snprintf(log, sizeof log, "%s/bomb.log", T);
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	rc = apply(&r, 50000);
	dup2(err, 2);
	close(fd), close(err);
	ok(rc == EXTRACT_BAD_IMAGE && strstr(r.err, "entries"), "skipped entries count toward the cap: %s", r.err);
	ok(apply(&r, 1000000) == EXTRACT_BAD_IMAGE && strstr(r.err, "corrupt"),
	   "a name twice in one directory is corruption: %s", r.err);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test $(wc -l < %s) -le 25", log);
	ok(system(cmd) == 0, "warnings are capped");
	done(&r);
}

static void corrupt(void)
{
	struct run r;
	sh("cd %s && mkdir -p cor && echo x > cor/x", T);
	if (copy_in(&r, "cor"))
		return;
	ftruncate(r.imgfd, 0);
	sh("head -c 1048576 /dev/urandom > %s", r.img);
	ok(apply(&r, 1000) == EXTRACT_BAD_IMAGE && *r.err, "a garbage image fails cleanly: %s", r.err);
	ok(exists("cor/x"), "and nothing was deleted");
	done(&r);
}

int main(void)
{
	strcpy(T, "/tmp/husk-extract-XXXXXX");
	if (!mkdtemp(T))
		return 1;
	umask(022);
	rules();
	swapped_top();
	host_errors();
	bombs();
	corrupt();
	sh("rm -rf %s", T);
	return tap_done();
}
