/* SPDX-License-Identifier: GPL-2.0-only */
/* execve and execveat.  Everything that can fail is done while the process
 * is still as it was: the arguments copied in, the file found and checked,
 * a "#!" script's interpreter found in its place (five in a row at most, as
 * Linux), the ELF file read and validated by loader/elf_load.c (the VMM's own
 * loader, built into the kernel too), and then the new address space built
 * beside the old one: the image copied in (for a dynamically linked program
 * its interpreter too, PT_INTERP's file, loaded above it: Linux's
 * load_elf_binary, at fixed addresses), the stack laid out as the first
 * program's (program.c).  A failure up to there, running out of memory
 * included, switches back to the old address space and returns the error:
 * where Linux has dropped the old one already and must kill the process,
 * nothing of it has changed here.  Only then does the process change for
 * good: the old address space given up (a vfork parent woken), close-on-exec
 * fds closed, signal handlers reset (process.c, file.c, signal.c), and the
 * new program entered as the first one is. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include "elf_load.h"
#include "errmsg.h"
#include "kernel.h"
#include "linux_abi.h"
#include "fs/file.h"
#include "fs/vfs.h"
#include "mm/mm.h"
#include "proc/exec.h"
#include "proc/itimer.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "proc/signal.h"

#define ARG_BYTES_MAX (2ul << 20)        /* argv and envp, strings and pointers: Linux's, a quarter of 8 MiB */
#define ARG_STRLEN_MAX (32 * PAGE_SIZE) /* one string with its NUL: Linux's MAX_ARG_STRLEN */
#define BINPRM_BUF 256                  /* what is read of a file for its kind: Linux's, a "#!" line's limit */
#define MAX_DEPTH 5                     /* "#!" interpreters in a row (Linux: exec_binprm) */

/* One execve's state, in kernel memory: the stack is kept for the path
 * lookups (a lookup takes ~30 KiB of a thread's 32). */
struct exec {
	struct node node;
	char path[PATH_MAX];       /* the file now looked at, as named: the caller's, then an interpreter's */
	char execfn[PATH_MAX];     /* the caller's name for it: AT_EXECFN */
	char head[BINPRM_BUF + 1]; /* the file's first bytes, zero after them */
	struct strlist argv, envp;
	size_t argv_size, envp_size; /* their buffers' kalloc sizes */
	struct mount *m;           /* the file */
	uint32_t ino;
	uint64_t size;
	uint8_t *file;             /* all of it, for elf_load: file_size bytes */
	size_t file_size, file_alloc;
	uint8_t *interp;           /* a dynamic program's interpreter, all of it: interp_size bytes */
	size_t interp_size, interp_alloc;
};

/* --- the file ------------------------------------------------------------- */

int exec_lookup_at(long dirfd, const char *path, int follow, struct node *n)
{
	const char *base = "/";
	if (!path[0])
		return -ENOENT;
	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			base = process_cwd();
		} else {
			struct file *f = fd_get(dirfd);
			if (!f)
				return -EBADF;
			if (!f->is_dir || !f->path)
				return -ENOTDIR;
			base = f->path;
		}
	}
	int r = vfs_lookup(base, path, follow ? LOOKUP_FOLLOW : 0, n);
	if (!r && n->kind == NODE_FS && !n->ino)
		r = -ENOENT;
	return r;
}

/* x->m and x->ino are a regular file with an execute bit (root runs any
 * such file): its size, or -EACCES (a directory, a device), -ELOOP (a
 * symlink: AT_SYMLINK_NOFOLLOW). */
static int check_file(struct exec *x)
{
	struct fs_stat st;
	int r = x->m->ops->stat(x->m->fs, x->ino, &st);
	if (r)
		return r;
	if ((st.mode & S_IFMT) == S_IFLNK)
		return -ELOOP;
	if ((st.mode & S_IFMT) != S_IFREG || !(st.mode & 0111))
		return -EACCES;
	x->size = st.size;
	return 0;
}

static int find_file(struct exec *x, long dirfd, const char *path, int follow)
{
	int r = exec_lookup_at(dirfd, path, follow, &x->node);
	if (r)
		return r;
	if (x->node.kind != NODE_FS)
		return -EACCES; /* /, /data, /dev and the devices */
	x->m = x->node.m, x->ino = x->node.ino;
	return check_file(x);
}

