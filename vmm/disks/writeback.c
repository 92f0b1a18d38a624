/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "errmsg.h"
#include "full_io.h"
#include "progress.h"
#include "exit_codes.h"
#include "disks/extract.h"
#include "disks/file_server.h"
#include "disks/map_file.h"
#include "disks/mapped.h"
#include "disks/writeback.h"
#include "review/apply.h"
#include "review/review.h"
#include "review/stage.h"

struct report {
	int outcome; /* EXTRACT_* */
	int review_status; /* a staged write-back's: husk's status (review.h) */
	struct extract_stats st;
	char err[400];
	int kept; /* the image (and its record) stay for a retry */
};

/* ---- the record beside a kept image ------------------------------------------
 * IMAGE.record: "HUSKREC1", a count, then per entry its fixed fields, the
 * path's length and the path.  Read back only by `husk writeback`. */

static const char magic[8] = "HUSKREC1";

struct entry_fields {
	uint32_t guest_ino, mode;
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint32_t path_len, pad;
};

/* IMAGE.EXT: a file kept beside a kept image (record, map, dirty). */
#define SIDE_PATH 4200
static void side_path(char path[SIDE_PATH], const char *image, const char *ext)
{
	snprintf(path, SIDE_PATH, "%s.%s", image, ext);
}

/* Made (only if new) or opened to read, never through a symlink. */
static int side_open(const char *path, int create)
{
	return create ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
		      : open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

static int record_save(const struct copyin_record *rec, const char *image)
{
	char path[SIDE_PATH];
	side_path(path, image, "record");
	int fd = side_open(path, 1);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	uint64_t n = rec->n;
	int bad = !f || fwrite(magic, 8, 1, f) != 1 || fwrite(&n, 8, 1, f) != 1;
	for (size_t i = 0; !bad && i < rec->n; i++) {
		const struct copyin_entry *e = &rec->e[i];
		struct entry_fields x = { e->guest_ino, e->mode, e->dev, e->ino, e->size, e->mtime_ns, e->ctime_ns,
					  (uint32_t)strlen(e->path), 0 };
		bad = fwrite(&x, sizeof x, 1, f) != 1 || fwrite(e->path, 1, x.path_len, f) != x.path_len;
	}
	if (f ? fclose(f) != 0 : close(fd) != 0)
		bad = 1;
	if (bad)
		unlink(path);
	return bad ? -1 : 0;
}

static int record_load(const char *image, struct copyin_record *rec, char *err, size_t n)
{
	char path[SIDE_PATH];
	side_path(path, image, "record");
	int fd = side_open(path, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f)
		return errmsg(err, n, "cannot open %s: %s", path, strerror(errno));
	char m[8];
	uint64_t count = 0;
	int bad = fread(m, 8, 1, f) != 1 || memcmp(m, magic, 8) || fread(&count, 8, 1, f) != 1 || count > COPYIN_MAX_ENTRIES ||
		  !(rec->e = calloc(count ? count : 1, sizeof *rec->e));
	rec->n = 0;
	for (uint64_t i = 0; !bad && i < count; i++) {
		struct entry_fields x;
		bad = fread(&x, sizeof x, 1, f) != 1 || x.path_len > 65536;
		char *p = bad ? NULL : calloc(x.path_len + 1, 1);
		bad = bad || !p || fread(p, 1, x.path_len, f) != x.path_len || strlen(p) != x.path_len ||
		      (i && strcmp(rec->e[i - 1].path, p) >= 0); /* sorted, as copyin_find expects */
		if (!p)
			break;
		rec->e[rec->n++] = (struct copyin_entry){ p, x.guest_ino, x.mode, x.dev, x.ino, x.size, x.mtime_ns,
							  x.ctime_ns };
	}
	fclose(f);
	if (bad) {
		copyin_record_free(rec);
		return errmsg(err, n, "%s is not a husk write-back record", path);
	}
	return 0;
}

/* ---- a copy-on-write image's map and dirty bits beside it -------------------
 * IMAGE.map (map_file.h) and IMAGE.dirty (the bits as they are in memory). */

static int view_save(const struct disk *d)
{
	char mp[SIDE_PATH], bp[SIDE_PATH];
	side_path(mp, d->image, "map"), side_path(bp, d->image, "dirty");
	int m = side_open(mp, 1), b = side_open(bp, 1);
	int bad = m < 0 || b < 0 || map_file_save(m, d->fd, &d->map, d->size) ||
		  full_write(b, d->dirty, d->dirty_bytes);
	if (m >= 0 && close(m))
		bad = 1;
	if (b >= 0 && close(b))
		bad = 1;
	return bad ? -1 : 0;
}

/* The kept image's map and bits, if it has them (*mapped); 0, or -1 when
 * one is there without the other or either is unsound. */
static int view_load(const char *image, int img, uint64_t size, struct copyin_map *map, uint64_t **dirty,
		     int *mapped)
{
	char mp[SIDE_PATH], bp[SIDE_PATH];
	side_path(mp, image, "map"), side_path(bp, image, "dirty");
	int m = side_open(mp, 0), b = side_open(bp, 0), r = 0;
	size_t bytes = mapped_dirty_bytes(size);
	struct stat st;
	*mapped = m >= 0;
	*dirty = NULL;
	if (m < 0 || b < 0)
		r = m < 0 && b < 0 ? 0 : -1;
	else if (fstat(b, &st) || (uint64_t)st.st_size != bytes || map_file_load(m, img, map, size))
		r = -1;
	else if ((*dirty = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, b, 0)) == MAP_FAILED)
		*dirty = NULL, r = -1;
	if (m >= 0)
		close(m);
	if (b >= 0)
		close(b);
	return r;
}

