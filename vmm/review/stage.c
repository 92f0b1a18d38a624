/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "audit.h"
#include "errmsg.h"
#include "full_io.h"
#include "progress.h"
#include "disks/copyin.h"
#include "disks/extract.h"
#include "disks/extract_stream.h"
#include "disks/workdir_reader.h"
#include "review/stage.h"

#define MANIFEST "manifest.json"
#define STAGE_FORMAT 1

/* ---- making a stage ----------------------------------------------------- */

/* A file staged with its data, by guest inode: a later name of it (R_LINK)
 * shares its data, and a deleted name of it makes it a rename. */
struct staged_file {
	uint32_t ino;
	int renamed; /* a deleted name already became this one's rename */
	json_t *change;
};

struct stager {
	int in, dir, data;
	int workdir; /* the host's workdir: renames are checked against its files */
	const struct copyin_record *rec;
	const struct extract_limits *lim;
	const struct file_policy *pol;
	int audit;
	unsigned char *seen; /* per record entry: the guest still has that name */
	json_t *changes;
	struct staged_file *files;
	size_t nfiles, capfiles;
	int by_ino; /* files sorted by inode (after the walk) */
	uint64_t total, entries, next_data;
	struct stage_stats *st;
	char path[MAX_PATH];
	size_t plen[MAX_DEPTH + 2];
	int depth;
};

static const char *type_name(uint32_t mode)
{
	return S_ISDIR(mode) ? "dir" : S_ISLNK(mode) ? "symlink" : "file";
}

static json_t *before_json(const struct copyin_entry *e)
{
	return json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I}", "type", type_name(e->mode), "mode", (int)(e->mode & 07777),
			 "size", (json_int_t)e->size, "mtime_ns", (json_int_t)e->mtime_ns, "ctime_ns",
			 (json_int_t)e->ctime_ns, "dev", (json_int_t)e->dev, "ino", (json_int_t)e->ino);
}

/* A change at path: checked against the policy, added to the list (the
 * list holds it: the pointer stays valid while the stager lives). */
static json_t *change(struct stager *s, const char *path, const char *action, const char *type, uint32_t mode,
		      uint64_t size, const struct copyin_entry *before)
{
	json_t *c = json_pack("{s:s, s:s, s:s, s:i, s:I, s:s}", "path", path, "action", action, "type", type, "mode",
			      (int)(mode & 07777), "size", (json_int_t)size, "state", "staged");
	if (before)
		json_object_set_new(c, "before", before_json(before));
	struct file_change fc = { path, type[0] == 'd' ? 'd' : type[0] == 's' ? 'l' : 'f', !strcmp(action, "delete"),
				  mode, size };
	const char *why = file_policy_refuses(s->pol, &fc, &s->total);
	if (why) {
		json_object_set_new(c, "denied", json_string(why));
		s->st->denied++;
		audit_file_denial(s->audit, path, action, why);
	}
	json_array_append_new(s->changes, c);
	s->st->changes++;
	return c;
}

static int remember_file(struct stager *s, uint32_t ino, json_t *c)
{
	if (s->nfiles == s->capfiles) {
		size_t cap = s->capfiles ? 2 * s->capfiles : 256;
		struct staged_file *f = realloc(s->files, cap * sizeof *f);
		if (!f)
			return -1;
		s->files = f, s->capfiles = cap;
	}
	s->files[s->nfiles++] = (struct staged_file){ ino, 0, c };
	return 0;
}

/* -2, the host's error: out of memory. */
static int no_memory(char *err, size_t n)
{
	errmsg(err, n, "out of memory");
	return -2;
}

/* The first staged file with guest inode ino not renamed yet: looked for
 * in order during the walk (a hard link's first name; few), by halves
 * after it, when every deleted name is looked up (many). */
static struct staged_file *staged_by_ino(struct stager *s, uint32_t ino)
{
	size_t lo = 0, hi = s->nfiles;
	while (s->by_ino && lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (s->files[m].ino < ino)
			lo = m + 1;
		else
			hi = m;
	}
	for (size_t i = lo; i < s->nfiles; i++) {
		if (s->files[i].ino == ino && !s->files[i].renamed)
			return &s->files[i];
		if (s->by_ino && s->files[i].ino != ino)
			break;
	}
	return NULL;
}

