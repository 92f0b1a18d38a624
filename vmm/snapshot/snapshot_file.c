/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <nettle/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "errmsg.h"
#include "full_io.h"
#include "husk/abi.h"
#include "snapshot/snapshot_file.h"

#define PAGE 4096ull
#define MAGIC "HUSKSNAP"
#define VERSION 1
/* Zero pages between two runs of data up to this many are stored with
 * them: one mapping instead of two. */
#define MERGE_GAP 16

struct header {
	char magic[8];
	uint32_t version, header_size;
	struct snapshot_key key;
	int64_t created_ns;
	uint64_t state_size, nextents, data_off, file_size;
	uint8_t mac[SHA256_DIGEST_SIZE]; /* over the whole file, this field zero */
};

static uint64_t page_up(uint64_t x)
{
	return (x + PAGE - 1) & ~(PAGE - 1);
}

static uint64_t layout_data_off(uint64_t nextents)
{
	return page_up(sizeof(struct header) + sizeof(struct snapshot_state) + nextents * sizeof(struct snapshot_extent));
}

static int page_zero(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)p;
	for (size_t i = 0; i < PAGE / 8; i++)
		if (w[i])
			return 0;
	return 1;
}

/* The extents of memory with something in it: resident pages (mincore)
 * that are not all zeros, runs merged across small gaps.  *out malloc'ed. */
static int memory_extents(const struct guest_mem *m, struct snapshot_extent **out, uint64_t *n)
{
	uint64_t pages = m->size / PAGE, cap = 64;
	unsigned char *resident = malloc(pages);
	struct snapshot_extent *e = malloc(cap * sizeof *e);
	if (!resident || !e || mincore(m->host, m->size, resident) < 0) {
		free(resident);
		free(e);
		return -1;
	}
	*n = 0;
	uint64_t off = 0;
	for (uint64_t p = 0; p < pages; p++) {
		if (!(resident[p] & 1) || page_zero(m->host + p * PAGE))
			continue;
		struct snapshot_extent *last = *n ? &e[*n - 1] : NULL;
		if (last && p * PAGE - (last->gpa + last->len) <= MERGE_GAP * PAGE) {
			off += p * PAGE + PAGE - (last->gpa + last->len);
			last->len = p * PAGE + PAGE - last->gpa;
			continue;
		}
		if (*n == SNAPSHOT_MAX_EXTENTS) {
			free(resident);
			free(e);
			errno = E2BIG;
			return -1;
		}
		if (*n == cap) {
			struct snapshot_extent *b = realloc(e, (cap *= 2) * sizeof *e);
			if (!b) {
				free(resident);
				free(e);
				return -1;
			}
			e = b;
		}
		e[(*n)++] = (struct snapshot_extent){ p * PAGE, PAGE, off };
		off += PAGE;
	}
	free(resident);
	*out = e;
	return 0;
}

/* The stamp: this file (by inode, size and times) carries a verified
 * digest, since this boot of the host.  A crash can lose data the file
 * system had not written yet (the file is not synced: a build would wait
 * for the disk); after it the stamps are the old boot's, and each file's
 * digest is checked again at its first use. */
static void stamp_of(const uint8_t key[SNAPSHOT_MAC_KEY], const struct stat *st, const uint8_t mac[32],
		     uint8_t out[32])
{
	static char boot_id[40];
	if (!boot_id[0]) {
		int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || read(fd, boot_id, sizeof boot_id - 1) < 32) /* unknown: no stamp ever holds */
			for (size_t i = 0; i < sizeof boot_id - 1; i++)
				boot_id[i] = (char)('a' + rand() % 26);
		if (fd >= 0)
			close(fd);
	}
	struct hmac_sha256_ctx c;
	int64_t id[8] = { (int64_t)st->st_dev, (int64_t)st->st_ino, st->st_size, st->st_mtim.tv_sec,
			  st->st_mtim.tv_nsec, st->st_ctim.tv_sec, st->st_ctim.tv_nsec, 0 };
	hmac_sha256_set_key(&c, SNAPSHOT_MAC_KEY, key);
	hmac_sha256_update(&c, sizeof "husk snapshot stamp", (const uint8_t *)"husk snapshot stamp");
	hmac_sha256_update(&c, sizeof id, (const uint8_t *)id);
	hmac_sha256_update(&c, sizeof boot_id, (const uint8_t *)boot_id);
	hmac_sha256_update(&c, 32, mac);
	hmac_sha256_digest(&c, 32, out);
}

static void stamp_name(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s%s", name, SNAPSHOT_STAMP_SUFFIX);
}

