#include <dirent.h>
#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "errmsg.h"
#include "extract.h"
#include "extract_stream.h"

#define MAX_DEPTH 128
#define MAX_PATH ((MAX_DEPTH + 1) * 256)
#define CHUNK 65536

/* ---- the confined reader (child) ------------------------------------------ */

static int out_fd;

/* The raw system call: a sanitizer's _exit would make calls the filter forbids. */
static _Noreturn void child_exit(int code)
{
	for (;;)
		syscall(SYS_exit_group, code);
}

static void put(const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(out_fd, p, n);
		if (k <= 0)
			child_exit(3);
		p = (const char *)p + k, n -= k;
	}
}

static void emit(uint8_t type, const char *name, size_t len, const struct ext2_inode *in, uint64_t size)
{
	struct rec r = { type, 0, (uint16_t)len, in ? in->i_mode : 0, in ? (int64_t)in->i_mtime : 0, size };
	put(&r, sizeof r);
	put(name, len);
}

static void emit_file(ext2_filsys fs, ext2_ino_t ino, const char *name, size_t len, struct ext2_inode *in)
{
	uint64_t size = EXT2_I_SIZE(in);
	emit(R_FILE, name, len, in, size);
	ext2_file_t f;
	static char buf[CHUNK];
	uint64_t sent = 0;
	if (ext2fs_file_open(fs, ino, 0, &f) == 0) {
		while (sent < size) {
			unsigned int got = 0;
			if (ext2fs_file_read(f, buf, CHUNK, &got) || !got)
				break;
			if (got > size - sent)
				got = (unsigned)(size - sent);
			put(buf, got);
			sent += got;
		}
		ext2fs_file_close(f);
	}
	memset(buf, 0, sizeof buf);
	while (sent < size) { /* unreadable: keep the stream framed, then fail */
		uint64_t k = size - sent < CHUNK ? size - sent : CHUNK;
		put(buf, k);
		sent += k;
	}
}

static void emit_symlink(ext2_filsys fs, const char *name, size_t len, struct ext2_inode *in)
{
	uint64_t size = EXT2_I_SIZE(in);
	char target[4096] = "";
	if (size >= sizeof target)
		size = 0;
	if (size && ext2fs_is_fast_symlink(in)) {
		memcpy(target, in->i_block, size < sizeof in->i_block ? size : sizeof in->i_block);
	} else if (size) {
		char *block = malloc(fs->blocksize);
		if (!block || io_channel_read_blk64(fs->io, in->i_block[0], 1, block))
			size = 0;
		else
			memcpy(target, block, size < fs->blocksize ? size : fs->blocksize);
		free(block);
	}
	emit(R_SYMLINK, name, len, in, size);
	put(target, size);
}

/* The path of the entry being walked, and the first path of each file with
 * more than one name (an open-addressing table keyed by inode). */
static char cur_path[MAX_PATH];
static struct linked { ext2_ino_t ino; char *path; } *linked;
static size_t nlinked, linked_cap;

static struct linked *linked_slot(ext2_ino_t ino)
{
	if (2 * (nlinked + 1) > linked_cap) {
		size_t cap = linked_cap ? 2 * linked_cap : 256;
		struct linked *t = calloc(cap, sizeof *t);
		if (!t)
			child_exit(4);
		for (size_t i = 0; i < linked_cap; i++)
			if (linked[i].ino) {
				size_t j = linked[i].ino % cap;
				while (t[j].ino)
					j = (j + 1) % cap;
				t[j] = linked[i];
			}
		free(linked);
		linked = t, linked_cap = cap;
	}
	size_t j = ino % linked_cap;
	while (linked[j].ino && linked[j].ino != ino)
		j = (j + 1) % linked_cap;
	return &linked[j];
}

/* A file with several names: the first is sent whole, the others as links. */
static int emit_if_link(ext2_ino_t ino, const char *name, size_t len, struct ext2_inode *in, size_t plen)
{
	if (in->i_links_count < 2)
		return 0;
	struct linked *l = linked_slot(ino);
	if (l->ino) {
		emit(R_LINK, name, len, in, strlen(l->path));
		put(l->path, strlen(l->path));
		return 1;
	}
	l->ino = ino;
	if (!(l->path = strndup(cur_path, plen)))
		child_exit(4);
	nlinked++;
	return 0;
}

struct walk {
	ext2_filsys fs;
	int depth;
	ext2_ino_t *subdirs;
	char (*names)[256];
	size_t n, cap;
};

