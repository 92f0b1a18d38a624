/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cache.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "full_io.h"
#include "husk/abi.h"
#include "snapshot/snapshot.h"
#include "snapshot/working_set.h"

#define SUFFIX ".snap"

/* The snapshot directory: the cache's snapshots/ ($HUSK_CACHE). */
static int open_dir(char *err, size_t n)
{
	char path[4096];
	return cache_open("snapshots", path, sizeof path, err, n);
}


/* husk's build ID (the linker's NT_GNU_BUILD_ID note): a snapshot is only
 * good for the husk that wrote it, guest kernel included. */
static int note_cb(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const uint8_t *name = p + sizeof *n, *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    desc + n->n_descsz <= end) {
				memcpy(out, desc, n->n_descsz < 20 ? n->n_descsz : 20);
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object is the program itself */
}

static void build_id(uint8_t out[20])
{
	memset(out, 0, 20);
	dl_iterate_phdr(note_cb, out);
}

/* A file's identity for the key: a change to it (a rebuilt image) is a new
 * inode or new times. */
static void hash_file(struct sha256_ctx *c, const char *what, const char *path)
{
	struct stat st = { 0 };
	sha256_update(c, strlen(what) + 1, (const uint8_t *)what);
	if (!path)
		return;
	sha256_update(c, strlen(path) + 1, (const uint8_t *)path);
	stat(path, &st);
	int64_t id[7] = { (int64_t)st.st_dev, (int64_t)st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			  st.st_ctim.tv_sec, st.st_ctim.tv_nsec };
	sha256_update(c, sizeof id, (const uint8_t *)id);
}

static void boot_key(const struct options *o, const struct snapshot_boot *b, const char *preload, const struct vm *v,
		     uint8_t out[32])
{
	struct sha256_ctx c;
	sha256_init(&c);
	uint64_t n[4] = { o->memory, (uint64_t)b->level, (uint64_t)v->pvm, (uint64_t)v->fsgsbase };
	sha256_update(&c, sizeof n, (const uint8_t *)n);
	hash_file(&c, "program", b->program);
	hash_file(&c, "system disk", b->system_disk);
	const char *strs[] = { b->image_digest ? b->image_digest : "", b->argv0 ? b->argv0 : "", preload };
	for (int i = 0; i < 3; i++)
		sha256_update(&c, strlen(strs[i]) + 1, (const uint8_t *)strs[i]);
	sha256_digest(&c, 32, out);
}

static const char *base_name(const char *label)
{
	const char *slash = strrchr(label, '/');
	return slash ? slash + 1 : label;
}

/* LABEL.preload: the modules `husk snapshot build --preload` chose. */
static void read_preload(int dir, const char *label, char *out, size_t n)
{
	char name[300];
	snprintf(name, sizeof name, "%s.preload", base_name(label));
	out[0] = 0;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t k = read(fd, out, n - 1);
	close(fd);
	out[k > 0 ? k : 0] = 0;
	out[strcspn(out, "\n")] = 0;
}