static void stamp_write(int dir, const char *name, const uint8_t key[SNAPSHOT_MAC_KEY], int fd, const uint8_t mac[32])
{
	struct stat st;
	uint8_t stamp[32];
	char path[512], tmp[560];
	if (fstat(fd, &st))
		return;
	stamp_of(key, &st, mac, stamp);
	stamp_name(path, sizeof path, name);
	snprintf(tmp, sizeof tmp, ".%s.%d", path, (int)getpid());
	int s = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s < 0)
		return;
	int ok = !full_write(s, stamp, sizeof stamp);
	close(s);
	if (!ok || renameat(dir, tmp, dir, path))
		unlinkat(dir, tmp, 0);
}

static int stamp_holds(int dir, const char *name, const uint8_t key[SNAPSHOT_MAC_KEY], const struct stat *st,
		       const uint8_t mac[32])
{
	char path[512];
	uint8_t want[32], got[32];
	stamp_name(path, sizeof path, name);
	int s = openat(dir, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return 0;
	int ok = !full_read(s, got, sizeof got);
	close(s);
	stamp_of(key, st, mac, want);
	return ok && !memcmp(want, got, sizeof want);
}

/* The digest over the whole file as it is, its header's own field taken as
 * zero: 0, or -1 (unreadable). */
static int file_mac(int fd, const struct header *h, const uint8_t key[SNAPSHOT_MAC_KEY], uint8_t mac[32])
{
	struct header z = *h;
	memset(z.mac, 0, sizeof z.mac);
	struct hmac_sha256_ctx c;
	hmac_sha256_set_key(&c, SNAPSHOT_MAC_KEY, key);
	hmac_sha256_update(&c, sizeof z, (const uint8_t *)&z);
	static uint8_t buf[1 << 20];
	for (uint64_t off = sizeof z; off < h->file_size;) {
		uint64_t k = h->file_size - off < sizeof buf ? h->file_size - off : sizeof buf;
		if (full_pread(fd, buf, k, (off_t)off))
			return -1;
		hmac_sha256_update(&c, k, buf);
		off += k;
	}
	hmac_sha256_digest(&c, 32, mac);
	return 0;
}

int snapshot_write(int dir, const char *name, const uint8_t mac_key[SNAPSHOT_MAC_KEY], const struct snapshot_key *k,
		   const struct snapshot_state *st, const struct guest_mem *m, char *err, size_t errlen)
{
	struct snapshot_extent *e;
	uint64_t n;
	if (memory_extents(m, &e, &n))
		return errmsg_errno(err, errlen, "cannot read the guest's memory");
	struct header h = { MAGIC, VERSION, sizeof h, *k, 0, sizeof *st, n, layout_data_off(n), 0, { 0 } };
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	h.created_ns = now.tv_sec * 1000000000ll + now.tv_nsec;
	for (uint64_t i = 0; i < n; i++)
		e[i].off += h.data_off;
	h.file_size = n ? e[n - 1].off + e[n - 1].len : h.data_off;
	char tmp[512];
	snprintf(tmp, sizeof tmp, ".%s.tmp.%d", name, (int)getpid()); /* hidden: the cache's leftover when old */
	int fd = openat(dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(e);
		return errmsg_errno(err, errlen, "cannot create %s", tmp);
	}
	int bad = ftruncate(fd, (off_t)h.file_size) || full_pwrite(fd, &h, sizeof h, 0) ||
		  full_pwrite(fd, st, sizeof *st, sizeof h) ||
		  full_pwrite(fd, e, n * sizeof *e, sizeof h + sizeof *st);
	for (uint64_t i = 0; i < n && !bad; i++)
		bad = full_pwrite(fd, m->host + e[i].gpa, e[i].len, (off_t)e[i].off);
	/* the digest as a reader computes it: the file read back (from the
	 * page cache) */
	bad = bad || file_mac(fd, &h, mac_key, h.mac) ||
	      full_pwrite(fd, h.mac, sizeof h.mac, offsetof(struct header, mac)) || renameat(dir, tmp, dir, name);
	free(e);
	if (bad) {
		errmsg_errno(err, errlen, "cannot write %s", tmp);
		close(fd);
		unlinkat(dir, tmp, 0);
		return -1;
	}
	stamp_write(dir, name, mac_key, fd, h.mac);
	close(fd);
	return 0;
}

/* The extents as written: in order, inside RAM, one after the other in the
 * file from data_off to its end. */
static int extents_sound(const struct header *h, const struct snapshot_extent *e, uint64_t ram)
{
	uint64_t off = h->data_off, gpa = 0;
	for (uint64_t i = 0; i < h->nextents; i++) {
		if (e[i].gpa % PAGE || e[i].len % PAGE || !e[i].len || e[i].gpa < gpa || e[i].len > ram ||
		    e[i].gpa > ram - e[i].len || e[i].off != off)
			return 0;
		gpa = e[i].gpa + e[i].len;
		off += e[i].len;
	}
	return off == h->file_size;
}

int snapshot_file_seal(int fd, const uint8_t mac_key[SNAPSHOT_MAC_KEY])
{
	struct header h;
	struct stat st;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof h || full_pread(fd, &h, sizeof h, 0))
		return -1;
	h.file_size = (uint64_t)st.st_size;
	return file_mac(fd, &h, mac_key, h.mac) || full_pwrite(fd, h.mac, sizeof h.mac, offsetof(struct header, mac));
}