/* The first file: the caller's path (x->path) from dirfd, or the file open
 * on dirfd (AT_EMPTY_PATH).  x->path becomes the name an interpreter gets
 * in argv and the program in AT_EXECFN: the caller's, or for one relative
 * to a directory fd its absolute path, for a file fd /dev/fd/N (as Linux,
 * which names a path relative to a directory fd /dev/fd/N/PATH; husk has no
 * /dev/fd). */
static int find_first(struct exec *x, long dirfd, long flags)
{
	int r;
	if (!x->path[0]) {
		if (!(flags & AT_EMPTY_PATH))
			return -ENOENT;
		struct file *f = fd_get(dirfd);
		if (!f)
			return -EBADF;
		if (f->kind != FILE_FS || f->is_dir)
			return -EACCES;
		x->m = f->m, x->ino = f->ino;
		ksnprintf(x->path, sizeof x->path, "/dev/fd/%ld", dirfd);
		r = check_file(x);
	} else {
		r = find_file(x, dirfd, x->path, !(flags & AT_SYMLINK_NOFOLLOW));
		if (!r && x->path[0] != '/' && dirfd != AT_FDCWD)
			memcpy(x->path, x->node.path, strlen(x->node.path) + 1);
	}
	memcpy(x->execfn, x->path, sizeof x->path);
	return r;
}

/* Bytes [off, off+len) of a file into buf: how many there were, or
 * -errno. */
static long read_file_at(struct mount *m, uint32_t ino, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		long n = m->ops->read(m->fs, ino, off + done, (char *)buf + done, len - done);
		if (n < 0)
			return n;
		if (!n)
			break;
		done += n;
	}
	return done;
}

static long read_at(struct exec *x, uint64_t off, void *buf, size_t len)
{
	return read_file_at(x->m, x->ino, off, buf, len);
}

/* A whole file of size bytes into kernel memory (*alloc: its kalloc size;
 * *len: what was read, shorter if the file shrank since). */
static long read_whole(struct mount *m, uint32_t ino, uint64_t size, uint8_t **buf, size_t *len, size_t *alloc)
{
	if (size > boot.ram_size)
		return -ENOMEM;
	*alloc = size ? size : 1;
	if (!(*buf = kalloc(*alloc)))
		return -ENOMEM;
	long n = read_file_at(m, ino, 0, *buf, size);
	if (n < 0)
		return n;
	*len = (size_t)n;
	return 0;
}

/* --- the arguments ---------------------------------------------------------- */

static int copy_path(char *dst, const char *u)
{
	for (size_t i = 0; i < PATH_MAX; i++) {
		if (!user_ok(u + i, 1))
			return -EFAULT;
		if (!(dst[i] = u[i]))
			return 0;
	}
	return -ENAMETOOLONG;
}

/* The length of the program's string at u (its NUL not counted) when below
 * max: -EFAULT, or -E2BIG when longer.  Checked a page at a time. */
static long user_strnlen(const char *u, size_t max)
{
	for (size_t n = 0; n < max;) {
		uintptr_t a = (uintptr_t)u + n;
		size_t chunk = PAGE_SIZE - (a & (PAGE_SIZE - 1));
		if (!user_ok((const void *)a, chunk))
			return -EFAULT;
		const char *z = memchr((const void *)a, 0, chunk);
		if (z) {
			n += z - (const char *)a;
			return n < max ? (long)n : -E2BIG;
		}
		n += chunk;
	}
	return -E2BIG;
}

/* The program's argv or envp (NULL: none) as a strlist in kernel memory;
 * *budget (bytes left for strings and pointers) shrinks by its share. */
