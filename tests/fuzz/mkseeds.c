/* SPDX-License-Identifier: GPL-2.0-only */
/* Seed inputs for the fuzz targets, written as a driver would lay them out:
 *     mkseeds DIR          DIR/{elf,virtq,console,blk,extract_stream}/NAME
 *     mkseeds -trim FILE   cuts FILE's trailing zero bytes (ext2 seeds;
 *                          fuzz_extract zero-extends its input again)
 * The ext2 seeds for fuzz_extract, and the streams of those images for
 * fuzz_extract_stream, come from mkseeds-ext2. */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "disks/extract_stream.h"
#include "husk/net_stream.h"
#include "husk/virtio_regs.h"
#include "husk/virtio_ring.h"

static const char *root;

static void save(const char *target, const char *name, const void *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void put(uint8_t *buf, uint64_t at, const void *p, size_t n) { memcpy(buf + at, p, n); }
static void put16(uint8_t *buf, uint64_t at, uint16_t v) { put(buf, at, &v, 2); }

/* ---- ELF ---------------------------------------------------------------- */

/* exit_group(0) */
static const uint8_t code[] = { 0xb8, 0xe7, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05 };

static void elf(const char *name, uint16_t type, uint64_t base, int with_phdr, uint64_t bss)
{
	uint8_t f[4096] = { 0 };
	Elf64_Ehdr eh = { .e_type = type, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = sizeof eh, .e_ehsize = sizeof eh, .e_phentsize = sizeof(Elf64_Phdr) };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	Elf64_Phdr ph[4];
	int n = 0;
	if (with_phdr)
		ph[n++] = (Elf64_Phdr){ .p_type = PT_PHDR, .p_flags = PF_R, .p_offset = sizeof eh,
					.p_vaddr = base + sizeof eh, .p_align = 8 };
	int text = n++;
	if (bss)
		ph[n++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x200,
					.p_vaddr = base + 0x200000, .p_filesz = 16, .p_memsz = bss, .p_align = 0x1000 };
	ph[n++] = (Elf64_Phdr){ .p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W, .p_align = 16 };
	uint64_t code_at = sizeof eh + n * sizeof(Elf64_Phdr);
	uint64_t size = bss ? 0x210 : code_at + sizeof code;
	ph[text] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0, .p_vaddr = base,
				 .p_filesz = code_at + sizeof code, .p_memsz = code_at + sizeof code, .p_align = 0x1000 };
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			ph[i].p_filesz = ph[i].p_memsz = n * sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)n;
	eh.e_entry = base + code_at;
	put(f, 0, &eh, sizeof eh);
	put(f, sizeof eh, ph, n * sizeof(Elf64_Phdr));
	put(f, code_at, code, sizeof code);
	if (bss)
		memset(f + 0x200, 0x11, 16);
	save("elf", name, f, size);
}

/* ---- rings -------------------------------------------------------------- */

#define DESC 0x1000
#define AVAIL 0x2000
#define USED 0x3000
#define BUF 0x4000

static void desc(uint8_t *m, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	put(m, DESC + 16ull * i, &addr, 8);
	put(m, DESC + 16ull * i + 8, &len, 4);
	put16(m, DESC + 16ull * i + 12, flags);
	put16(m, DESC + 16ull * i + 14, next);
}

/* avail->ring[0..n) = heads, avail->idx = n */
static void avail(uint8_t *m, const uint16_t *heads, int n)
{
	for (int i = 0; i < n; i++)
		put16(m, AVAIL + 4 + 2 * i, heads[i]);
	put16(m, AVAIL + 2, (uint16_t)n);
}

struct vq_hdr {
	uint16_t num;
	uint8_t rounds, step;
	uint32_t push_len;
	uint64_t desc, avail, used;
};

static void virtq_seed(const char *name, uint16_t num, uint8_t rounds, uint8_t step, uint8_t *m, size_t mlen)
{
	static uint8_t buf[sizeof(struct vq_hdr) + 0x10000];
	struct vq_hdr h = { num, rounds, step, 64, DESC, AVAIL, USED };
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, m, mlen);
	save("virtq", name, buf, sizeof h + mlen);
}

