/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "sandbox/stop.h"
#include "devices/virtio_blk.h"
#include "disks/file_server.h"

#define SECTOR VIRTIO_BLK_SECTOR_SIZE
/* Bytes per pread/pwrite: a file's pread is not interrupted by the timer
 * signal, so a stop request is checked between chunks. */
#define IO_CHUNK (1u << 20)
#define MAP_BLOCK 4096u /* the unit of a dataset's map */

/* A position in a descriptor chain's segments: requests are framed by bytes,
 * not by descriptors (virtio 1.x, 2.6.4). */
struct cursor {
	struct virtq_chain *c;
	int seg;
	uint32_t off;
};

/* Up to n bytes of the chain from the cursor, in direction `writable`, into
 * an iovec; advances.  Stops at a direction change. */
static size_t take(struct cursor *k, int writable, uint64_t n, struct iovec *iov, int *niov, int max)
{
	size_t got = 0;
	*niov = 0;
	while (k->seg < k->c->n && k->c->seg[k->seg].len == 0)
		k->seg++; /* empty descriptors carry nothing, in either direction */
	while (n && k->seg < k->c->n && k->c->seg[k->seg].writable == writable && *niov < max) {
		struct virtq_seg *s = &k->c->seg[k->seg];
		uint64_t left = s->len - k->off, step = left < n ? left : n;
		if (step) {
			iov[(*niov)++] = (struct iovec){ s->ptr + k->off, step };
			got += step, n -= step, k->off += step;
		}
		if (k->off == s->len)
			k->seg++, k->off = 0;
	}
	return got;
}

/* One buffer at pos of fd, in chunks; 0, or -1 on an error or a stop
 * request.  Past the end of a short file reads as zeros. */
static int transfer(int fd, int writing, char *p, size_t n, off_t *pos)
{
	while (n) {
		if (stop_requested())
			return -1;
		size_t step = n < IO_CHUNK ? n : IO_CHUNK;
		ssize_t k = writing ? pwrite(fd, p, step, *pos) : pread(fd, p, step, *pos);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0 && !writing) /* past the end of a short file: zeros */
			memset(p, 0, n), k = (ssize_t)n;
		else if (k <= 0)
			return -1;
		p += k, n -= k, *pos += k;
	}
	return 0;
}