static int ino_order(const void *x, const void *y)
{
	uint32_t a = ((const struct staged_file *)x)->ino, b = ((const struct staged_file *)y)->ino;
	return (a > b) - (a < b);
}
static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* The file's data from the stream into data/N (a digest on the way); not
 * kept for a denied change.  0, -1 when the stream broke, -2 on a host
 * error (err). */
static int stage_data(struct stager *s, json_t *c, uint64_t size, char *err, size_t n)
{
	if (json_object_get(c, "denied"))
		return full_skip(s->in, size);
	char name[32];
	uint64_t id = s->next_data++;
	snprintf(name, sizeof name, "%llu", (unsigned long long)id);
	int fd = openat(s->data, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		errmsg_errno(err, n, "cannot write the stage's data/%s", name);
		return -2;
	}
	struct sha256_ctx h;
	sha256_init(&h);
	static uint8_t buf[65536];
	int r = 0;
	for (uint64_t left = size; left && !r;) {
		size_t k = left < sizeof buf ? left : sizeof buf;
		if (full_read(s->in, buf, k)) {
			r = -1;
			break;
		}
		sha256_update(&h, k, buf);
		if (full_write(fd, buf, k)) {
			errmsg_errno(err, n, "cannot write the stage's data/%s", name);
			r = -2;
		}
		left -= k;
		progress_show(s->entries, "entries", s->st->bytes + (size - left));
	}
	if (close(fd) && !r) {
		errmsg_errno(err, n, "cannot write the stage's data/%s", name);
		r = -2;
	}
	uint8_t d[SHA256_DIGEST_SIZE];
	char x[2 * SHA256_DIGEST_SIZE + 1];
	sha256_digest(&h, sizeof d, d);
	hex(d, sizeof d, x);
	json_object_set_new(c, "data", json_integer((json_int_t)id));
	json_object_set_new(c, "sha256", json_string(x));
	s->st->bytes += size;
	return r;
}

/* The program left this entry alone (one rule with the reader's). */
static int untouched(const struct rec *r, const struct copyin_entry *e)
{
	return stream_untouched(e, r->ino, r->mode, r->touched);
}

static const char *action_for(const struct copyin_entry *e, const char *type)
{
	return !e ? "create" : strcmp(type_name(e->mode), type) ? "replace" : "modify";
}

static const struct copyin_entry *recorded(struct stager *s, const char *path)
{
	const struct copyin_entry *e = s->rec ? copyin_find(s->rec, path) : NULL;
	if (e)
		s->seen[e - s->rec->e] = 1;
	return e;
}

/* One file, symlink or hard link: 0, -1 stream broken, -2 host error. */
static int one_entry(struct stager *s, const struct rec *r, char *err, size_t n)
{
	const struct copyin_entry *e = recorded(s, s->path);
	if ((r->flags & R_WITHHELD) && !(r->type == R_FILE && untouched(r, e)))
		return -1; /* the reader's rule is the writer's: a broken stream */
	if (untouched(r, e) && r->type != R_LINK)
		return full_skip(s->in, r->size);
	json_t *c;
	switch (r->type) {
	case R_FILE:
		if (r->flags & R_LOST) {
			c = change(s, s->path, action_for(e, "file"), "file", r->mode, r->size, e);
			s->st->denied += !json_object_get(c, "denied");
			json_object_set_new(c, "denied", json_string("its unchanged parts were in a host file replaced during "
								     "the run: it cannot be rebuilt"));
			return 0;
		}
		c = change(s, s->path, action_for(e, "file"), "file", r->mode, r->size, e);
		json_object_set_new(c, "mtime", json_integer(r->mtime));
		if (remember_file(s, r->ino, c))
			return no_memory(err, n);
		return stage_data(s, c, r->size, err, n);
	case R_SYMLINK: {
		static char target[4097];
		if (r->size >= sizeof target || full_read(s->in, target, r->size))
			return -1;
		target[r->size] = 0;
		if (strlen(target) != r->size || !r->size)
			return 0; /* not a symlink anything can make */
		c = change(s, s->path, action_for(e, "symlink"), "symlink", 0777, r->size, e);
		json_object_set_new(c, "target", json_string(target));
		json_object_set_new(c, "mtime", json_integer(r->mtime));
		return remember_file(s, r->ino, c) ? no_memory(err, n) : 0;
	}
	case R_LINK: {
		static char first[MAX_PATH];
		if (r->size >= sizeof first || full_read(s->in, first, r->size))
			return -1;
		first[r->size] = 0;
		if (e && e->guest_ino == r->ino && !r->touched)
			return 0; /* a name copied in as a link of that file, left alone */
		struct staged_file *f = staged_by_ino(s, r->ino);
		const struct copyin_entry *src = s->rec ? copyin_find(s->rec, first) : NULL;
		uint64_t size = f ? (uint64_t)json_integer_value(json_object_get(f->change, "size"))
				  : src ? src->size : 0;
		c = change(s, s->path, action_for(e, "file"), "file", r->mode, size, e);
		json_object_set_new(c, "link_to", json_string(first));
		if (f && json_object_get(f->change, "data")) { /* the data staged for its first name */
			json_object_set(c, "data", json_object_get(f->change, "data"));
			json_object_set(c, "sha256", json_object_get(f->change, "sha256"));
			json_object_set(c, "mtime", json_object_get(f->change, "mtime"));
		}
		return 0;
	}
	default:
		return full_skip(s->in, r->size); /* devices, fifos, sockets: never written back */
	}
}