static long copy_list(char *const *u, struct strlist *l, size_t *size, size_t *budget)
{
	size_t bytes = 0;
	int n = 0;
	for (; u; n++) { /* first the sizes, */
		if (!user_ok(u + n, sizeof *u))
			return -EFAULT;
		if (!u[n])
			break;
		long len = user_strnlen(u[n], ARG_STRLEN_MAX);
		if (len < 0)
			return len;
		if ((size_t)len + 1 + sizeof(char *) > *budget)
			return -E2BIG;
		*budget -= len + 1 + sizeof(char *);
		bytes += len + 1;
	}
	char *buf = kalloc(bytes ? bytes : 1);
	if (!buf)
		return -ENOMEM;
	size_t off = 0;
	for (int i = 0; i < n; i++) { /* then the strings: nothing else runs in this address space */
		size_t len = strnlen(u[i], bytes - off);
		if (off + len >= bytes) {
			kfree(buf, bytes ? bytes : 1);
			return -EFAULT;
		}
		memcpy(buf + off, u[i], len + 1);
		off += len + 1;
	}
	l->s = buf, l->len = bytes, l->n = n;
	*size = bytes ? bytes : 1;
	return 0;
}

static long copy_args(struct exec *x, char *const uargv[], char *const uenvp[])
{
	size_t budget = ARG_BYTES_MAX;
	long r = copy_list(uargv, &x->argv, &x->argv_size, &budget);
	if (!r)
		r = copy_list(uenvp, &x->envp, &x->envp_size, &budget);
	if (!r && !x->argv.n) { /* as Linux (5.18): argv[0] "" rather than none */
		x->argv.len = x->argv.n = 1;
		((char *)x->argv.s)[0] = 0;
	}
	return r;
}

/* --- "#!" scripts: fs/binfmt_script.c's parsing -------------------------- */

static int spacetab(char c)
{
	return c == ' ' || c == '\t';
}

static char *next_non_spacetab(char *first, char *last)
{
	for (; first <= last; first++)
		if (!spacetab(*first))
			return first;
	return 0;
}

static char *next_terminator(char *first, char *last)
{
	for (; first <= last; first++)
		if (spacetab(*first) || !*first)
			return first;
	return 0;
}

/* The interpreter and its optional one argument (the rest of the line),
 * terminated in place in x->head: -ENOEXEC when there is none, or when its
 * name does not end within BINPRM_BUF bytes. */
static int parse_script(char *buf, char **interp, char **arg)
{
	char *buf_end = buf + BINPRM_BUF - 1, *i_end = 0;
	for (char *p = buf; p < buf + BINPRM_BUF && *p; p++) {
		if (*p == '\n') {
			i_end = p;
			break;
		}
	}
	if (!i_end) {
		i_end = next_non_spacetab(buf + 2, buf_end);
		if (!i_end || !next_terminator(i_end, buf_end))
			return -ENOEXEC; /* only blanks, or the interpreter's name cut short */
		i_end = buf_end;
	}
	while (spacetab(i_end[-1]))
		i_end--;
	char *i_name = next_non_spacetab(buf + 2, i_end);
	if (!i_name || i_name == i_end)
		return -ENOEXEC;
	char *i_sep = next_terminator(i_name, i_end);
	*arg = i_sep && *i_sep ? next_non_spacetab(i_sep, i_end) : 0;
	*i_end = 0;
	if (i_sep)
		*i_sep = 0;
	*interp = i_name;
	return 0;
}

/* argv becomes {interp, [arg], x->path, argv[1..]}, as Linux's. */
static int script_argv(struct exec *x, const char *interp, const char *arg)
{
	struct strlist *a = &x->argv;
	size_t first = strlen(a->s) + 1; /* argv[0] goes (there is one: copy_args) */
	size_t il = strlen(interp) + 1, al = arg ? strlen(arg) + 1 : 0, pl = strlen(x->path) + 1;
	size_t len = il + al + pl + a->len - first;
	int n = a->n - 1 + 2 + (arg ? 1 : 0);
	if (len + x->envp.len + (size_t)(n + x->envp.n) * sizeof(char *) > ARG_BYTES_MAX)
		return -E2BIG;
	char *buf = kalloc(len);
	if (!buf)
		return -ENOMEM;
	char *p = buf;
	memcpy(p, interp, il), p += il;
	if (arg)
		memcpy(p, arg, al), p += al;
	memcpy(p, x->path, pl), p += pl;
	memcpy(p, a->s + first, a->len - first);
	kfree((void *)a->s, x->argv_size);
	a->s = buf, a->len = len, a->n = n;
	x->argv_size = len;
	return 0;
}