static int collect(ext2_ino_t dir, int entry, struct ext2_dir_entry *d, int off, int bs, char *buf, void *priv)
{
	(void)dir, (void)entry, (void)off, (void)bs, (void)buf;
	struct walk *w = priv;
	size_t len = ext2fs_dirent_name_len(d);
	if (!d->inode || (len == 1 && d->name[0] == '.') || (len == 2 && !memcmp(d->name, "..", 2)))
		return 0;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->subdirs = realloc(w->subdirs, w->cap * sizeof *w->subdirs);
		w->names = realloc(w->names, w->cap * sizeof *w->names);
		if (!w->subdirs || !w->names)
			child_exit(4);
	}
	w->subdirs[w->n] = d->inode;
	memcpy(w->names[w->n], d->name, len);
	w->names[w->n][len] = 0;
	w->n++;
	return 0;
}

/* plen: the length of cur_path, the directory's path. */
static void walk_dir(ext2_filsys fs, ext2_ino_t dir, int depth, size_t plen)
{
	if (depth > MAX_DEPTH)
		child_exit(5);
	struct walk w = { fs, depth, 0, 0, 0, 0 };
	if (ext2fs_dir_iterate2(fs, dir, 0, 0, collect, &w))
		child_exit(6);
	for (size_t i = 0; i < w.n; i++) {
		struct ext2_inode in;
		const char *name = w.names[i];
		size_t len = strlen(name);
		if (depth == 0 && (!strcmp(name, "lost+found") || !strcmp(name, ".husk-unlinked")))
			continue; /* made by mke2fs, and by the guest for open unlinked files */
		if (w.subdirs[i] > fs->super->s_inodes_count || ext2fs_read_inode(fs, w.subdirs[i], &in))
			child_exit(7);
		size_t sub = plen + (plen != 0) + len; /* "dir/name" */
		if (sub >= MAX_PATH)
			child_exit(5);
		if (plen)
			cur_path[plen] = '/';
		memcpy(cur_path + plen + (plen != 0), name, len);
		if (LINUX_S_ISDIR(in.i_mode)) {
			emit(R_DIR, name, len, &in, 0);
			walk_dir(fs, w.subdirs[i], depth + 1, sub);
			emit(R_UP, "", 0, 0, 0);
		} else if (LINUX_S_ISREG(in.i_mode)) {
			if (!emit_if_link(w.subdirs[i], name, len, &in, sub))
				emit_file(fs, w.subdirs[i], name, len, &in);
		} else if (LINUX_S_ISLNK(in.i_mode)) {
			emit_symlink(fs, name, len, &in);
		} else {
			emit(R_OTHER, name, len, &in, 0);
		}
	}
	free(w.subdirs);
	free(w.names);
}

static void confine(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	const int allowed[] = { SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(write), SCMP_SYS(lseek), SCMP_SYS(fstat),
				SCMP_SYS(newfstatat), SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
				SCMP_SYS(madvise), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
				SCMP_SYS(sigaltstack) /* sanitizer builds, at exit */ };
	int ok = ctx && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
	for (size_t i = 0; ok && i < sizeof allowed / sizeof allowed[0]; i++)
		ok = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0) == 0;
	if (!ok || seccomp_load(ctx))
		child_exit(2);
	seccomp_release(ctx);
}

static _Noreturn void reader(const char *image, int fd)
{
	out_fd = fd;
	ext2_filsys fs;
	initialize_ext2_error_table();
	if (ext2fs_open(image, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs))
		child_exit(8);
	confine();
	walk_dir(fs, EXT2_ROOT_INO, 0, 0);
	emit(R_END, "", 0, 0, 0);
	child_exit(0);
}

/* ---- the writer (husk) ------------------------------------------------------ */

static int get(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (char *)p + k, n -= k;
	}
	return 0;
}

static int skip(int fd, uint64_t n)
{
	static char sink[CHUNK];
	while (n) {
		size_t k = n < CHUNK ? n : CHUNK;
		if (get(fd, sink, k))
			return -1;
		n -= k;
	}
	return 0;
}

/* Names seen in one directory, to remove what the guest deleted. */
struct level {
	int fd, root;
	char **names;
	size_t n, cap;
};

static int remember(struct level *l, const char *name)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->names, cap * sizeof *v);
		if (!v)
			return -1;
		l->names = v, l->cap = cap;
	}
	return (l->names[l->n++] = strdup(name)) ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void remove_tree(int parent, const char *name, struct extract_stats *st)
{
	if (unlinkat(parent, name, 0) == 0) {
		st->removed++;
		return;
	}
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			remove_tree(dirfd(d), e->d_name, st);
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) == 0)
		st->removed++;
}