static void one_dir(struct stager *s, const struct rec *r)
{
	const struct copyin_entry *e = recorded(s, s->path);
	if (!e || !S_ISDIR(e->mode))
		change(s, s->path, action_for(e, "dir"), "dir", r->mode, 0, e);
	else if (r->touched && (r->mode & 0777) != (e->mode & 0777))
		change(s, s->path, "mode", "dir", r->mode, 0, e);
}

/* One record: 1 at the end, 0 to go on, -1 broken stream, -2 host error. */
static int step(struct stager *s, char *err, size_t n)
{
	struct rec r;
	char name[256];
	if (full_read(s->in, &r, sizeof r))
		return -1;
	if (r.type == R_END)
		return 1;
	if (r.type == R_ERROR)
		return -1;
	if (r.type == R_UP) {
		if (!s->depth)
			return -1;
		s->path[s->plen[--s->depth]] = 0;
		return 0;
	}
	if (r.name_len >= sizeof name || full_read(s->in, name, r.name_len))
		return -1;
	name[r.name_len] = 0;
	if (++s->entries > s->lim->max_files || r.size > s->lim->max_bytes - s->st->bytes)
		return -1;
	progress_show(s->entries, "entries", s->st->bytes);
	size_t plen = s->plen[s->depth];
	if (plen + 1 + r.name_len >= MAX_PATH || !stream_valid_name(name, r.name_len))
		return -1;
	if (plen)
		s->path[plen++] = '/';
	memcpy(s->path + plen, name, r.name_len + 1);
	if (r.type == R_DIR) {
		if (s->depth == MAX_DEPTH)
			return -1;
		s->plen[++s->depth] = strlen(s->path);
		one_dir(s, &r);
		return 0;
	}
	int k = one_entry(s, &r, err, n);
	s->path[s->plen[s->depth]] = 0;
	return k;
}

int stage_sha256(int fd, char out[65])
{
	struct sha256_ctx h;
	sha256_init(&h);
	static uint8_t buf[65536];
	ssize_t k;
	for (off_t off = 0; (k = pread(fd, buf, sizeof buf, off)) > 0; off += k)
		sha256_update(&h, (size_t)k, buf);
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&h, sizeof d, d);
	hex(d, sizeof d, out);
	return k < 0 ? -1 : 0;
}

/* The host's file at e's path holds what the staged file f does: the same
 * size and digest. */
static int same_data(struct stager *s, const struct copyin_entry *e, struct staged_file *f)
{
	const char *want = change_str(f->change, "sha256");
	if (!want || (uint64_t)json_integer_value(json_object_get(f->change, "size")) != e->size)
		return 0;
	char got[65];
	int fd = extract_host_open(s->workdir, e->path);
	if (fd < 0)
		return 0;
	int r = stage_sha256(fd, got);
	close(fd);
	return r == 0 && !strcmp(got, want);
}