/* --- the ELF image ------------------------------------------------------- */

/* elf_load reaches guest memory through gpa_ptr (vmm/guest_mem.h): here the
 * current address space, the new one.  Before, elf_load runs with probing
 * set: it has validated the whole file when it first asks for memory, and
 * gets none. */
static int probing, probe_reached;

void *gpa_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	(void)m;
	if (probing) {
		probe_reached = 1;
		return 0;
	}
	return mm_map_image(mm_current, gpa, len) ? 0 : (void *)(uintptr_t)gpa;
}

/* elf_load's reasons (vmm/errmsg.h): not shown, the program gets ENOEXEC. */
int errmsg(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* What the VMM allows the first program (vmm/main.c), and a dynamically
 * linked one. */
static struct elf_limits limits(void)
{
	return (struct elf_limits){ HUSK_PROGRAM_MIN, HUSK_IMAGE_LIMIT(boot.ram_size), HUSK_PIE_BASE, 1, 1 };
}

/* A dynamic program's interpreter: position-independent, 2 MiB above the
 * program's image (hi), no interpreter of its own. */
static struct elf_limits interp_limits(uint64_t hi)
{
	uint64_t base = ALIGN_UP(hi, 2ul << 20) + (2ul << 20);
	return (struct elf_limits){ base, HUSK_IMAGE_LIMIT(boot.ram_size), base, 0, 0 };
}

static int probe(const struct elf_limits *lim, const uint8_t *file, size_t size, struct elf_image *img)
{
	char err[160];
	probing = 1, probe_reached = 0;
	elf_load(0, file, size, lim, img, err, sizeof err);
	probing = 0;
	return probe_reached;
}

/* 0, -ENOEXEC, or -ENOMEM for a program too big for this VM's memory;
 * *img: what the check found (PT_INTERP's path). */
static int elf_check_file(const uint8_t *file, size_t size, struct elf_limits lim, struct elf_image *img)
{
	if (probe(&lim, file, size, img))
		return 0;
	lim.max = UINT64_MAX;
	return probe(&lim, file, size, img) ? -ENOMEM : -ENOEXEC;
}

/* A dynamic program's interpreter (img: the program's check), found and
 * read into x->interp and checked: 0 also when there is none; an
 * interpreter that is missing is the exec's ENOENT, as Linux's. */
static int find_interp(struct exec *x, const struct elf_image *img)
{
	if (!img->interp_len)
		return 0;
	struct node *n = kalloc(sizeof *n);
	if (!n)
		return -ENOMEM;
	struct fs_stat st;
	int r = exec_lookup_at(AT_FDCWD, (const char *)x->file + img->interp_off, 1, n);
	if (!r && n->kind != NODE_FS)
		r = -EACCES;
	if (!r)
		r = n->m->ops->stat(n->m->fs, n->ino, &st);
	if (!r && (st.mode & S_IFMT) != S_IFREG)
		r = -EACCES;
	if (!r)
		r = (int)read_whole(n->m, n->ino, st.size, &x->interp, &x->interp_size, &x->interp_alloc);
	kfree(n, sizeof *n);
	struct elf_image interp;
	if (!r) /* somewhere above any program: where exactly is decided at the load */
		r = elf_check_file(x->interp, x->interp_size, interp_limits(HUSK_PROGRAM_MIN), &interp);
	return r;
}

/* --- execve ---------------------------------------------------------------- */

/* x->m, x->ino: the program (interpreters followed), all of it in x->file. */
static long find_program(struct exec *x)
{
	for (int depth = 0;; depth++) {
		if (depth > MAX_DEPTH)
			return -ELOOP;
		memset(x->head, 0, sizeof x->head);
		long n = read_at(x, 0, x->head, BINPRM_BUF);
		if (n < 0)
			return n;
		if (n >= 2 && x->head[0] == '#' && x->head[1] == '!') {
			char *interp, *arg;
			int r = parse_script(x->head, &interp, &arg);
			if (!r)
				r = script_argv(x, interp, arg);
			if (r)
				return r;
			memcpy(x->path, interp, strlen(interp) + 1); /* under BINPRM_BUF bytes */
			if ((r = find_file(x, AT_FDCWD, x->path, 1)))
				return r;
			continue;
		}
		if (n < SELFMAG || memcmp(x->head, ELFMAG, SELFMAG))
			return -ENOEXEC;
		break;
	}
	struct elf_image img;
	long r = read_whole(x->m, x->ino, x->size, &x->file, &x->file_size, &x->file_alloc);
	if (!r)
		r = elf_check_file(x->file, x->file_size, limits(), &img);
	if (!r)
		r = find_interp(x, &img);
	return r;
}

static void free_file(struct exec *x)
{
	kfree(x->file, x->file_alloc);
	x->file = 0;
	if (x->interp)
		kfree(x->interp, x->interp_alloc);
	x->interp = 0;
}

/* The new address space, built and filled, then the process's for good:
 * returns only on an error, the old address space current again. */
static long exec_image(struct exec *x)
{
	process_single_thread(); /* before the new address space is made: the others run in the old one */
	struct mm *old = mm_current, *m = mm_create(boot.ram_size);
	if (!m)
		return -ENOMEM;
	mm_switch(m);
	struct elf_limits lim = limits();
	struct elf_image img, in = { 0 };
	char err[160];
	long r = elf_load(0, x->file, x->file_size, &lim, &img, err, sizeof err) ? -ENOMEM : 0;
	if (!r && x->interp) {
		struct elf_limits il = interp_limits(img.hi);
		r = elf_load(0, x->interp, x->interp_size, &il, &in, err, sizeof err) ? -ENOMEM : 0;
	}
	free_file(x);
	if (!r)
		r = mm_image_done(m, in.hi ? in.hi : img.hi);
	size_t need = stack_bytes(&x->argv, &x->envp, x->execfn);
	if (!r && !user_ok((const void *)(m->stack_top - need), need)) /* backs the stack's pages */
		r = -ENOMEM;
	if (r) {
		mm_switch(old);
		mm_put(m);
		return r;
	}
	uintptr_t sp = stack_build(m->stack_top, &x->argv, &x->envp, x->execfn, img.entry, img.phdr, img.phnum, in.lo);
	mm_set_exe(m, x->node.path[0] ? x->node.path : x->path, x->m->index, x->ino); /* an interpreter's, for a script */
	process_set_comm(current->proc, x->execfn);
	kfree((void *)x->argv.s, x->argv_size);
	kfree((void *)x->envp.s, x->envp_size);
	kfree(x, sizeof *x);

	/* The point of no return.  The address space first, as Linux
	 * (exec_mmap, then the fds): from process_exec_done on the process's mm
	 * is the new one, so a close that gives up the CPU comes back to it. */
	process_exec_done(old);
	fd_close_on_exec();
	signal_exec_reset();
	itimer_exec(); /* its POSIX timers go; setitimer's stay */
	current->fs_base = 0;
	fs_base_write(0);
	current->clear_tid = 0; /* as Linux's exec_mm_release */
	current->robust_list = current->robust_len = 0;
	current->unmap_at_exit[1] = 0; /* the old address space's */
	current->frame = 0; /* a `syscall` instruction's, never returned to */
	fpu_reset(); /* as Linux: the old program's rounding modes and vector state are not the new one's */
	interrupts_on(); /* the `syscall` instruction turned them off */
	enter_program(in.entry ? in.entry : img.entry, sp);
}

long sys_execveat(long dirfd, const char *upath, char *const uargv[], char *const uenvp[], long flags)
{
	if (flags & ~(long)(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	struct exec *x = kalloc(sizeof *x);
	if (!x)
		return -ENOMEM;
	long r = copy_path(x->path, upath);
	if (!r)
		r = find_first(x, dirfd, flags);
	if (!r)
		r = copy_args(x, uargv, uenvp);
	if (!r)
		r = find_program(x);
	if (!r)
		r = exec_image(x); /* returns only on an error */
	if (x->file)
		free_file(x);
	kfree((void *)x->argv.s, x->argv_size);
	kfree((void *)x->envp.s, x->envp_size);
	kfree(x, sizeof *x);
	return r;
}

long sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return sys_execveat(AT_FDCWD, path, argv, envp, 0);
}
