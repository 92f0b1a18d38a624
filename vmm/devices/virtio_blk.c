/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "devices/virtio_blk.h"
#include "disks/file_server.h"

#define SECTOR VIRTIO_BLK_SECTOR_SIZE

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

/* An fd for file f of a mapped disk's map, from the file server. */
static int file_fd(void *ctx, uint32_t f)
{
	struct blk *b = ctx;
	int fd = file_server_open(b->files, b->disk, f);
	b->changed_reads += fd == -ESTALE;
	b->unreadable_reads += fd == -EACCES || fd == -EPERM;
	return fd;
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
	for (int i = 0; i < niov; i++) {
		char *p = iov[i].iov_base;
		size_t k = iov[i].iov_len;
		int r = !b->mapped.map ? mapped_transfer(b->fd, writing, p, k, &pos)
			: writing      ? mapped_write(&b->mapped, p, k, &pos)
				       : mapped_read(&b->mapped, p, k, &pos);
		if (r)
			return VIRTIO_BLK_S_IOERR;
	}
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

void blk_map_files(struct blk *b, const struct copyin_map *map, uint64_t *dirty, int files, uint32_t disk)
{
	b->mapped = (struct mapped_disk){ b->fd, map, dirty, file_fd, b };
	b->files = files;
	b->disk = disk;
}