static void virtq_seeds(void)
{
	static uint8_t m[0x6000];
	memset(m, 0, sizeof m);
	desc(m, 0, BUF, 16, VIRTQ_DESC_F_NEXT, 1);
	desc(m, 1, BUF + 0x100, 64, VIRTQ_DESC_F_WRITE, 0);
	avail(m, (uint16_t[]){ 0 }, 1);
	virtq_seed("chain2", 8, 1, 1, m, sizeof m);

	memset(m, 0, sizeof m);
	for (uint16_t i = 0; i < 4; i++)
		desc(m, i, BUF + 0x10 * i, 16, i < 3 ? VIRTQ_DESC_F_NEXT : VIRTQ_DESC_F_WRITE, (uint16_t)(i + 1));
	avail(m, (uint16_t[]){ 0, 3, 2, 1 }, 4);
	virtq_seed("wrap4", 4, 3, 4, m, sizeof m);

	memset(m, 0, sizeof m);
	for (uint16_t i = 0; i < 256; i++)
		desc(m, i, BUF + 8 * i, 8, i < 255 ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	avail(m, (uint16_t[]){ 0 }, 1);
	virtq_seed("chain256", 256, 0, 0, m, sizeof m);
}

/* ---- mmio programs (mmio_prog.h) ---------------------------------------- */

struct prog {
	uint8_t buf[2 + 8 * 255 + 0x10000];
	int nops;
};

static void op(struct prog *p, uint8_t kind, uint8_t arg, uint16_t off, uint32_t val)
{
	uint8_t *o = p->buf + 2 + 8 * p->nops++;
	o[0] = kind, o[1] = arg;
	memcpy(o + 2, &off, 2);
	memcpy(o + 4, &val, 4);
}

/* init, then queue q (size 8) at DESC/AVAIL/USED */
static void prologue(struct prog *p, int q)
{
	p->nops = 0;
	op(p, 4, 0, 0, 0xffffffff);
	op(p, 5, (uint8_t)(q | 3 << 1), USED, DESC | AVAIL << 16);
}

static void prog_save(const char *target, const char *name, struct prog *p, uint8_t flags, const uint8_t *m,
		      size_t mlen)
{
	p->buf[0] = flags;
	p->buf[1] = (uint8_t)p->nops;
	memcpy(p->buf + 2 + 8 * p->nops, m, mlen);
	save(target, name, p->buf, 2 + 8 * p->nops + mlen);
}

static void console_seeds(void)
{
	static struct prog p;
	static uint8_t m[0x4100];
	/* transmit "hello" */
	memset(m, 0, sizeof m);
	desc(m, 0, BUF, 5, 0, 0);
	memcpy(m + BUF, "hello", 5);
	prologue(&p, 1);
	op(&p, 7, 1 | 2, 0, 0);
	op(&p, 7, 1 | 2, 0, 0);
	prog_save("console", "transmit", &p, 0, m, sizeof m);
	prog_save("console", "broken-pipe", &p, 4, m, sizeof m);
	/* the same under a 64-byte output limit, 200 bytes in 2 descriptors */
	desc(m, 0, BUF, 100, VIRTQ_DESC_F_NEXT, 1);
	desc(m, 1, BUF + 100, 100, 0, 0);
	prog_save("console", "limit", &p, 2 | 1 << 3, m, sizeof m);
	/* receive 64 bytes from /dev/zero */
	memset(m, 0, sizeof m);
	desc(m, 0, BUF, 64, VIRTQ_DESC_F_WRITE, 0);
	memset(m + BUF, 0xee, 64);
	prologue(&p, 0);
	op(&p, 7, 0 | 2, 0, 0);
	prog_save("console", "receive", &p, 1, m, sizeof m);
	/* every register read, config reads, a reset */
	p.nops = 0;
	for (uint16_t off = 0; off <= VIRTIO_MMIO_CONFIG_GENERATION; off += 4)
		op(&p, 2, 0, off, 0);
	op(&p, 2, 0x80 | 8, VIRTIO_MMIO_CONFIG, 0);
	op(&p, 2, 0x80 | 4, VIRTIO_MMIO_CONFIG + 8, 0);
	op(&p, 0, 0, VIRTIO_MMIO_STATUS, 0);
	prog_save("console", "registers", &p, 0, m, 0);
}

/* net: a CONNECT sent; a receive buffer for the broker's messages (flags
 * bit 1: it sent some; bit 0: it is gone). */
static void net_seeds(void)
{
	static struct prog p;
	static uint8_t m[0x9000];
	struct husk_net_hdr h = { .op = HUSK_NET_CONNECT, .conn = 7, .family = 2, .port = 443, .addr = { 11, 0, 0, 1 } };
	memset(m, 0, sizeof m);
	desc(m, 0, BUF, sizeof h, 0, 0);
	memcpy(m + BUF, &h, sizeof h);
	prologue(&p, 0);
	op(&p, 7, 0 | 2, 0, 0);
	prog_save("net", "connect", &p, 0, m, BUF + sizeof h);
	memset(m, 0, sizeof m);
	desc(m, 0, BUF, (uint32_t)HUSK_NET_MSG_MAX, VIRTQ_DESC_F_WRITE, 0);
	prologue(&p, 1);
	op(&p, 7, 1 | 2, 0, 0);
	prog_save("net", "receive", &p, 2, m, BUF);
	prog_save("net", "gone", &p, 1, m, BUF);
}

/* broker: messages with a 2-byte length before each (fuzz_broker.c). */
static void broker_seed(const char *name, const struct husk_net_hdr *h, int n, const char *payload)
{
	uint8_t b[1024];
	size_t len = 0, pl = payload ? strlen(payload) : 0;
	for (int i = 0; i < n; i++) {
		struct husk_net_hdr x = h[i];
		size_t k = sizeof x + (x.op == HUSK_NET_DATA || x.op == HUSK_NET_RESOLVE ? pl : 0);
		x.len = (uint32_t)(k - sizeof x);
		b[len++] = (uint8_t)k, b[len++] = (uint8_t)(k >> 8);
		memcpy(b + len, &x, sizeof x);
		memcpy(b + len + sizeof x, payload ? payload : "", k - sizeof x);
		len += k;
	}
	save("broker", name, b, len);
}

static void broker_seeds(void)
{
	struct husk_net_hdr connect = { .op = HUSK_NET_CONNECT, .conn = 1, .buf_alloc = 65536, .family = 2, .port = 1,
					.addr = { 127, 0, 0, 1 } };
	struct husk_net_hdr data = { .op = HUSK_NET_DATA, .conn = 1, .buf_alloc = 65536 };
	struct husk_net_hdr resolve = { .op = HUSK_NET_RESOLVE, .conn = 9 };
	struct husk_net_hdr floor = connect;
	floor.addr[0] = 169, floor.addr[1] = 254, floor.addr[2] = 169, floor.addr[3] = 254;
	broker_seed("connect-data", (struct husk_net_hdr[]){ connect, data }, 2, "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n");
	broker_seed("resolve", &resolve, 1, "x.b.test");
	broker_seed("floor", &floor, 1, NULL);
}

/* A request: header at BUF, data at BUF+0x1000, status at BUF+0x3000. */
static void blk_req(uint8_t *m, uint16_t head, uint32_t type, uint64_t sector, uint32_t data_len, int data_in)
{
	uint64_t hdr = BUF + 0x20 * head;
	put(m, hdr, &type, 4);
	put(m, hdr + 8, &sector, 8);
	uint16_t d = head;
	desc(m, d, hdr, 16, VIRTQ_DESC_F_NEXT, (uint16_t)(d + 1));
	if (data_len) {
		d++;
		desc(m, d, BUF + 0x1000, data_len, VIRTQ_DESC_F_NEXT | (data_in ? VIRTQ_DESC_F_WRITE : 0),
		     (uint16_t)(d + 1));
	}
	d++;
	desc(m, d, BUF + 0x3000 + head, 1, VIRTQ_DESC_F_WRITE, 0);
}

/* mapped: the input's last byte odd, a disk mapped to host files (fuzz_blk.c) */
static void blk_seed_on(const char *name, uint8_t flags, uint32_t type, uint64_t sector, uint32_t len, int in,
			int mapped)
{
	static struct prog p;
	static uint8_t m[BUF + 0x3010];
	memset(m, 0, sizeof m);
	memset(m + BUF + 0x1000, 0x77, 0x2000);
	m[sizeof m - 1] = (uint8_t)mapped;
	blk_req(m, 0, type, sector, len, in);
	prologue(&p, 0);
	op(&p, 7, 2, 0, 0);
	prog_save("blk", name, &p, flags, m, sizeof m);
}

static void blk_seed(const char *name, uint8_t flags, uint32_t type, uint64_t sector, uint32_t len, int in)
{
	blk_seed_on(name, flags, type, sector, len, in, 0);
}

static void blk_seeds(void)
{
	/* a disk mapped to host files: blocks 16..47 a host file, 100..131 a gone one */
	blk_seed_on("mapped-read", 0, 0, 130, 8192, 1, 1);
	blk_seed_on("mapped-read-ro", 1, 0, 16 * 8, 4096, 1, 1);
	blk_seed_on("mapped-partial-write", 0, 1, 129, 512, 0, 1);
	blk_seed_on("mapped-whole-write", 0, 1, 17 * 8, 8192, 0, 1);
	blk_seed_on("mapped-read-gone", 0, 0, 100 * 8, 4096, 1, 1);
	blk_seed_on("mapped-read-tail", 0, 0, 40 * 8, 8192, 1, 1);
	blk_seed("read", 0, 0, 3, 1024, 1);
	blk_seed("write", 0, 1, 5, 512, 0);
	blk_seed("write-ro", 1, 1, 5, 512, 0);
	blk_seed("read-last", 0, 0, 2047, 512, 1);
	blk_seed("read-past-file", 4, 0, 2048, 1024, 1);
	blk_seed("flush", 0, 4, 0, 0, 0);
	blk_seed("get-id", 1, 8, 0, 20, 1);
	blk_seed("unsupported", 0, 99, 0, 0, 0);

	/* a write then a read of the same sector, two chains, one notify */
	static struct prog p;
	static uint8_t m[BUF + 0x3010];
	memset(m, 0, sizeof m);
	memset(m + BUF + 0x1000, 0x42, 512);
	blk_req(m, 0, 1, 7, 512, 0);
	blk_req(m, 4, 0, 7, 512, 1);
	prologue(&p, 0);
	op(&p, 7, 0, 0, 0);
	op(&p, 7, 2, 0, 4);
	prog_save("blk", "write-read", &p, 0, m, sizeof m);

	/* the header split over two descriptors, data in three */
	memset(m, 0, sizeof m);
	uint32_t type = 0;
	put(m, BUF, &type, 4);
	desc(m, 0, BUF, 8, VIRTQ_DESC_F_NEXT, 1);
	desc(m, 1, BUF + 8, 8, VIRTQ_DESC_F_NEXT, 2);
	desc(m, 2, BUF + 0x1000, 100, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 3);
	desc(m, 3, BUF + 0x1100, 312, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 4);
	desc(m, 4, BUF + 0x1300, 101, VIRTQ_DESC_F_WRITE, 0);
	prologue(&p, 0);
	op(&p, 7, 2, 0, 0);
	prog_save("blk", "split", &p, 0, m, sizeof m);
}

/* ---- workdir record streams (vmm/extract_stream.h) ------------------------ */

struct stream {
	uint8_t buf[1 << 16];
	size_t n;
	uint32_t next_ino; /* each entry its own guest inode unless given one */
};

/* A record claiming `size` bytes after its name, then the dlen bytes of
 * data (NULL: dlen zero bytes; dlen < size: the stream ends early); ino 0:
 * a fresh inode number.  Written by the guest (touched), as new entries are. */
static void rec_ino(struct stream *s, uint8_t type, const char *name, uint32_t ino, uint32_t mode, int64_t mtime,
		    uint64_t size, const char *data, size_t dlen)
{
	if (s->next_ino < 100)
		s->next_ino = 100;
	if (!ino && type != R_UP && type != R_END && type != R_ERROR)
		ino = s->next_ino++;
	struct rec r = { .type = type, .touched = 1, .name_len = (uint16_t)strlen(name), .mode = mode, .ino = ino,
			 .mtime = mtime, .size = size };
	memcpy(s->buf + s->n, &r, sizeof r);
	s->n += sizeof r;
	memcpy(s->buf + s->n, name, r.name_len);
	s->n += r.name_len;
	size_t k = dlen < sizeof s->buf - s->n ? dlen : sizeof s->buf - s->n;
	if (data)
		memcpy(s->buf + s->n, data, k);
	else
		memset(s->buf + s->n, 0, k);
	s->n += k;
}

static void rec(struct stream *s, uint8_t type, const char *name, uint32_t mode, int64_t mtime, uint64_t size,
		const char *data, size_t dlen)
{
	rec_ino(s, type, name, 0, mode, mtime, size, data, dlen);
}

static void stream_save(const char *name, struct stream *s)
{
	save("extract_stream", name, s->buf, s->n);
	s->n = 0;
}

/* fuzz_extract's host tree is in the way (a, d, f: symlinks out of it; u;
 * olddir/x, changed by the host; host-file and host-dir, made by it); the
 * streams of the seed images, with the copy-in record's inode numbers,
 * come from mkseeds-ext2. */
static void stream_seeds(void)
{
	static struct stream s;
	/* a tree over the host's symlinks and its own files */
	rec(&s, R_DIR, "a", 040755, 0, 0, NULL, 0);
	rec(&s, R_FILE, "x", 0100644, 1, 5, "hello", 5);
	rec(&s, R_SYMLINK, "l", 0120777, 0, 6, "target", 6);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec(&s, R_DIR, "f", 040700, 0, 0, NULL, 0);
	rec(&s, R_DIR, "g", 040700, 0, 0, NULL, 0);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec(&s, R_FILE, "d", 0104755, 0, 3, "sid", 3);
	rec(&s, R_FILE, "u", 0100644, 1000000000, 3, "new", 3);
	rec(&s, R_OTHER, "fifo", 010644, 0, 0, NULL, 0);
	rec(&s, R_FILE, "host-file", 0100644, 0, 7, "program", 7);
	rec(&s, R_DIR, "host-dir", 040755, 0, 0, NULL, 0);
	rec(&s, R_FILE, "inner", 0100644, 0, 7, "program", 7);
	rec(&s, R_FILE, "new", 0100644, 0, 7, "program", 7);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec(&s, R_DIR, "olddir", 040755, 0, 0, NULL, 0);
	rec(&s, R_FILE, "x", 0100600, 0, 7, "program", 7);
	rec(&s, R_DIR, "sub", 040755, 0, 0, NULL, 0);
	rec(&s, R_FILE, "y", 0100600, 0, 7, "program", 7);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec(&s, R_END, "", 0, 0, 0, NULL, 0);
	stream_save("tree", &s);

	rec(&s, R_FILE, "..", 0100644, 0, 3, "bad", 3);
	rec(&s, R_SYMLINK, "x/y", 0120777, 0, 2, "..", 2);
	rec(&s, R_SYMLINK, "nul", 0120777, 0, 3, "a\0b", 3);
	rec(&s, R_DIR, ".", 040755, 0, 0, NULL, 0);
	rec(&s, R_FILE, "ctl\n\x1b[1m", 0100644, 0, 1, "c", 1);
	rec(&s, R_END, "", 0, 0, 0, NULL, 0);
	stream_save("bad-names", &s);

	for (int i = 0; i < 130; i++)
		rec(&s, R_DIR, "d", 040755, 0, 0, NULL, 0);
	stream_save("deep", &s);

	/* hard links: good ones, and ones naming a symlink, a directory, a
	 * climb, a missing file, a path through the host's symlinks, a file of
	 * the host's, a file of another inode */
	rec(&s, R_DIR, "a", 040755, 0, 0, NULL, 0);
	rec_ino(&s, R_FILE, "x", 50, 0100644, 1, 5, "hello", 5);
	rec_ino(&s, R_SYMLINK, "l", 51, 0120777, 0, 6, "target", 6);
	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	rec_ino(&s, R_LINK, "y", 50, 0100644, 1, 3, "a/x", 3);
	rec_ino(&s, R_LINK, "z", 51, 0100644, 1, 3, "a/l", 3);
	rec_ino(&s, R_LINK, "w", 50, 0100644, 1, 1, "a", 1);
	rec_ino(&s, R_LINK, "v", 50, 0100644, 1, 6, "../a/x", 6);
	rec_ino(&s, R_LINK, "u", 50, 0100644, 1, 4, "nope", 4);
	rec_ino(&s, R_LINK, "t", 50, 0100644, 1, 3, "f/x", 3);
	rec_ino(&s, R_LINK, "s", 50, 0100644, 1, 4, "a//x", 4);
	rec_ino(&s, R_LINK, "r", 52, 0100644, 1, 9, "host-file", 9);
	rec_ino(&s, R_LINK, "q", 52, 0100644, 1, 8, "olddir/x", 8);
	rec_ino(&s, R_LINK, "p", 53, 0100644, 1, 3, "a/x", 3);
	rec_ino(&s, R_LINK, "o", 54, 0100644, 1, 2, "h1", 2);
	rec_ino(&s, R_END, "", 0, 0, 0, 0, NULL, 0);
	stream_save("links", &s);

	rec(&s, R_UP, "", 0, 0, 0, NULL, 0);
	stream_save("up-at-top", &s);

	rec(&s, R_FILE, "big", 0100644, 0, 5ull << 20, NULL, 0);
	stream_save("too-big", &s);

	rec(&s, R_FILE, "short", 0100644, 0, 100, "only this", 9);
	stream_save("short", &s);

	/* the reader giving up after some entries */
	rec(&s, R_FILE, "n", 0100644, 0, 1, "n", 1);
	rec(&s, R_DIR, "olddir", 040755, 0, 0, NULL, 0);
	rec(&s, R_ERROR, "", 0, 0, RE_MEMORY, NULL, 0);
	stream_save("reader-error", &s);

	char name[16];
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "f%d", i);
		rec(&s, R_FILE, name, 0100644, 0, 1, "x", 1);
	}
	rec(&s, R_END, "", 0, 0, 0, NULL, 0);
	stream_save("too-many", &s);
}