/* The extent holding block blk, or the first after it (map->nx: none). */
static size_t extent_at(const struct copyin_map *m, uint64_t blk)
{
	size_t lo = 0, hi = m->nx;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->x[mid].block + m->x[mid].blocks <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A read of a dataset's disk: its mapped blocks from the host files, never
 * beyond the piece of the file the extent names (a file that shrank reads
 * as zeros there), the rest from the metadata image. */
static int read_mapped(struct blk *b, char *p, size_t n, off_t *pos)
{
	while (n) {
		uint64_t at = (uint64_t)*pos;
		size_t i = extent_at(b->map, at / MAP_BLOCK);
		const struct copyin_extent *x = i < b->map->nx ? &b->map->x[i] : NULL;
		uint64_t start = x ? x->block * MAP_BLOCK : UINT64_MAX;
		size_t step;
		if (x && at >= start) {
			uint64_t left = (x->block + x->blocks) * MAP_BLOCK - at;
			step = left < n ? (size_t)left : n;
			int fd = file_server_open(b->files, b->disk, x->file);
			off_t in_file = (off_t)(x->offset + (at - start));
			if (fd < 0 || transfer(fd, 0, p, step, &in_file))
				return -1;
		} else {
			uint64_t left = start - at;
			step = left < n ? (size_t)left : n;
			off_t in_image = *pos;
			if (transfer(b->fd, 0, p, step, &in_image))
				return -1;
		}
		p += step, n -= step, *pos += (off_t)step;
	}
	return 0;
}

static uint8_t do_io(struct blk *b, int writing, uint64_t sector, struct iovec *iov, int niov, size_t len)
{
	if (len % SECTOR || len > HUSK_BLK_MAX_REQUEST || sector > b->sectors || len / SECTOR > b->sectors - sector)
		return VIRTIO_BLK_S_IOERR;
	if (writing && b->read_only) {
		b->denied_writes++;
		return VIRTIO_BLK_S_IOERR;
	}
	off_t pos = (off_t)(sector * SECTOR);
	for (int i = 0; i < niov; i++)
		if (!writing && b->map ? read_mapped(b, iov[i].iov_base, iov[i].iov_len, &pos)
				       : transfer(b->fd, writing, iov[i].iov_base, iov[i].iov_len, &pos))
			return VIRTIO_BLK_S_IOERR;
	if (writing)
		b->bytes_written += len;
	else
		b->bytes_read += len;
	return VIRTIO_BLK_S_OK;
}

/* One request.  Returns the bytes written into the chain, or -1 when the
 * chain is malformed (*err set). */
static long serve(void *priv, struct virtq_chain *c, const char **err)
{
	struct blk *b = priv;
	struct cursor k = { c, 0, 0 };
	struct iovec iov[VIRTQ_MAX_SIZE];
	int niov;
	struct virtio_blk_req_hdr hdr;
	if (take(&k, 0, sizeof hdr, iov, &niov, VIRTQ_MAX_SIZE) != sizeof hdr)
		return *err = "virtio-blk: request header shorter than 16 bytes", -1;
	for (int i = 0, at = 0; i < niov; at += iov[i].iov_len, i++)
		memcpy((uint8_t *)&hdr + at, iov[i].iov_base, iov[i].iov_len);
	uint32_t type = hdr.type;
	uint64_t sector = hdr.sector;
	/* The status byte is the chain's last byte, device-writable. */
	struct virtq_seg *last = &c->seg[c->n - 1];
	if (!last->writable || last->len == 0)
		return *err = "virtio-blk: request has no status byte", -1;
	uint8_t *status = last->ptr + last->len - 1;
	uint64_t data_out = 0, data_in = 0;
	for (int i = 0; i < c->n; i++)
		*(c->seg[i].writable ? &data_in : &data_out) += c->seg[i].len;
	data_out -= sizeof hdr;
	data_in -= 1;
	uint8_t st;
	long written = 1;
	switch (type) {
	case VIRTIO_BLK_T_IN:
		if (data_out)
			return *err = "virtio-blk: read request carries data", -1;
		if (take(&k, 1, data_in, iov, &niov, VIRTQ_MAX_SIZE) != data_in)
			return *err = "virtio-blk: read request's buffers are not all device-writable", -1;
		st = do_io(b, 0, sector, iov, niov, data_in);
		if (st == VIRTIO_BLK_S_OK)
			written += data_in;
		break;
	case VIRTIO_BLK_T_OUT:
		if (data_in)
			return *err = "virtio-blk: write request has device-writable data", -1;
		if (take(&k, 0, data_out, iov, &niov, VIRTQ_MAX_SIZE) != data_out)
			return *err = "virtio-blk: write request's data is not all device-readable", -1;
		st = do_io(b, 1, sector, iov, niov, data_out);
		break;
	case VIRTIO_BLK_T_FLUSH:
		st = b->read_only || fdatasync(b->fd) == 0 ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR;
		break;
	case VIRTIO_BLK_T_GET_ID:
		if (data_in < sizeof b->id) {
			st = VIRTIO_BLK_S_IOERR;
			break;
		}
		if (take(&k, 1, sizeof b->id, iov, &niov, VIRTQ_MAX_SIZE) != sizeof b->id)
			return *err = "virtio-blk: id request's buffer is not device-writable", -1;
		for (int i = 0, at = 0; i < niov; at += iov[i].iov_len, i++)
			memcpy(iov[i].iov_base, b->id + at, iov[i].iov_len);
		written += sizeof b->id;
		st = VIRTIO_BLK_S_OK;
		break;
	default:
		st = VIRTIO_BLK_S_UNSUPP;
	}
	*status = st;
	return written;
}

static int blk_notify(struct virtio_mmio *d, int qi, const char **err)
{
	return virtio_mmio_serve(d, qi, serve, err);
}

static const struct virtio_device_ops blk_ops = { .notify = blk_notify };

void blk_init(struct blk *b, uint64_t base, const struct guest_mem *m, int fd, uint64_t size, int read_only,
	      const char *id)
{
	memset(b, 0, sizeof *b);
	b->fd = fd;
	b->read_only = read_only;
	b->sectors = size / SECTOR;
	memcpy(b->id, id, strnlen(id, sizeof b->id)); /* NUL-padded, not terminated when full */
	b->config.capacity = b->sectors;
	b->config.seg_max = VIRTQ_MAX_SIZE - 2; /* header and status take two */
	struct virtio_device dev = {
		.id = VIRTIO_ID_BLOCK,
		.nqueues = 1,
		.features = 1ull << VIRTIO_BLK_F_SEG_MAX | 1ull << VIRTIO_BLK_F_FLUSH |
			    (read_only ? 1ull << VIRTIO_BLK_F_RO : 0),
		.config = &b->config,
		.config_len = sizeof b->config,
		.ops = &blk_ops,
		.priv = b,
	};
	virtio_mmio_init(&b->mmio, base, m, &dev);
}

void blk_map_files(struct blk *b, const struct copyin_map *map, int files, uint32_t disk)
{
	b->map = map;
	b->files = files;
	b->disk = disk;
}