/* Host entries of a finished directory that the image no longer has. */
static void prune(struct level *l, struct extract_stats *st)
{
	if (l->n) /* qsort and bsearch want a real array, even for 0 names */
		qsort(l->names, l->n, sizeof *l->names, cmp_str);
	int fd = dup(l->fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d) {
		struct dirent *e;
		char **gone = NULL;
		size_t ng = 0;
		while ((e = readdir(d))) {
			const char *nm = e->d_name;
			if (!strcmp(nm, ".") || !strcmp(nm, "..") || (l->fd == l->root && (!strcmp(nm, "lost+found") || !strcmp(nm, ".husk-unlinked"))) ||
			    (l->n && bsearch(&nm, l->names, l->n, sizeof *l->names, cmp_str)))
				continue;
			char **g = realloc(gone, (ng + 1) * sizeof *g);
			if (!g || !(g[ng] = strdup(nm)))
				break;
			gone = g, ng++;
		}
		closedir(d);
		for (size_t i = 0; i < ng; i++) {
			remove_tree(l->fd, gone[i], st);
			free(gone[i]);
		}
		free(gone);
	} else if (fd >= 0) {
		close(fd);
	}
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL, l->n = l->cap = 0;
}

static int valid_name(const char *s, size_t len)
{
	return len && len < 256 && !memchr(s, '/', len) && !memchr(s, 0, len) && !(len == 1 && s[0] == '.') &&
	       !(len == 2 && s[0] == '.' && s[1] == '.');
}

static int open_subdir(int parent, const char *name, uint32_t mode)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	unlinkat(parent, name, 0); /* a file or symlink of that name gives way */
	if (mkdirat(parent, name, (mode & 07777) | 0700) < 0 && errno != EEXIST)
		return -1;
	return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The temporary name an entry is made under in dirfd before it is renamed
 * into place, cleared of any leftover. */
static void tmp_name(int dirfd, char tmp[32])
{
	snprintf(tmp, 32, ".husk-extract-%d", (int)getpid());
	unlinkat(dirfd, tmp, 0);
}

/* Data into a fresh temporary, then renamed over the name: whatever was
 * there (a symlink included) is replaced, never written through. */
static int write_file(int in, int dirfd, const char *name, const struct rec *r, struct extract_stats *st)
{
	struct stat old;
	if (fstatat(dirfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode) &&
	    (uint64_t)old.st_size == r->size && old.st_mtime == r->mtime) {
		st->unchanged++;
		return skip(in, r->size);
	}
	char tmp[32];
	tmp_name(dirfd, tmp);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return skip(in, r->size) ? -1 : 1;
	static char buf[CHUNK];
	int bad = 0;
	for (uint64_t left = r->size; left;) {
		size_t k = left < CHUNK ? left : CHUNK;
		if (get(in, buf, k)) {
			close(fd);
			unlinkat(dirfd, tmp, 0);
			return -1;
		}
		bad |= write(fd, buf, k) != (ssize_t)k;
		left -= k;
	}
	struct timespec t[2] = { { r->mtime, 0 }, { r->mtime, 0 } };
	fchmod(fd, r->mode & 0777);
	futimens(fd, t);
	close(fd);
	if (bad || renameat(dirfd, tmp, dirfd, name) < 0) {
		unlinkat(dirfd, tmp, 0);
		return 1;
	}
	st->files++;
	st->bytes += r->size;
	return 0;
}

static int write_symlink(int in, int dirfd, const char *name, const struct rec *r, struct extract_stats *st)
{
	char target[4096];
	if (r->size >= sizeof target || get(in, target, r->size))
		return -1;
	target[r->size] = 0;
	if (strlen(target) != r->size || !r->size)
		return 1;
	char tmp[32];
	tmp_name(dirfd, tmp);
	if (symlinkat(target, dirfd, tmp) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		unlinkat(dirfd, tmp, 0);
		return 1;
	}
	st->symlinks++;
	return 0;
}

/* Another name for a file written before: a hard link to the first name,
 * found from the top without following a symlink, made under a temporary
 * name and renamed over the name. */