static void remove_kept(const char *image)
{
	const char *ext[] = { "record", "map", "dirty" };
	for (int i = 0; i < 3; i++) {
		char path[SIDE_PATH];
		side_path(path, image, ext[i]);
		unlink(path);
	}
	unlink(image);
}

/* The guest's image (with its map, if a copy-on-write one: the file server
 * reads the host files under top) as the reader takes it; img->files is
 * to close.  0, or EXTRACT_HOST_ERROR (err). */
static int image_view(int image, const struct copyin_map *map, const uint64_t *dirty, int top,
		      struct workdir_image *img, char *err, size_t n)
{
	*img = (struct workdir_image){ .fd = image, .files = -1 };
	if (!map)
		return 0;
	static struct disks one; /* the file server's view: the workdir alone */
	one.n = 1;
	one.d[0] = (struct disk){ .fd = -1, .mapped = 1, .map = *map, .top_fd = top };
	char why[300];
	if (file_server_start(&one, &img->files, why, sizeof why) < 0) {
		errmsg(err, n, "%s", why);
		return EXTRACT_HOST_ERROR;
	}
	img->map = map, img->dirty = dirty;
	return 0;
}

/* The write-back of image to dir. */
static int extract_view(int image, const struct copyin_map *map, const uint64_t *dirty, int top, int dir,
			const struct copyin_record *rec, const struct extract_limits *lim, struct extract_stats *st,
			char *err, size_t n)
{
	struct workdir_image img;
	int r = image_view(image, map, dirty, top, &img, err, n);
	if (r == 0)
		r = workdir_extract(&img, dir, rec, lim, st, err, n);
	if (img.files >= 0)
		close(img.files);
	return r;
}

/* A staged write-back: the changes into a stage beside the workdir; then,
 * with --review, the review on the terminal (or the stage kept, without
 * one); else applied as far as the file policy allows. */
static int stage_view(struct writeback *w, struct disks *ds, json_t *run, const struct extract_limits *lim,
		      struct report *r)
{
	struct disk *d = &ds->d[ds->workdir];
	struct workdir_image img;
	struct stage_stats sst;
	char path[STAGE_PATH];
	int k = image_view(d->fd, d->mapped ? &d->map : NULL, d->dirty, d->top_fd, &img, r->err, sizeof r->err);
	if (k == 0)
		k = stage_make(&img, &ds->workdir_record, lim, ds->workdir_fd, w->files, w->audit, run, path, &sst, r->err,
			       sizeof r->err);
	if (img.files >= 0)
		close(img.files);
	r->st.denied = sst.denied;
	if (k)
		return k;
	struct stage s;
	if (stage_open(path, &s, r->err, sizeof r->err))
		return EXTRACT_HOST_ERROR;
	/* asked on the terminal when husk's stderr is one (not from a library
	 * or a pipeline, whose stderr is a pipe or a file) */
	FILE *tty = w->review && isatty(2) ? fopen("/dev/tty", "r+e") : NULL;
	if (tty && !isatty(fileno(tty)))
		fclose(tty), tty = NULL;
	struct apply_stats ast = { 0 };
	struct stage_paths all = { NULL, 0 };
	if (tty) {
		r->review_status = review_session(&s, tty, tty, &ast);
		fclose(tty);
	} else if (!w->review) {
		r->review_status = stage_apply(&s, stage_want_paths, &all, &ast, r->err, sizeof r->err);
	}
	r->st.files = ast.applied;
	r->st.bytes = ast.bytes;
	r->st.staged = stage_pending(&s);
	if (r->st.staged)
		snprintf(r->st.stage, sizeof r->st.stage, "%s", path);
	else if (!tty && stage_settle(&s, r->err, sizeof r->err)) /* nothing to decide: no stage */
		fprintf(stderr, "husk: %s\n", r->err);
	stage_close(&s);
	return EXTRACT_OK;
}