int snapshot_set_preload(const char *label, const char *modules, char *err, size_t errlen)
{
	char name[300], tmp[320];
	if (strlen(modules) >= sizeof ((struct snapshot_run *)0)->preload || strspn(modules,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,") != strlen(modules))
		return errmsg(err, errlen, "--preload: expected module names separated by commas");
	int dir = open_dir(err, errlen);
	if (dir < 0)
		return -1;
	snprintf(name, sizeof name, "%s.preload", base_name(label));
	snprintf(tmp, sizeof tmp, ".%s.%d", name, (int)getpid());
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ok = fd >= 0 && !full_write(fd, modules, strlen(modules));
	if (fd >= 0)
		close(fd);
	if (!*modules)
		ok = ok && (unlinkat(dir, name, 0) == 0 || errno == ENOENT);
	else
		ok = ok && renameat(dir, tmp, dir, name) == 0;
	unlinkat(dir, tmp, 0);
	close(dir);
	return ok ? 0 : errmsg_errno(err, errlen, "cannot write %s", name);
}

/* The names a program-level snapshot's program reads at start-up. */
static int read_at_start(const char *var)
{
	static const char *const exact[] = { "LANG", "LANGUAGE", "TZ", "HOME", "PATH", "TERM", "TMPDIR" };
	if (!strncmp(var, "PYTHON", 6) || !strncmp(var, "LC_", 3))
		return 1;
	size_t n = strcspn(var, "=");
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (strlen(exact[i]) == n && !strncmp(var, exact[i], n))
			return 1;
	return 0;
}

/* The value of var's name in env, or NULL. */
static const char *env_value(const struct options *env, const char *var)
{
	size_t n = strcspn(var, "=");
	for (int i = 0; i < env->nenv; i++)
		if (!strncmp(env->env[i], var, n) && env->env[i][n] == '=')
			return env->env[i] + n + 1;
	return NULL;
}

int snapshot_program_run_ok(const struct options *o, const struct options *image_env)
{
	if (o->nargs > 1 && o->args[1][0] == '-' && strcmp(o->args[1], "-") &&
	    (o->nargs < 3 || (strcmp(o->args[1], "-c") && strcmp(o->args[1], "-m"))))
		return 0;
	const struct options *both[2] = { o, image_env };
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < both[k]->nenv; i++) {
			const char *var = both[k]->env[i];
			if (!read_at_start(var))
				continue;
			const char *a = env_value(o, var), *b = env_value(image_env, var);
			if (!a || !b || strcmp(a, b))
				return 0;
		}
	return 1;
}

/* The key the files are digested with: made once, the directory owner's
 * only.  0, or -1. */
static int mac_key(int dir, uint8_t key[SNAPSHOT_MAC_KEY])
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = openat(dir, "key", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			struct stat st;
			int ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
				 st.st_size == SNAPSHOT_MAC_KEY && !full_read(fd, key, SNAPSHOT_MAC_KEY);
			close(fd);
			return ok ? 0 : -1;
		}
		char tmp[64];
		snprintf(tmp, sizeof tmp, ".key.%d", (int)getpid());
		fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		int ok = getrandom(key, SNAPSHOT_MAC_KEY, 0) == SNAPSHOT_MAC_KEY && !full_write(fd, key, SNAPSHOT_MAC_KEY);
		close(fd);
		if (ok && linkat(dir, tmp, dir, "key", 0) && errno != EEXIST)
			ok = 0; /* a concurrent run made one first: read it */
		unlinkat(dir, tmp, 0);
		if (!ok)
			return -1;
	}
	return -1;
}

/* The snapshot `name` in dir and its side files: its stamp, its working
 * set, and with lock_too its lock (not while a build holds it: a second
 * builder would take a new one).  unlinkat's result for the file itself. */
static int remove_files(int dir, const char *name, int lock_too)
{
	const char *sides[] = { SNAPSHOT_STAMP_SUFFIX, ".ws", ".lock" };
	for (int i = 0; i < 2 + !!lock_too; i++) {
		char side[PATH_MAX];
		snprintf(side, sizeof side, "%s%s", name, sides[i]);
		unlinkat(dir, side, 0);
	}
	return unlinkat(dir, name, 0);
}

static void remove_snapshot(int dir, const char *name)
{
	remove_files(dir, name, 0);
}

int snapshot_remove(int dir, const char *name)
{
	return remove_files(dir, name, 1);
}

/* The snapshots of the same label but another key (made by another husk
 * build, for another image file...) are of no more use once this one is
 * built: removed with their stamps and locks. */
static void remove_others(int dir, const char *name)
{
	size_t label = strlen(name) - strlen("-xxxxxxxxxxxx" SUFFIX);
	DIR *d = fdopendir(dup(dir));
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n == strlen(name) && !strncmp(e->d_name, name, label + 1) && strcmp(e->d_name, name) &&
		    !strcmp(e->d_name + n - strlen(SUFFIX), SUFFIX))
			snapshot_remove(dir, e->d_name);
	}
	if (d)
		closedir(d);
}

/* The build lock: taken without waiting (a run that cannot have it boots
 * afresh instead of waiting for another's build). */