/* After the walk: the recorded names the guest no longer has.  One whose
 * inode the guest has at a new name, with the same data, is a rename (a
 * new file can also get a deleted one's inode number: the data tells). */
static void deletions(struct stager *s)
{
	qsort(s->files, s->nfiles, sizeof *s->files, ino_order);
	s->by_ino = 1;
	for (size_t i = 0; s->rec && i < s->rec->n; i++) {
		const struct copyin_entry *e = &s->rec->e[i];
		if (s->seen[i] || !e->path[0])
			continue;
		struct staged_file *f = S_ISDIR(e->mode) ? NULL : staged_by_ino(s, e->guest_ino);
		if (f && !strcmp(change_str(f->change, "action"), "create") && S_ISREG(e->mode) &&
		    !strcmp(change_str(f->change, "type"), "file") && same_data(s, e, f)) {
			struct file_change fc = { e->path, 'f', 1, 0, 0 };
			const char *why = json_object_get(f->change, "denied") ? NULL : file_policy_refuses(s->pol, &fc, &s->total);
			json_object_set_new(f->change, "action", json_string("rename"));
			json_object_set_new(f->change, "from", json_string(e->path));
			json_object_set_new(f->change, "before", before_json(e));
			if (why) {
				json_object_set_new(f->change, "denied", json_string(why));
				s->st->denied++;
				audit_file_denial(s->audit, e->path, "delete", why);
			}
			f->renamed = 1; /* one rename per staged file */
			continue;
		}
		change(s, e->path, "delete", type_name(e->mode), e->mode, e->size, e);
	}
}

/* Paths in tree order: a directory, then everything in it, then what
 * follows it ('/' before every other byte). */
static int tree_order(const void *x, const void *y)
{
	const unsigned char *a = (const unsigned char *)change_str(*(json_t *const *)x, "path");
	const unsigned char *b = (const unsigned char *)change_str(*(json_t *const *)y, "path");
	for (; *a && *a == *b; a++, b++)
		;
	int ca = *a == '/' ? 1 : *a ? *a + 1 : 0, cb = *b == '/' ? 1 : *b ? *b + 1 : 0;
	return ca - cb;
}

static void sort_changes(json_t *changes)
{
	size_t n = json_array_size(changes);
	json_t **v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return; /* stream order: parents before children too */
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(changes, i));
	qsort(v, n, sizeof *v, tree_order);
	json_array_clear(changes);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(changes, v[i]);
	free(v);
}