static int write_link(int in, int root, int dirfd, const char *name, const struct rec *r, struct extract_stats *st)
{
	static char path[MAX_PATH];
	if (r->size >= sizeof path || get(in, path, r->size))
		return -1;
	path[r->size] = 0;
	if (strlen(path) != r->size)
		return 1;
	int at = root, bad = 0;
	char *last = path;
	for (char *slash; !bad && (slash = strchr(last, '/')); last = slash + 1) {
		*slash = 0;
		int sub = valid_name(last, strlen(last)) ? openat(at, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (at != root)
			close(at);
		at = sub, bad = sub < 0;
	}
	struct stat first, old;
	bad = bad || !valid_name(last, strlen(last)) || fstatat(at, last, &first, AT_SYMLINK_NOFOLLOW) < 0 ||
	      !S_ISREG(first.st_mode);
	if (!bad && fstatat(dirfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0 && old.st_ino == first.st_ino &&
	    old.st_dev == first.st_dev) {
		st->unchanged++; /* already that file */
	} else if (!bad) {
		char tmp[32];
		tmp_name(dirfd, tmp);
		bad = linkat(at, last, dirfd, tmp, 0) < 0 || renameat(dirfd, tmp, dirfd, name) < 0;
		unlinkat(dirfd, tmp, 0); /* left if the rename failed */
		st->files += !bad;
	}
	if (at >= 0 && at != root)
		close(at);
	return bad;
}

static int write_tree(int in, int root, const struct extract_limits *lim, struct extract_stats *st, char *err,
		      size_t n)
{
	static struct level stack[MAX_DEPTH + 2];
	int depth = 0, rc = 0;
	stack[0] = (struct level){ root, root, NULL, 0, 0 };
	char name[256];
	for (;;) {
		struct rec r;
		if (get(in, &r, sizeof r)) {
			rc = errmsg(err, n, "the workdir image ended early (corrupt or unreadable)");
			break;
		}
		if (r.type == R_END)
			break;
		if (r.type == R_UP) {
			if (!depth) {
				rc = errmsg(err, n, "malformed workdir stream");
				break;
			}
			prune(&stack[depth], st);
			close(stack[depth--].fd);
			continue;
		}
		if (r.name_len >= sizeof name || get(in, name, r.name_len)) {
			rc = errmsg(err, n, "malformed workdir stream");
			break;
		}
		name[r.name_len] = 0;
		if (!valid_name(name, r.name_len)) {
			st->skipped++;
			if (r.type == R_DIR) { /* its subtree is skipped by the depth check below */
				rc = errmsg(err, n, "the workdir holds a directory with an invalid name");
				break;
			}
			if (skip(in, r.size)) {
				rc = errmsg(err, n, "malformed workdir stream");
				break;
			}
			continue;
		}
		if (st->files + st->dirs + st->symlinks + st->unchanged >= lim->max_files) {
			rc = errmsg(err, n, "the workdir holds more than %llu entries; the rest was not written back",
				  (unsigned long long)lim->max_files);
			break;
		}
		if ((r.type == R_FILE || r.type == R_SYMLINK) && r.size > lim->max_bytes - st->bytes) {
			rc = errmsg(err, n, "the workdir holds more than %llu bytes; the rest was not written back",
				  (unsigned long long)lim->max_bytes);
			break;
		}
		int fd = stack[depth].fd, r2 = 0;
		remember(&stack[depth], name);
		switch (r.type) {
		case R_DIR: {
			if (depth == MAX_DEPTH) {
				rc = errmsg(err, n, "the workdir is nested deeper than %d levels", MAX_DEPTH);
				goto out;
			}
			int sub = open_subdir(fd, name, r.mode);
			if (sub < 0) {
				rc = errmsg(err, n, "cannot create directory %s in the workdir: %s", name, strerror(errno));
				goto out;
			}
			stack[++depth] = (struct level){ sub, root, NULL, 0, 0 };
			st->dirs++;
			break;
		}
		case R_FILE: r2 = write_file(in, fd, name, &r, st); break;
		case R_SYMLINK: r2 = write_symlink(in, fd, name, &r, st); break;
		case R_LINK: r2 = write_link(in, root, fd, name, &r, st); break;
		default:
			fprintf(stderr, "husk: workdir: skipped %s (device, fifo or socket)\n", name);
			st->skipped++;
			r2 = skip(in, r.size);
		}
		if (r2 < 0) {
			rc = errmsg(err, n, "the workdir image ended early (corrupt or unreadable)");
			break;
		}
		st->skipped += r2 > 0;
	}
out:
	if (!rc)
		prune(&stack[0], st);
	while (depth > 0) {
		for (size_t i = 0; i < stack[depth].n; i++)
			free(stack[depth].names[i]);
		free(stack[depth].names);
		close(stack[depth--].fd);
	}
	if (rc) {
		for (size_t i = 0; i < stack[0].n; i++)
			free(stack[0].names[i]);
		free(stack[0].names);
	}
	stack[0].names = NULL, stack[0].n = stack[0].cap = 0;
	return rc;
}

int workdir_extract(const char *image, const char *dir, const struct extract_limits *lim, struct extract_stats *st,
		    char *err, size_t n)
{
	memset(st, 0, sizeof *st);
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errmsg(err, n, "cannot open workdir %s: %s", dir, strerror(errno));
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		close(root);
		return errmsg(err, n, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(root), close(p[0]), close(p[1]);
		return errmsg(err, n, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(p[0]);
		close(root);
		reader(image, p[1]);
	}
	close(p[1]);
	int rc = write_tree(p[0], root, lim, st, err, n);
	close(p[0]);
	close(root);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc = errmsg(err, n, "reading the workdir image failed (%s %d)",
			  WIFSIGNALED(status) ? "signal" : "status",
			  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return rc;
}