/* ---- the helper -------------------------------------------------------------- */

/* How the run ended, as the VMM sends it after the go: a length, then
 * JSON text; NULL if none. */
static json_t *read_run(int go)
{
	uint32_t len;
	if (full_read(go, &len, sizeof len) || len > (1u << 20))
		return NULL;
	char *text = malloc(len + 1);
	json_t *run = text && !full_read(go, text, len) ? json_loadb(text, len, 0, NULL) : NULL;
	free(text);
	return run;
}

static _Noreturn void helper(int go, int result, struct writeback *w, struct disks *ds)
{
	/* A Ctrl-C reaches the whole process group: the helper still finishes,
	 * learning of the end of the run from its pipe; nobody may be left to
	 * read its report. */
	signal(SIGINT, SIG_IGN), signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	char c;
	ssize_t k;
	while ((k = read(go, &c, 1)) < 0 && errno == EINTR)
		;
	struct disk *d = &ds->d[ds->workdir];
	static struct report r;
	if (k != 1) { /* the VMM died before the end of the run: nothing to apply */
		unlink(d->image);
		_exit(0);
	}
	struct extract_limits lim = { COPYIN_MAX_ENTRIES, d->size };
	json_t *run = read_run(go);
	if (w->review || file_policy_set(w->files)) {
		progress_begin("staging the workdir's changes");
		r.outcome = stage_view(w, ds, run, &lim, &r);
		progress_end();
	} else {
		progress_begin("writing the workdir back");
		r.outcome = extract_view(d->fd, d->mapped ? &d->map : NULL, d->dirty, d->top_fd, ds->workdir_fd,
					 &ds->workdir_record, &lim, &r.st, r.err, sizeof r.err);
		progress_end();
	}
	json_decref(run);
	r.kept = r.outcome == EXTRACT_HOST_ERROR && record_save(&ds->workdir_record, d->image) == 0 &&
		 (!d->mapped || view_save(d) == 0);
	if (!r.kept)
		remove_kept(d->image); /* first: the report's reader may be gone */
	full_write(result, &r, sizeof r);
	_exit(0);
}

int writeback_start(struct writeback *w, struct disks *ds, char *err, size_t n)
{
	int go[2], result[2];
	w->go = w->result = -1;
	if (ds->workdir < 0)
		return 0;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(result, O_CLOEXEC) < 0)
		return errmsg(err, n, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return errmsg(err, n, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(go[1]), close(result[0]);
		helper(go[0], result[1], w, ds);
	}
	close(go[0]), close(result[1]);
	/* Only the helper writes to DIR: the VMM keeps neither its fd nor its
	 * record (its file server reads DIR's files for the copy-on-write view). */
	close(ds->workdir_fd);
	close(ds->d[ds->workdir].top_fd);
	ds->workdir_fd = ds->d[ds->workdir].top_fd = -1;
	copyin_record_free(&ds->workdir_record);
	w->go = go[1], w->result = result[0], w->pid = pid;
	ds->d[ds->workdir].temporary = 0; /* the helper deletes the image */
	return 0;
}