int snapshot_open(int dir, const char *name, const uint8_t mac_key[SNAPSHOT_MAC_KEY], const struct snapshot_key *k,
		  struct snapshot *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s->fd < 0)
		return errno == ENOENT ? 1 : errmsg_errno(err, errlen, "cannot open it");
	struct stat st;
	struct header h;
	const char *why = NULL;
	if (fstat(s->fd, &st) || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != geteuid() || (st.st_mode & 077))
		why = "not husk's own (its owner or mode changed)";
	else if (full_pread(s->fd, &h, sizeof h, 0) || memcmp(h.magic, MAGIC, sizeof h.magic) || h.version != VERSION ||
		 h.header_size != sizeof h || h.state_size != sizeof s->state)
		why = "not a snapshot of this husk's format (truncated or garbled)";
	else if (memcmp(h.key.build_id, k->build_id, sizeof k->build_id))
		why = "made by another husk build";
	else if (memcmp(h.key.cpuid, k->cpuid, sizeof k->cpuid))
		why = "made for another CPU";
	else if (memcmp(h.key.boot, k->boot, sizeof k->boot))
		why = "made of another image or memory size";
	else if ((uint64_t)st.st_size != h.file_size || h.nextents > SNAPSHOT_MAX_EXTENTS ||
		 h.data_off != layout_data_off(h.nextents))
		why = "truncated or garbled";
	if (!why) {
		s->ext = malloc((h.nextents ? h.nextents : 1) * sizeof *s->ext);
		if (!s->ext)
			return errmsg(err, errlen, "out of memory"), snapshot_close(s), -1;
		if (full_pread(s->fd, &s->state, sizeof s->state, sizeof h) ||
		    full_pread(s->fd, s->ext, h.nextents * sizeof *s->ext, sizeof h + sizeof s->state))
			why = "truncated";
		else if (s->state.ram_size < HUSK_RAM_MIN || s->state.ram_size > HUSK_RAM_MAX ||
			 s->state.ram_size % (2ull << 20) || s->state.ndev > SNAPSHOT_DEVICES || s->state.pvm > 1 ||
			 s->state.fsgsbase > 1 || (s->state.level != HUSK_SNAPSHOT_KERNEL &&
						   s->state.level != HUSK_SNAPSHOT_PROGRAM) ||
			 !vcpu_state_valid(&s->state.vcpu) || !extents_sound(&h, s->ext, s->state.ram_size))
			why = "garbled (its state is out of range)";
	}
	uint8_t mac[32];
	if (!why && !stamp_holds(dir, name, mac_key, &st, h.mac)) {
		if (file_mac(s->fd, &h, mac_key, mac) || memcmp(mac, h.mac, sizeof mac))
			why = "modified since husk wrote it (its digest does not match)";
		else
			stamp_write(dir, name, mac_key, s->fd, h.mac);
	}
	if (why) {
		snapshot_close(s);
		return errmsg(err, errlen, "%s", why);
	}
	s->next = (uint32_t)h.nextents;
	s->created_ns = h.created_ns;
	s->bytes = h.file_size;
	return 0;
}

int snapshot_map(const struct snapshot *s, struct guest_mem *m, char *err, size_t errlen)
{
	if (m->size != s->state.ram_size)
		return errmsg(err, errlen, "guest memory is not the snapshot's size");
	for (uint32_t i = 0; i < s->next; i++) {
		const struct snapshot_extent *e = &s->ext[i];
		if (mmap(m->host + e->gpa, e->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, s->fd,
			 (off_t)e->off) == MAP_FAILED)
			return errmsg_errno(err, errlen, "cannot map the snapshot's memory");
	}
	return 0;
}

void snapshot_close(struct snapshot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->ext);
	s->ext = NULL;
}