static int trim(const char *path)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 22];
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (!f || ferror(f) || !feof(f)) {
		fprintf(stderr, "mkseeds: cannot read %s (or it is over 4 MiB)\n", path);
		return 1;
	}
	fclose(f);
	while (n && !buf[n - 1])
		n--;
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* sni: an HTTP request, and a TLS 1.3 ClientHello for a.example.com (one
 * cipher suite, server_name and supported_versions). */
static void sni_seeds(void)
{
	static const char req[] = "GET /index.html HTTP/1.1\r\nHost: a.example.com:8080\r\nAccept: */*\r\n\r\n";
	static const uint8_t hello[] = {
		0x16, 0x03, 0x01, 0x00, 0x4c,						   /* record */
		0x01, 0x00, 0x00, 0x48, 0x03, 0x03,					   /* ClientHello, version */
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,			   /* random */
		17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 0x00, /* no session id */
		0x00, 0x02, 0x13, 0x01, 0x01, 0x00,					   /* suites, compression */
		0x00, 0x1d,								   /* extensions */
		0x00, 0x00, 0x00, 0x12, 0x00, 0x10, 0x00, 0x00, 0x0d, 'a', '.', 'e', 'x', 'a', 'm', 'p',
		'l', 'e', '.', 'c', 'o', 'm', 0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04,
	};
	save("sni", "http", req, sizeof req - 1);
	save("sni", "tls13", hello, sizeof hello);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "-trim"))
		return trim(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR | mkseeds -trim FILE\n");
		return 2;
	}
	root = argv[1];
	if (mkdir(root, 0755) && errno != EEXIST) {
		perror(root);
		return 1;
	}
	elf("exec", ET_EXEC, 0x400000, 0, 0);
	elf("exec-phdr", ET_EXEC, 0x400000, 1, 0);
	elf("exec-bss", ET_EXEC, 0x400000, 1, 0x100000);
	elf("pie", ET_DYN, 0, 1, 0x4000);
	virtq_seeds();
	console_seeds();
	blk_seeds();
	net_seeds();
	broker_seeds();
	stream_seeds();
	sni_seeds();
	return 0;
}