/* husk's final status from the write-back's outcome. */
static int outcome_status(const struct report *r, const char *dir, const char *image, int status)
{
	char shown[8200];
	str_escape(dir, strlen(dir), shown, sizeof shown);
	if (r->outcome == EXTRACT_BAD_IMAGE) {
		fprintf(stderr, "husk: workdir %s: %s\n", shown, r->err);
		return EXIT_WORKDIR;
	}
	if (r->outcome == EXTRACT_HOST_ERROR) {
		fprintf(stderr, "husk: workdir %s: %s (named above)", shown, r->err);
		if (r->kept)
			fprintf(stderr, "; the program's files are kept in %s: once the cause is fixed, retry with "
					"husk writeback %s %s\n", image, image, shown);
		else
			fprintf(stderr, "; the program's files could not be kept\n");
		return EXIT_WORKDIR;
	}
	if (r->st.denied)
		fprintf(stderr, "husk: workdir %s: %llu change%s refused by the file policy (never applied; "
				"recorded in the audit)\n", shown, (unsigned long long)r->st.denied, r->st.denied == 1 ? "" : "s");
	if (r->st.stage[0]) {
		char where[8200];
		str_escape(r->st.stage, strlen(r->st.stage), where, sizeof where);
		fprintf(stderr, "husk: workdir %s: %llu change%s staged in %s: husk review|apply|discard %s\n", shown,
			(unsigned long long)r->st.staged, r->st.staged == 1 ? "" : "s", where, where);
	}
	if (r->review_status && !status)
		status = r->review_status;
	if (r->st.conflicts)
		fprintf(stderr, "husk: workdir %s: %llu conflicts with changes made on the host during the run "
				"(named above; the program's versions are beside them as NAME.husk-conflict)\n",
			shown, (unsigned long long)r->st.conflicts);
	if (status)
		fprintf(stderr, "husk: the run failed (status %d); the workdir was still written back to %s "
				"(%llu files written, %llu unchanged, %llu removed)\n",
			status, shown, (unsigned long long)r->st.files, (unsigned long long)r->st.unchanged,
			(unsigned long long)r->st.removed);
	return status;
}

int writeback_finish(struct writeback *w, struct disks *ds, int status, const char *run, struct extract_stats *st)
{
	if (w->go < 0)
		return status;
	struct disk *d = &ds->d[ds->workdir];
	fdatasync(d->fd);
	uint32_t len = run ? (uint32_t)strlen(run) : 0;
	full_write(w->go, "g", 1);
	if (full_write(w->go, &len, sizeof len) == 0 && len)
		full_write(w->go, run, len);
	static struct report r;
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t k = read(w->result, (char *)&r + got, sizeof r - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += k;
	}
	close(w->go);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		; /* husk leaves no process behind */
	if (got < sizeof r) {
		fprintf(stderr, "husk: workdir %s: the write-back helper died\n", ds->workdir_path);
		return EXIT_WORKDIR;
	}
	r.err[sizeof r.err - 1] = 0;
	if (st)
		*st = r.st;
	return outcome_status(&r, ds->workdir_path, d->image, status);
}

int writeback_retry(const char *image, const char *dir)
{
	char err[512];
	struct copyin_record rec = { 0 };
	int img = open(image, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat s;
	if (img < 0 || fstat(img, &s) < 0 || !S_ISREG(s.st_mode)) {
		fprintf(stderr, "husk: writeback: cannot open the image %s: %s\n", image,
			img < 0 ? strerror(errno) : "not a regular file");
		return EXIT_USAGE;
	}
	if (record_load(image, &rec, err, sizeof err)) {
		fprintf(stderr, "husk: writeback: %s\n", err);
		return EXIT_USAGE;
	}
	int dirfd = copyin_open_dir(dir, err, sizeof err);
	const struct copyin_entry *top = copyin_find(&rec, "");
	struct stat ds;
	if (dirfd < 0 || fstat(dirfd, &ds) < 0 || !top || ds.st_dev != top->dev || ds.st_ino != top->ino) {
		fprintf(stderr, "husk: writeback: %s\n",
			dirfd < 0 ? err : "that directory is not the workdir this image was made from");
		return EXIT_USAGE;
	}
	struct copyin_map map = { 0 };
	uint64_t *dirty, size = (uint64_t)s.st_size & ~511ull; /* the disk's size, as disks.c takes it */
	int mapped;
	if (view_load(image, img, size, &map, &dirty, &mapped)) {
		fprintf(stderr, "husk: writeback: %s.map or %s.dirty is missing or damaged\n", image, image);
		copyin_record_free(&rec);
		return EXIT_USAGE;
	}
	struct report r = { 0 };
	struct extract_limits lim = { COPYIN_MAX_ENTRIES, (uint64_t)s.st_size };
	progress_begin("writing the workdir back");
	r.outcome = extract_view(img, mapped ? &map : NULL, dirty, dirfd, dirfd, &rec, &lim, &r.st, r.err, sizeof r.err);
	progress_end();
	copyin_map_free(&map);
	if (dirty)
		munmap(dirty, mapped_dirty_bytes(size));
	r.kept = r.outcome == EXTRACT_HOST_ERROR;
	if (!r.kept)
		remove_kept(image);
	copyin_record_free(&rec);
	int status = outcome_status(&r, dir, image, 0);
	if (!status)
		fprintf(stderr, "husk: workdir %s: written back (%llu files, %llu removed)\n", dir,
			(unsigned long long)r.st.files, (unsigned long long)r.st.removed);
	return status;
}