static int write_manifest(int dir, json_t *m, char *err, size_t n)
{
	char *text = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		return errmsg(err, n, "out of memory");
	int fd = openat(dir, MANIFEST ".new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int bad = fd < 0 || full_write(fd, text, strlen(text)) || full_write(fd, "\n", 1) || fsync(fd);
	if (fd >= 0 && close(fd))
		bad = 1;
	free(text);
	if (bad || renameat(dir, MANIFEST ".new", dir, MANIFEST))
		return errmsg_errno(err, n, "cannot write the stage's manifest");
	return 0;
}

/* The stage's directory beside the workdir (its fd: its path now, from
 * /proc, never the name it was given): 0, its fd in *dir, the workdir's
 * path in real. */
static int make_dir(int workdir, char real[PATH_MAX], char path[STAGE_PATH], char id[9], int *dir, char *err, size_t n)
{
	char link[64], parent[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", workdir);
	ssize_t k = readlink(link, real, PATH_MAX - 1);
	if (k <= 0 || real[0] != '/')
		return errmsg_errno(err, n, "cannot find where the workdir is now");
	real[k] = 0;
	snprintf(parent, sizeof parent, "%s", real);
	char *slash = strrchr(parent, '/');
	const char *base = slash + 1;
	*slash = 0;
	uint8_t r[4];
	if (getrandom(r, sizeof r, 0) != sizeof r)
		return errmsg_errno(err, n, "getrandom");
	hex(r, sizeof r, id);
	int pfd = copyin_open_dir(parent[0] ? parent : "/", err, n);
	if (pfd < 0)
		return -1;
	char name[300];
	snprintf(name, sizeof name, "%.200s.husk-stage-%s", base[0] ? base : "root", id);
	if ((size_t)snprintf(path, STAGE_PATH, "%.3800s/%s", parent, name) >= STAGE_PATH) {
		close(pfd);
		return errmsg(err, n, "the workdir's path is too long for a stage beside it");
	}
	if (mkdirat(pfd, name, 0700) < 0 || (*dir = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		close(pfd);
		return errmsg_errno(err, n, "cannot make the stage %s", path);
	}
	close(pfd);
	return 0;
}

static int remove_stage_at(const char *path);

int stage_make(const struct workdir_image *img, const struct copyin_record *rec, const struct extract_limits *lim,
	       int workdir, const struct file_policy *pol, int audit_fd, json_t *run, char path[STAGE_PATH],
	       struct stage_stats *st, char *err, size_t n)
{
	memset(st, 0, sizeof *st);
	char id[9], real[PATH_MAX];
	struct stat top;
	struct stager s = { .rec = rec, .lim = lim, .pol = pol, .audit = audit_fd, .st = st, .data = -1, .workdir = workdir };
	if (fstat(workdir, &top) < 0) {
		errmsg_errno(err, n, "workdir");
		return EXTRACT_HOST_ERROR;
	}
	if (make_dir(workdir, real, path, id, &s.dir, err, n))
		return EXTRACT_HOST_ERROR;
	json_t *m = json_pack("{s:i, s:s, s:I, s:s, s:I, s:I}", "husk_stage", STAGE_FORMAT, "id", id, "made",
			      (json_int_t)time(NULL), "workdir", real, "workdir_dev", (json_int_t)top.st_dev,
			      "workdir_ino", (json_int_t)top.st_ino);
	if (run)
		json_object_set(m, "run", run);
	s.changes = json_array();
	json_object_set(m, "changes", s.changes);
	int rc = EXTRACT_HOST_ERROR;
	if (mkdirat(s.dir, "data", 0700) < 0 ||
	    (s.data = openat(s.dir, "data", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		errmsg_errno(err, n, "cannot make %s/data", path);
		goto out;
	}
	if (rec && !(s.seen = calloc(rec->n ? rec->n : 1, 1))) {
		errmsg(err, n, "out of memory");
		goto out;
	}
	pid_t pid = workdir_reader_start(img, rec, lim, &s.in);
	if (pid < 0) {
		errmsg_errno(err, n, "cannot start the workdir reader");
		goto out;
	}
	int k;
	while (!(k = step(&s, err, n)))
		;
	close(s.in);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (k == -2)
		goto out;
	if (k < 0 || s.depth || !WIFEXITED(status) || WEXITSTATUS(status)) {
		errmsg(err, n, "the workdir image is corrupt or over its limits: nothing was staged");
		rc = EXTRACT_BAD_IMAGE;
		goto out;
	}
	deletions(&s);
	sort_changes(s.changes);
	if (write_manifest(s.dir, m, err, n) == 0)
		rc = EXTRACT_OK;
out:
	if (rc != EXTRACT_OK)
		remove_stage_at(path); /* nothing half-made stays */
	if (s.data >= 0)
		close(s.data);
	close(s.dir);
	json_decref(s.changes);
	json_decref(m);
	free(s.seen);
	free(s.files);
	return rc;
}

/* ---- reading a stage back ------------------------------------------------ */

/* A path from the workdir's top as husk writes them: names joined by '/',
 * none empty, "." or "..". */
static int valid_path(const char *p)
{
	if (!p || !*p || strlen(p) >= MAX_PATH)
		return 0;
	for (const char *s = p;;) {
		size_t len = strcspn(s, "/");
		if (!stream_valid_name(s, len))
			return 0;
		if (!s[len])
			return 1;
		s += len + 1;
	}
}

static int valid_change(json_t *c)
{
	static const char *const actions[] = { "create", "modify", "replace", "rename", "delete", "mode" };
	static const char *const types[] = { "file", "dir", "symlink" };
	const char *a = change_str(c, "action"), *t = change_str(c, "type"), *st = change_str(c, "state");
	int ok_a = 0, ok_t = 0;
	for (size_t i = 0; a && i < 6; i++)
		ok_a |= !strcmp(a, actions[i]);
	for (size_t i = 0; t && i < 3; i++)
		ok_t |= !strcmp(t, types[i]);
	json_t *data = json_object_get(c, "data"), *before = json_object_get(c, "before");
	return json_is_object(c) && valid_path(change_str(c, "path")) && ok_a && ok_t && st &&
	       json_is_integer(json_object_get(c, "mode")) && json_is_integer(json_object_get(c, "size")) &&
	       (!data || (json_is_integer(data) && json_integer_value(data) >= 0)) &&
	       (!before || json_is_object(before)) && (strcmp(a, "rename") || valid_path(change_str(c, "from"))) &&
	       (strcmp(t, "symlink") || change_str(c, "target") || json_object_get(c, "denied")) &&
	       (!json_object_get(c, "link_to") || valid_path(change_str(c, "link_to")));
}

int stage_open(const char *path, struct stage *s, char *err, size_t n)
{
	memset(s, 0, sizeof *s);
	snprintf(s->path, sizeof s->path, "%s", path);
	s->dir = copyin_open_dir(path, err, n);
	if (s->dir < 0)
		return -1;
	int fd = openat(s->dir, MANIFEST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *text = NULL; /* read whole: json_loadfd reads a byte per call */
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1ll << 31) &&
	    (text = malloc((size_t)st.st_size + 1)) && full_read(fd, text, (size_t)st.st_size) == 0)
		s->manifest = json_loadb(text, (size_t)st.st_size, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	if (fd >= 0)
		close(fd);
	s->changes = json_object_get(s->manifest, "changes");
	int ok = s->manifest && json_integer_value(json_object_get(s->manifest, "husk_stage")) == STAGE_FORMAT &&
		 change_str(s->manifest, "workdir") && json_is_array(s->changes);
	size_t i;
	json_t *c;
	json_array_foreach(ok ? s->changes : NULL, i, c) ok = ok && valid_change(c);
	if (!ok) {
		stage_close(s);
		return errmsg(err, n, "%s is not a husk stage (no readable manifest.json of this husk's)", path);
	}
	return 0;
}

int stage_save(struct stage *s, char *err, size_t n)
{
	return write_manifest(s->dir, s->manifest, err, n);
}

size_t stage_pending(const struct stage *s)
{
	size_t i, k = 0;
	json_t *c;
	json_array_foreach(s->changes, i, c) k += change_pending(c);
	return k;
}

int stage_data_open(const struct stage *s, json_t *c)
{
	json_t *d = json_object_get(c, "data");
	if (!d)
		return -1;
	char name[48];
	snprintf(name, sizeof name, "data/%lld", (long long)json_integer_value(d));
	return openat(s->dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* The names husk puts in a stage, and nothing else: a file the user put
 * there stays, and so does the directory then. */
static void remove_dir(int parent, const char *name)
{
	int d = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return;
	int data = openat(d, "data", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (data >= 0) {
		int dup_fd = dup(data);
		DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		for (struct dirent *de; dir && (de = readdir(dir));)
			if (strspn(de->d_name, "0123456789") == strlen(de->d_name) && de->d_name[0])
				unlinkat(data, de->d_name, 0);
		if (dir)
			closedir(dir);
		close(data);
		unlinkat(d, "data", AT_REMOVEDIR);
	}
	unlinkat(d, MANIFEST, 0);
	unlinkat(d, MANIFEST ".new", 0);
	close(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

/* The stage at path removed (remove_dir): 0, 1 when it is still there,
 * -1 when its directory cannot be opened (errno). */
static int remove_stage_at(const char *path)
{
	char up[STAGE_PATH];
	snprintf(up, sizeof up, "%s", path);
	char *slash = strrchr(up, '/');
	const char *name = slash ? slash + 1 : up;
	if (slash)
		*slash = 0;
	int pfd = open(slash ? (up[0] ? up : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	remove_dir(pfd, name);
	struct stat st;
	int left = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	close(pfd);
	return left;
}

int stage_remove(struct stage *s, char *err, size_t n)
{
	int r = remove_stage_at(s->path);
	if (r < 0)
		return errmsg_errno(err, n, "%s", s->path);
	return r ? errmsg(err, n, "%s holds files husk did not put there: left in place", s->path) : 0;
}

void stage_close(struct stage *s)
{
	if (s->dir > 0)
		close(s->dir);
	s->dir = -1;
	json_decref(s->manifest);
	s->manifest = NULL;
	s->changes = NULL;
}