static int take_lock(struct snapshot_run *r)
{
	char lock[200];
	snprintf(lock, sizeof lock, "%s.lock", r->name);
	r->lock = openat(r->dir, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->lock >= 0 && flock(r->lock, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (r->lock >= 0)
		close(r->lock);
	r->lock = -1;
	return -1;
}

enum snapshot_use snapshot_begin(struct snapshot_run *r, const struct options *o, const struct snapshot_boot *b,
				 const struct vm *v)
{
	char err[512];
	memset(r, 0, sizeof *r);
	r->dir = r->lock = r->snap.fd = r->pagemap = r->ws_out = -1;
	const char *cold = getenv("HUSK_COLD");
	if (o->cold || (cold && *cold && strcmp(cold, "0")) || o->selftest)
		return SNAPSHOT_NONE;
	r->dir = open_dir(err, sizeof err);
	if (r->dir < 0 || mac_key(r->dir, r->mac_key))
		return SNAPSHOT_NONE;
	build_id(r->key.build_id);
	memcpy(r->key.cpuid, v->cpuid_digest, sizeof r->key.cpuid);
	if (b->level == HUSK_SNAPSHOT_PROGRAM)
		read_preload(r->dir, b->label, r->preload, sizeof r->preload);
	boot_key(o, b, r->preload, v, r->key.boot);
	/* Named by the whole key: another husk build or CPU never meets this
	 * file, and a build removes the label's others (remove_others). */
	uint8_t id[32];
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, sizeof r->key, (const uint8_t *)&r->key);
	sha256_digest(&c, sizeof id, id);
	snprintf(r->name, sizeof r->name, "%.64s-%02x%02x%02x%02x%02x%02x%s", base_name(b->label), id[0], id[1],
		 id[2], id[3], id[4], id[5], SUFFIX);
	int got = b->rebuild ? 1 : snapshot_open(r->dir, r->name, r->mac_key, &r->key, &r->snap, err, sizeof err);
	if (got == 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		int64_t age = now.tv_sec - r->snap.created_ns / 1000000000;
		if (age >= 0 && age < SNAPSHOT_MAX_AGE_S && r->snap.state.ram_size == o->memory &&
		    r->snap.state.pvm == (uint32_t)v->pvm && r->snap.state.level == (uint32_t)b->level) {
			char lock[300];
			snprintf(lock, sizeof lock, "%s.lock", r->name);
			cache_touch(r->dir, lock); /* used now, for the cache's trimming */
			return SNAPSHOT_RESTORE;
		}
		snapshot_close(&r->snap); /* too old: made again */
	} else if (got < 0) {
		fprintf(stderr, "husk: snapshot %s: %s; building it again\n", r->name, err);
	}
	if (take_lock(r))
		return SNAPSHOT_NONE;
	remove_snapshot(r->dir, r->name);
	remove_others(r->dir, r->name);
	return SNAPSHOT_BUILD;
}

/* The working set the first restored run recorded: prefaulted.  Without
 * one, this run records it (when it is the first to try). */
static void use_working_set(struct snapshot_run *r, struct guest_mem *m)
{
	char name[300];
	struct working_set ws;
	snprintf(name, sizeof name, "%s.ws", r->name);
	int fd = openat(r->dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		if (!working_set_load(fd, m->size, &ws)) {
			working_set_prefault(&ws, m);
			working_set_free(&ws);
		} else {
			unlinkat(r->dir, name, 0); /* torn or garbled: the next run records it again */
		}
		close(fd);
		return;
	}
	r->ws_out = openat(r->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r->pagemap = r->ws_out < 0 ? -1 : open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

void snapshot_record_working_set(struct snapshot_run *r, const struct guest_mem *m)
{
	if (r->ws_out >= 0 && r->pagemap >= 0)
		working_set_record(r->pagemap, m, r->ws_out);
	if (r->ws_out >= 0)
		close(r->ws_out);
	if (r->pagemap >= 0)
		close(r->pagemap);
	r->ws_out = r->pagemap = -1;
}

int snapshot_restore(struct snapshot_run *r, struct vm *v, char *err, size_t errlen)
{
	if (snapshot_map(&r->snap, &v->mem, err, errlen))
		return -1;
	use_working_set(r, &v->mem);
	v->fsgsbase = (int)r->snap.state.fsgsbase;
	return vcpu_state_restore(v, &r->snap.state.vcpu, err, errlen);
}

int snapshot_save(struct snapshot_run *r, struct vm *v, struct snapshot_state *st, char *err, size_t errlen)
{
	st->ram_size = v->mem.size;
	st->pvm = (uint32_t)v->pvm, st->fsgsbase = (uint32_t)v->fsgsbase;
	if (vcpu_state_save(v, &st->vcpu, err, errlen) ||
	    snapshot_write(r->dir, r->name, r->mac_key, &r->key, st, &v->mem, err, errlen))
		return -1;
	char keep[320];
	snprintf(keep, sizeof keep, "snapshots/%s", r->name);
	cache_trim(keep); /* the cache stays within its cap */
	return 0;
}

int snapshot_reopen(struct snapshot_run *r, char *err, size_t errlen)
{
	snapshot_close(&r->snap);
	if (snapshot_open(r->dir, r->name, r->mac_key, &r->key, &r->snap, err, errlen) == 0)
		return 0;
	if (!err[0])
		snprintf(err, errlen, "it is gone");
	return -1;
}

void snapshot_discard(struct snapshot_run *r)
{
	if (r->dir >= 0)
		remove_snapshot(r->dir, r->name);
}

void snapshot_end(struct snapshot_run *r)
{
	snapshot_close(&r->snap);
	if (r->lock >= 0)
		close(r->lock);
	if (r->dir >= 0)
		close(r->dir);
	r->lock = r->dir = -1;
}

/* ---- husk snapshot ls | rm ------------------------------------------------ */

static int is_snapshot(const char *name)
{
	size_t n = strlen(name);
	return n > strlen(SUFFIX) && !strcmp(name + n - strlen(SUFFIX), SUFFIX);
}

static int list(int dir)
{
	DIR *d = fdopendir(dup(dir));
	if (!d)
		return EXIT_INTERNAL;
	struct dirent *e;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d))) {
		struct stat st;
		if (!is_snapshot(e->d_name) || fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		long age = (long)(now.tv_sec - st.st_mtim.tv_sec);
		printf("%-40s %8.1f MiB on disk  made %ld min ago\n", e->d_name, st.st_blocks * 512.0 / (1 << 20),
		       age / 60);
	}
	closedir(d);
	return 0;
}

/* Removes the snapshots named (NAME or NAME.snap), or all of them. */
static int remove_named(int dir, int argc, char **argv)
{
	int status = 0;
	DIR *d = fdopendir(dup(dir));
	if (!d)
		return EXIT_INTERNAL;
	struct dirent *e;
	int removed = 0;
	while ((e = readdir(d))) {
		int all = argc == 0, hit = all && is_snapshot(e->d_name);
		for (int i = 0; i < argc && !hit; i++) {
			size_t n = strlen(argv[i]);
			hit = is_snapshot(e->d_name) && (!strcmp(e->d_name, argv[i]) ||
							 (!strncmp(e->d_name, argv[i], n) && e->d_name[n] == '-'));
		}
		if (hit) {
			snapshot_remove(dir, e->d_name);
			removed++;
		}
	}
	closedir(d);
	if (argc && !removed) {
		fprintf(stderr, "husk: snapshot rm: no snapshot of %s\n", argv[0]);
		status = EXIT_USAGE;
	}
	return status;
}

int snapshot_command(int argc, char **argv)
{
	char err[512];
	if (argc < 3 || (strcmp(argv[2], "ls") && strcmp(argv[2], "rm")))
		usage_error("usage: husk snapshot build [RUN OPTIONS] PROGRAM | ls | rm [NAME...]");
	if (!strcmp(argv[2], "ls") && argc > 3)
		usage_error("husk snapshot ls takes no arguments");
	int dir = open_dir(err, sizeof err);
	if (dir < 0)
		die(EXIT_USAGE, "%s", err);
	int status = !strcmp(argv[2], "ls") ? list(dir) : remove_named(dir, argc - 3, argv + 3);
	close(dir);
	return status;
}
