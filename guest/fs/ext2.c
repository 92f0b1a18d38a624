/* SPDX-License-Identifier: GPL-2.0-only */
/* ext2 (revision 0/1), read and write.
 *
 * Layout of this file, bottom-up:
 *   on-disk structures and small helpers
 *   device I/O           whole blocks, runs of contiguous blocks in one call
 *   metadata cache       write-back, LRU, entries pinned while in use;
 *                        also holds partial blocks of file data
 *   groups and bitmaps   block and inode allocation
 *   inode I/O
 *   block map            direct + single/double/triple indirect
 *   truncation
 *   directories          linear scan (htree directories read as linear),
 *                        and an in-memory index of big directories
 *   file data
 *   mount / sync / unmount, then the public operations.
 *
 * Every value read from the disk is checked before use: block numbers
 * against the block count and the group metadata, inode numbers against
 * the inode count, directory records against their block, sizes against
 * the block map.  Loops are bounded by the geometry, never by on-disk
 * links, so a corrupt image gives -EIO, not a hang or a stray access. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* The guest's errno values (Linux's), by path: the unit tests build this file
 * on the host, where only guest/fs is on the include path. */
#include "../include/errno.h"
#include "ext2.h"
#include "husk/abi.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ext2.c reads on-disk structures in place: little-endian hosts only"
#endif

/* ---- on-disk structures ------------------------------------------------ */

#define EXT2_MAGIC 0xEF53
#define SB_SECTOR 2 /* the superblock: bytes 1024-2047 of the device */
#define EXT2_VALID_FS 1
#define EXT2_ERROR_FS 2
#define GOOD_OLD_INODE_SIZE 128
#define GOOD_OLD_FIRST_INO 11
#define NDIR 12 /* direct pointers in i_block */
#define EXT2_LINK_MAX 32000 /* links to one inode (ext2's limit, not Linux's LINK_MAX) */
#define EXT2_NAME_LEN 255   /* bytes in a directory entry's name */
#define FAST_SYMLINK_MAX 59 /* the target and its NUL fit in i_block */

#define COMPAT_RESIZE_INODE 0x10
#define INCOMPAT_FILETYPE 0x2
#define RO_COMPAT_SPARSE_SUPER 0x1
#define RO_COMPAT_LARGE_FILE 0x2
#define RO_COMPAT_BTREE_DIR 0x4
#define INCOMPAT_SUPPORTED INCOMPAT_FILETYPE
#define RO_COMPAT_SUPPORTED (RO_COMPAT_SPARSE_SUPER | RO_COMPAT_LARGE_FILE | RO_COMPAT_BTREE_DIR)

#define INDEX_FL 0x1000       /* htree directory */
#define EXTENTS_FL 0x80000    /* ext4: i_block is not a block map */
#define INLINE_DATA_FL 0x10000000

#define XATTR_MAGIC 0xEA020000

/* On-disk file types in directory entries (with the filetype feature). */
enum { FT_UNKNOWN, FT_REG, FT_DIR, FT_CHR, FT_BLK, FT_FIFO, FT_SOCK, FT_LNK, FT_MAX };

struct ext2_super {
	uint32_t inodes_count, blocks_count, r_blocks_count, free_blocks_count;
	uint32_t free_inodes_count, first_data_block, log_block_size, log_frag_size;
	uint32_t blocks_per_group, frags_per_group, inodes_per_group, mtime;
	uint32_t wtime;
	uint16_t mnt_count;
	int16_t max_mnt_count;
	uint16_t magic, state, errors, minor_rev_level;
	uint32_t lastcheck, checkinterval, creator_os, rev_level;
	uint16_t def_resuid, def_resgid;
	uint32_t first_ino;
	uint16_t inode_size, block_group_nr;
	uint32_t feature_compat, feature_incompat, feature_ro_compat;
	uint8_t uuid[16], volume_name[16], last_mounted[64];
	uint32_t algorithm_usage_bitmap;
	uint8_t prealloc_blocks, prealloc_dir_blocks;
	uint16_t reserved_gdt_blocks;
	uint8_t rest[1024 - 208];
};
_Static_assert(sizeof(struct ext2_super) == 1024, "superblock layout");
_Static_assert(offsetof(struct ext2_super, reserved_gdt_blocks) == 206, "superblock layout");

struct ext2_gd {
	uint32_t block_bitmap, inode_bitmap, inode_table;
	uint16_t free_blocks_count, free_inodes_count, used_dirs_count, flags;
	uint32_t reserved[3];
};
_Static_assert(sizeof(struct ext2_gd) == 32, "group descriptor layout");

struct ext2_inode {
	uint16_t mode, uid;
	uint32_t size, atime, ctime, mtime, dtime;
	uint16_t gid, links;
	uint32_t blocks, flags, osd1;
	uint32_t block[15];
	uint32_t generation, file_acl, size_high, faddr;
	uint16_t blocks_hi, file_acl_hi, uid_hi, gid_hi, csum_lo, reserved;
};
_Static_assert(sizeof(struct ext2_inode) == GOOD_OLD_INODE_SIZE, "inode layout");
_Static_assert(offsetof(struct ext2_inode, block) == 40, "inode layout");

struct ext2_dirhdr {
	uint32_t inode;
	uint16_t rec_len;
	uint8_t name_len, file_type;
};
#define DIRHDR 8u
#define REC_LEN(name_len) ((DIRHDR + (name_len) + 3u) & ~3u)

/* ---- the mounted file system -------------------------------------------- */

#define MC_BYTES (1u << 20)     /* block cache: blocks of this many bytes */
#define MC_MIN 32               /* ... but at least this many entries */
#define STAGE_BYTES (512u << 10) /* write coalescing, directory index builds, read-ahead */
/* The read-ahead window: this much, doubled at each fill that continues
 * the last one (a file read in order) up to the whole stage.  Each fill is
 * one VM exit, ~40 us on kvm_pvm: 128 KiB reads of a file in order were
 * 0.35x native with a fixed 128 KiB window, 0.59x so.  (A 2 MiB stage made
 * them 0.64x but 1 MiB reads, straight to their buffers, 0.52x instead of
 * 0.74x: not taken.) */
#define RA_BYTES (128u << 10)
#define RA_DIRECT (1u << 20) /* a read this large goes straight to its buffer */
#define MAX_IO_BYTES (16u << 20) /* longest single data transfer */
#define MAX_DIR_DEPTH 65536     /* bound on ".." walks */

/* The directory index (see "directory index" below). */
#define DX_DIRS 8                   /* directories indexed at once, LRU */
#ifndef DX_MAX_NAMES /* (both can be set smaller to test the limits) */
#define DX_MAX_NAMES 2000000u       /* names indexed, over all of them */
#endif
#ifndef DX_MAX_BYTES
#define DX_MAX_BYTES (40u << 20)    /* memory of all of them */
#endif
#define DX_MAX_BLOCKS (1u << 18)    /* blocks of one indexed directory */
#define DX_MIN_BLOCKS 2             /* smaller directories are just scanned */
#define DX_CHUNK 64                 /* blocks per entry of the free-space summary */

struct mc_ent {
	uint8_t *data;
	uint32_t blk;
	uint32_t last;  /* LRU tick */
	int32_t next;   /* hash chain */
	uint16_t pins;  /* users holding data: never evicted while > 0 */
	uint8_t valid, dirty;
	uint8_t file_data; /* written back before metadata, which may point at it */
};

/* One slot of a directory index: a name's hash and its record's position. */
struct dx_slot {
	uint32_t tag;
	uint32_t pos; /* byte offset in the directory / 4, plus 1; 0: empty */
};

/* The index of one directory (ino 0: unused). */
struct dx_dir {
	uint32_t ino, blk0;   /* blk0: i_block[0] when indexed */
	uint64_t size;        /* i_size when indexed (kept up to date) */
	uint32_t last;        /* LRU tick */
	uint32_t nblocks, cap; /* blocks, and the capacity of the arrays below */
	uint32_t *pblk;       /* per block: where it is (0: a hole) */
	uint16_t *room;       /* per block: the longest record that fits in it */
	uint16_t *chunk_room; /* per DX_CHUNK blocks: the largest room */
	struct dx_slot *tab;  /* open addressing, linear probing */
	uint32_t mask, names;
};

struct ext2_fs {
	struct blockdev *bd;
	int read_only;
	int64_t (*now)(void);
	struct ext2_super sb;
	bool sb_dirty, gdt_dirty, corrupt;
	uint16_t mount_state;

	/* geometry, validated at mount */
	uint32_t bs, log_bs, spb, ppb, log_ppb;
	uint32_t blocks_count, first_data_block, bpg, ipg, inodes_count, ngroups;
	uint32_t inode_size, first_ino, itb, gdt_blocks, rsv_gdt;
	uint64_t max_size;

	struct ext2_gd *gd; /* the whole descriptor table (gdt_blocks blocks) */

	struct mc_ent *mc;
	uint32_t mc_n, mc_hmask, mc_tick;
	int32_t *mc_hash;
	uint32_t *mc_order; /* scratch for writeback */
	uint8_t *mc_data;

	uint8_t *stage; /* coalesced writes, index builds; else the read-ahead window */
	uint32_t stage_blocks, ra_max; /* the stage's size; the read-ahead window's, in blocks */
	uint32_t ra_ino, ra_blocks, ra_off; /* ... its inode, blocks, where in the stage */
	uint64_t ra_lblk;
	uint32_t seq_ino, seq_blocks; /* the last read from the device: its inode, size */
	uint64_t seq_next;            /* ... and the block after it */
	uint32_t rp_blk, rp_blocks;   /* a read-only disk's window: disk blocks, whatever file (ext2.c) */

	struct dx_dir dx[DX_DIRS];
	uint32_t dx_tick, dx_names; /* dx_names: over all indexes */
	size_t dx_bytes;            /* ... and their memory */
	uint64_t dx_seed;
	uint32_t dx_skip_ino;       /* a directory that could not be indexed ... */
	uint64_t dx_skip_size;      /* ... at this size: not retried until it changes */
};

/* One inode, as a copy of its first 128 on-disk bytes. */
struct ino {
	uint32_t num;
	struct ext2_inode d;
};

/* ---- small helpers ------------------------------------------------------- */

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void st32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int corrupt(struct ext2_fs *fs)
{
	fs->corrupt = true;
	return -EIO;
}

static uint32_t now32(const struct ext2_fs *fs)
{
	return fs->now ? (uint32_t)fs->now() : 0;
}

static uint32_t mode_type(uint32_t mode)
{
	return mode & EXT2_S_IFMT;
}

static bool is_dir(const struct ino *ip)
{
	return mode_type(ip->d.mode) == EXT2_S_IFDIR;
}

static bool is_reg(const struct ino *ip)
{
	return mode_type(ip->d.mode) == EXT2_S_IFREG;
}

static bool is_lnk(const struct ino *ip)
{
	return mode_type(ip->d.mode) == EXT2_S_IFLNK;
}

static uint64_t i_size(const struct ino *ip)
{
	return ip->d.size | (uint64_t)ip->d.size_high << 32;
}

static void i_size_set(struct ext2_fs *fs, struct ino *ip, uint64_t size)
{
	ip->d.size = (uint32_t)size;
	ip->d.size_high = (uint32_t)(size >> 32);
	if (size > 0x7fffffff && !(fs->sb.feature_ro_compat & RO_COMPAT_LARGE_FILE)) {
		fs->sb.feature_ro_compat |= RO_COMPAT_LARGE_FILE;
		fs->sb_dirty = true;
	}
}

static bool is_fast_symlink(const struct ext2_fs *fs, const struct ino *ip)
{
	return is_lnk(ip) && ip->d.blocks == (ip->d.file_acl ? fs->spb : 0);
}

/* Whether i_block holds block pointers (not a symlink target or device). */
static bool has_block_map(const struct ext2_fs *fs, const struct ino *ip)
{
	return is_reg(ip) || is_dir(ip) || (is_lnk(ip) && !is_fast_symlink(fs, ip));
}

static uint8_t mode_to_ft(uint32_t mode)
{
	switch (mode_type(mode)) {
	case EXT2_S_IFREG: return FT_REG;
	case EXT2_S_IFDIR: return FT_DIR;
	case EXT2_S_IFCHR: return FT_CHR;
	case EXT2_S_IFBLK: return FT_BLK;
	case EXT2_S_IFIFO: return FT_FIFO;
	case EXT2_S_IFSOCK: return FT_SOCK;
	case EXT2_S_IFLNK: return FT_LNK;
	}
	return FT_UNKNOWN;
}

static uint8_t ft_to_dt(uint8_t ft)
{
	static const uint8_t dt[FT_MAX] = {
		EXT2_DT_UNKNOWN, EXT2_DT_REG, EXT2_DT_DIR, EXT2_DT_CHR,
		EXT2_DT_BLK, EXT2_DT_FIFO, EXT2_DT_SOCK, EXT2_DT_LNK,
	};
	return ft < FT_MAX ? dt[ft] : EXT2_DT_UNKNOWN;
}

/* The file type stored in a new directory entry. */
static uint8_t dirent_ft(const struct ext2_fs *fs, uint32_t mode)
{
	return fs->sb.feature_incompat & INCOMPAT_FILETYPE ? mode_to_ft(mode) : FT_UNKNOWN;
}

static int name_check(const char *name, size_t len)
{
	if (len == 0)
		return -ENOENT;
	if (len > EXT2_NAME_LEN)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, 0, len))
		return -EINVAL;
	return 0;
}

static bool is_dot_or_dotdot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/* ---- device I/O ---------------------------------------------------------- */

static int dev_read(struct ext2_fs *fs, uint32_t blk, uint32_t n, void *buf)
{
	if ((uint64_t)blk + n > fs->blocks_count)
		return corrupt(fs);
	int r = fs->bd->read(fs->bd->ctx, (uint64_t)blk * fs->spb, buf, n * fs->spb);
	return r ? (r < 0 ? r : -EIO) : 0;
}

static int dev_write(struct ext2_fs *fs, uint32_t blk, uint32_t n, const void *buf)
{
	if (fs->read_only)
		return -EROFS;
	if ((uint64_t)blk + n > fs->blocks_count)
		return corrupt(fs);
	int r = fs->bd->write(fs->bd->ctx, (uint64_t)blk * fs->spb, buf, n * fs->spb);
	return r ? (r < 0 ? r : -EIO) : 0;
}

static int sb_write(struct ext2_fs *fs)
{
	int r = fs->bd->write(fs->bd->ctx, SB_SECTOR, &fs->sb, sizeof fs->sb / 512);
	if (r)
		return r < 0 ? r : -EIO;
	fs->sb_dirty = false;
	return 0;
}

/* ---- metadata cache -------------------------------------------------------
 * Bitmaps, inode table blocks, indirect blocks, directory blocks and slow
 * symlink targets go through here, and so do file data blocks written in
 * part (small files, tails): their writes then reach the device together
 * with their neighbours'.  Whole-block data writes go straight to the
 * device and drop any cached copy; data reads take cached dirty blocks
 * over what the device holds.  mc_get pins an entry (its data stays put
 * until mc_put); dirty entries are written on ext2_sync, or all together
 * (sorted, runs of contiguous blocks in one call) when one has to be
 * evicted.  A freed block is forgotten, so its stale copy can never be
 * written over new file data. */

static uint32_t mc_bucket(const struct ext2_fs *fs, uint32_t blk)
{
	return (blk * 2654435761u) & fs->mc_hmask;
}

static struct mc_ent *mc_lookup(struct ext2_fs *fs, uint32_t blk)
{
	for (int32_t i = fs->mc_hash[mc_bucket(fs, blk)]; i >= 0; i = fs->mc[i].next)
		if (fs->mc[i].blk == blk)
			return &fs->mc[i];
	return NULL;
}

static void mc_hash_insert(struct ext2_fs *fs, struct mc_ent *e)
{
	uint32_t h = mc_bucket(fs, e->blk);
	e->next = fs->mc_hash[h];
	fs->mc_hash[h] = (int32_t)(e - fs->mc);
	e->valid = 1;
}

static void mc_hash_remove(struct ext2_fs *fs, struct mc_ent *e)
{
	int32_t self = (int32_t)(e - fs->mc);
	int32_t *link = &fs->mc_hash[mc_bucket(fs, e->blk)];
	while (*link >= 0 && *link != self)
		link = &fs->mc[*link].next;
	if (*link == self)
		*link = e->next;
	e->valid = 0;
	e->dirty = 0;
	e->file_data = 0;
}

/* The write-back order: file data first, then by block number. */
static uint64_t mc_order_key(const struct mc_ent *e)
{
	return (uint64_t)!e->file_data << 32 | e->blk;
}

static void sort_by_block(struct ext2_fs *fs, uint32_t *idx, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = idx[i], j = i;
		for (; j > 0 && mc_order_key(&fs->mc[idx[j - 1]]) > mc_order_key(&fs->mc[v]); j--)
			idx[j] = idx[j - 1];
		idx[j] = v;
	}
}

/* The read-ahead window (in fs->stage): blocks ra_lblk.. of inode ra_ino.
 * Dropped whenever that inode's data changes or the stage is reused. */
static void ra_drop(struct ext2_fs *fs, uint32_t ino)
{
	if (fs->ra_ino == ino || ino == 0)
		fs->ra_ino = 0;
	if (ino == 0)
		fs->rp_blocks = 0;
}

/* Writes entries idx[0..n) (consecutive block numbers) in one call. */
static int mc_write_run(struct ext2_fs *fs, const uint32_t *idx, uint32_t n)
{
	const struct mc_ent *first = &fs->mc[idx[0]];
	if (n == 1)
		return dev_write(fs, first->blk, 1, first->data);
	ra_drop(fs, 0);
	for (uint32_t k = 0; k < n; k++)
		memcpy(fs->stage + (size_t)k * fs->bs, fs->mc[idx[k]].data, fs->bs);
	return dev_write(fs, first->blk, n, fs->stage);
}

/* Writes every dirty entry, runs of contiguous blocks together. */
static int mc_writeback(struct ext2_fs *fs)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < fs->mc_n; i++)
		if (fs->mc[i].valid && fs->mc[i].dirty)
			fs->mc_order[n++] = i;
	sort_by_block(fs, fs->mc_order, n);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i + 1;
		while (j < n && j - i < fs->stage_blocks &&
		       mc_order_key(&fs->mc[fs->mc_order[j]]) == mc_order_key(&fs->mc[fs->mc_order[j - 1]]) + 1)
			j++;
		int r = mc_write_run(fs, fs->mc_order + i, j - i);
		if (r)
			return r;
		for (; i < j; i++)
			fs->mc[fs->mc_order[i]].dirty = 0;
	}
	return 0;
}

/* A free slot: unused, else the least recently used unpinned entry. */
static int mc_victim(struct ext2_fs *fs, struct mc_ent **out)
{
	struct mc_ent *best = NULL;
	for (uint32_t i = 0; i < fs->mc_n; i++) {
		struct mc_ent *e = &fs->mc[i];
		if (e->pins)
			continue;
		if (!e->valid) {
			best = e;
			break;
		}
		if (!best || (int32_t)(e->last - best->last) < 0)
			best = e;
	}
	if (!best)
		return -ENOMEM; /* every entry pinned: cannot happen with MC_MIN entries */
	if (best->valid && best->dirty) {
		int r = mc_writeback(fs);
		if (r)
			return r;
	}
	if (best->valid)
		mc_hash_remove(fs, best);
	best->dirty = 0;
	best->file_data = 0;
	*out = best;
	return 0;
}

/* Pins block blk in the cache: read from the device, or (zero) zero-filled
 * and dirty for a block being initialised. */
static int mc_get(struct ext2_fs *fs, uint32_t blk, bool zero, struct mc_ent **out)
{
	if (blk == 0 || blk < fs->first_data_block || blk >= fs->blocks_count)
		return corrupt(fs);
	struct mc_ent *e = mc_lookup(fs, blk);
	if (!e) {
		int r = mc_victim(fs, &e);
		if (r)
			return r;
		if (!zero && (r = dev_read(fs, blk, 1, e->data)))
			return r;
		e->blk = blk;
		mc_hash_insert(fs, e);
	}
	if (zero) {
		memset(e->data, 0, fs->bs);
		e->dirty = 1;
	}
	e->pins++;
	e->last = ++fs->mc_tick;
	*out = e;
	return 0;
}

static void mc_put(struct mc_ent *e)
{
	if (e->pins)
		e->pins--;
}

static void mc_dirty(struct mc_ent *e)
{
	e->dirty = 1;
}

/* Drops a freed block without writing it.  A pinned entry stays readable
 * by its holder but is no longer found, nor written back. */
static void mc_forget(struct ext2_fs *fs, uint32_t blk)
{
	struct mc_ent *e = mc_lookup(fs, blk);
	if (e)
		mc_hash_remove(fs, e);
}

/* ---- groups, bitmaps, allocation ----------------------------------------- */

static uint32_t group_first(const struct ext2_fs *fs, uint32_t g)
{
	return fs->first_data_block + g * fs->bpg;
}

static uint32_t group_blocks(const struct ext2_fs *fs, uint32_t g)
{
	uint32_t left = fs->blocks_count - group_first(fs, g);
	return left < fs->bpg ? left : fs->bpg;
}

static uint32_t group_of_block(const struct ext2_fs *fs, uint32_t blk)
{
	return (blk - fs->first_data_block) / fs->bpg;
}

static bool is_power_of(uint32_t n, uint32_t base)
{
	uint64_t p = base;
	while (p < n)
		p *= base;
	return p == n;
}

/* Does group g hold a superblock copy (and group descriptor copies)? */
static bool group_has_super(const struct ext2_fs *fs, uint32_t g)
{
	if (!(fs->sb.feature_ro_compat & RO_COMPAT_SPARSE_SUPER) || g <= 1)
		return true;
	return is_power_of(g, 3) || is_power_of(g, 5) || is_power_of(g, 7);
}

/* Blocks that are never file data: outside the data area, a superblock or
 * descriptor copy, a bitmap, an inode table block. */
static bool is_meta_block(const struct ext2_fs *fs, uint32_t blk)
{
	if (blk < fs->first_data_block || blk >= fs->blocks_count || blk == 0)
		return true;
	uint32_t g = group_of_block(fs, blk);
	const struct ext2_gd *gd = &fs->gd[g];
	if (blk == gd->block_bitmap || blk == gd->inode_bitmap)
		return true;
	if (blk >= gd->inode_table && blk - gd->inode_table < fs->itb)
		return true;
	return group_has_super(fs, g) && blk - group_first(fs, g) < 1 + fs->gdt_blocks + fs->rsv_gdt;
}

/* A block pointer found in an inode or indirect block. */
static bool data_block_ok(const struct ext2_fs *fs, uint32_t blk)
{
	return !is_meta_block(fs, blk);
}

/* First clear bit in [from, n), or -1. */
static int64_t find_zero_bit(const uint8_t *map, uint32_t from, uint32_t n)
{
	for (uint32_t i = from; i < n;) {
		if ((i & 7) == 0 && i + 8 <= n && map[i >> 3] == 0xff) {
			i += 8;
			continue;
		}
		if (!(map[i >> 3] & (1u << (i & 7))))
			return i;
		i++;
	}
	return -1;
}

static void count_blocks(struct ext2_fs *fs, uint32_t g, int delta)
{
	fs->gd[g].free_blocks_count = (uint16_t)(fs->gd[g].free_blocks_count + delta);
	fs->sb.free_blocks_count += (uint32_t)delta;
	fs->gdt_dirty = fs->sb_dirty = true;
}

static void count_inodes(struct ext2_fs *fs, uint32_t g, int delta, bool dir)
{
	fs->gd[g].free_inodes_count = (uint16_t)(fs->gd[g].free_inodes_count + delta);
	if (dir)
		fs->gd[g].used_dirs_count = (uint16_t)(fs->gd[g].used_dirs_count - delta);
	fs->sb.free_inodes_count += (uint32_t)delta;
	fs->gdt_dirty = fs->sb_dirty = true;
}

/* Takes a free block of group g at or after bit `from`. */
static int group_take_block(struct ext2_fs *fs, uint32_t g, uint32_t from, uint32_t *out)
{
	struct mc_ent *e;
	int r = mc_get(fs, fs->gd[g].block_bitmap, false, &e);
	if (r)
		return r;
	uint32_t n = group_blocks(fs, g);
	for (int64_t bit = from; (bit = find_zero_bit(e->data, (uint32_t)bit, n)) >= 0; bit++) {
		uint32_t blk = group_first(fs, g) + (uint32_t)bit;
		if (is_meta_block(fs, blk))
			continue; /* a bitmap that disagrees with the layout: leave it */
		e->data[bit >> 3] |= (uint8_t)(1u << (bit & 7));
		mc_dirty(e);
		mc_put(e);
		count_blocks(fs, g, -1);
		*out = blk;
		return 0;
	}
	mc_put(e);
	return -ENOSPC;
}

/* Allocates one block, the first free one at or after goal. */
static int block_alloc(struct ext2_fs *fs, uint32_t goal, uint32_t *out)
{
	if (fs->sb.free_blocks_count == 0)
		return -ENOSPC;
	if (goal < fs->first_data_block || goal >= fs->blocks_count)
		goal = fs->first_data_block;
	uint32_t g0 = group_of_block(fs, goal);
	for (uint32_t i = 0; i <= fs->ngroups; i++) {
		uint32_t g = (g0 + i) % fs->ngroups;
		if (fs->gd[g].free_blocks_count == 0)
			continue;
		int r = group_take_block(fs, g, i == 0 ? goal - group_first(fs, g) : 0, out);
		if (r != -ENOSPC)
			return r;
	}
	return -ENOSPC;
}

static int block_free(struct ext2_fs *fs, uint32_t blk)
{
	if (is_meta_block(fs, blk))
		return corrupt(fs);
	uint32_t g = group_of_block(fs, blk), bit = blk - group_first(fs, g);
	struct mc_ent *e;
	int r = mc_get(fs, fs->gd[g].block_bitmap, false, &e);
	if (r)
		return r;
	uint8_t mask = (uint8_t)(1u << (bit & 7));
	if (!(e->data[bit >> 3] & mask)) {
		mc_put(e);
		return corrupt(fs); /* freed twice: the block map is corrupt */
	}
	e->data[bit >> 3] &= (uint8_t)~mask;
	mc_dirty(e);
	mc_put(e);
	if (fs->gd[g].free_blocks_count < group_blocks(fs, g))
		count_blocks(fs, g, +1);
	mc_forget(fs, blk);
	return 0;
}

/* Group for a new directory: one with an above-average share of free
 * inodes and the most free blocks; spreads directories over the disk. */
static uint32_t dir_group(const struct ext2_fs *fs, uint32_t parent_group)
{
	uint32_t avg = fs->sb.free_inodes_count / fs->ngroups, best = parent_group;
	uint32_t best_free = 0;
	for (uint32_t i = 0; i < fs->ngroups; i++) {
		uint32_t g = (parent_group + i) % fs->ngroups;
		const struct ext2_gd *gd = &fs->gd[g];
		if (gd->free_inodes_count && gd->free_inodes_count >= avg && gd->free_blocks_count > best_free) {
			best = g;
			best_free = gd->free_blocks_count;
		}
	}
	return best;
}

/* Whether every inode sharing an inode table block with bit `bit` of
 * group bitmap map is free: the block's contents need not be read. */
static bool itable_block_free(const struct ext2_fs *fs, const uint8_t *map, uint32_t bit)
{
	uint32_t per = fs->bs / fs->inode_size, first = bit - bit % per;
	for (uint32_t i = first; i < first + per && i < fs->ipg; i++)
		if (i != bit && map[i >> 3] & (1u << (i & 7)))
			return false;
	return true;
}

/* Takes a free inode of group g; *fresh: nothing else in its block is used. */
static int group_take_inode(struct ext2_fs *fs, uint32_t g, bool dir, uint32_t *out, bool *fresh)
{
	struct mc_ent *e;
	int r = mc_get(fs, fs->gd[g].inode_bitmap, false, &e);
	if (r)
		return r;
	for (int64_t bit = 0; (bit = find_zero_bit(e->data, (uint32_t)bit, fs->ipg)) >= 0; bit++) {
		uint32_t ino = g * fs->ipg + (uint32_t)bit + 1;
		if (ino < fs->first_ino)
			continue;
		*fresh = itable_block_free(fs, e->data, (uint32_t)bit);
		e->data[bit >> 3] |= (uint8_t)(1u << (bit & 7));
		mc_dirty(e);
		mc_put(e);
		count_inodes(fs, g, -1, dir);
		*out = ino;
		return 0;
	}
	mc_put(e);
	return -ENOSPC;
}

static int inode_alloc(struct ext2_fs *fs, uint32_t parent, bool dir, uint32_t *out, bool *fresh)
{
	if (fs->sb.free_inodes_count == 0)
		return -ENOSPC;
	uint32_t g0 = (parent - 1) / fs->ipg;
	if (dir)
		g0 = dir_group(fs, g0);
	for (uint32_t i = 0; i < fs->ngroups; i++) {
		uint32_t g = (g0 + i) % fs->ngroups;
		if (fs->gd[g].free_inodes_count == 0)
			continue;
		int r = group_take_inode(fs, g, dir, out, fresh);
		if (r != -ENOSPC)
			return r;
	}
	return -ENOSPC;
}

static int inode_bit_free(struct ext2_fs *fs, uint32_t ino, bool dir)
{
	uint32_t g = (ino - 1) / fs->ipg, bit = (ino - 1) % fs->ipg;
	struct mc_ent *e;
	int r = mc_get(fs, fs->gd[g].inode_bitmap, false, &e);
	if (r)
		return r;
	uint8_t mask = (uint8_t)(1u << (bit & 7));
	if (!(e->data[bit >> 3] & mask)) {
		mc_put(e);
		return corrupt(fs);
	}
	e->data[bit >> 3] &= (uint8_t)~mask;
	mc_dirty(e);
	mc_put(e);
	if (fs->gd[g].free_inodes_count < fs->ipg)
		count_inodes(fs, g, +1, dir && fs->gd[g].used_dirs_count > 0);
	return 0;
}

/* ---- inode I/O ----------------------------------------------------------- */

static void inode_loc(const struct ext2_fs *fs, uint32_t ino, uint32_t *blk, uint32_t *off)
{
	uint32_t g = (ino - 1) / fs->ipg, idx = (ino - 1) % fs->ipg;
	uint64_t byte = (uint64_t)idx * fs->inode_size;
	*blk = fs->gd[g].inode_table + (uint32_t)(byte >> fs->log_bs);
	*off = (uint32_t)(byte & (fs->bs - 1));
}

static int inode_read(struct ext2_fs *fs, uint32_t ino, struct ino *ip)
{
	if (ino == 0 || ino > fs->inodes_count)
		return -EINVAL;
	uint32_t blk, off;
	inode_loc(fs, ino, &blk, &off);
	struct mc_ent *e;
	int r = mc_get(fs, blk, false, &e);
	if (r)
		return r;
	memcpy(&ip->d, e->data + off, sizeof ip->d);
	mc_put(e);
	ip->num = ino;
	return 0;
}

static int inode_write(struct ext2_fs *fs, const struct ino *ip)
{
	uint32_t blk, off;
	inode_loc(fs, ip->num, &blk, &off);
	struct mc_ent *e;
	int r = mc_get(fs, blk, false, &e);
	if (r)
		return r;
	memcpy(e->data + off, &ip->d, sizeof ip->d);
	/* Marks the inode as written during the run, for the host's write-back
	 * (on disk only: the in-memory copy is what the program sees). */
	uint32_t touched = HUSK_EXT2_TOUCHED;
	memcpy(e->data + off + offsetof(struct ext2_inode, generation), &touched, sizeof touched);
	mc_dirty(e);
	mc_put(e);
	return 0;
}

/* Zeroes a whole on-disk inode record (including the part past 128 bytes);
 * fresh: the whole block, which holds no inode in use (not read). */
static int inode_clear(struct ext2_fs *fs, uint32_t ino, bool fresh)
{
	uint32_t blk, off;
	inode_loc(fs, ino, &blk, &off);
	struct mc_ent *e;
	int r = mc_get(fs, blk, fresh, &e);
	if (r)
		return r;
	memset(e->data + off, 0, fs->inode_size);
	mc_dirty(e);
	mc_put(e);
	return 0;
}

/* Checks what the rest of the code relies on in an inode in use. */
static int inode_check(struct ext2_fs *fs, const struct ino *ip)
{
	if (ip->d.flags & (EXTENTS_FL | INLINE_DATA_FL))
		return corrupt(fs);
	uint64_t size = i_size(ip);
	switch (mode_type(ip->d.mode)) {
	case EXT2_S_IFREG:
		return size > fs->max_size ? corrupt(fs) : 0;
	case EXT2_S_IFDIR: /* every directory block is allocated: bounds the scans */
		if (size & (fs->bs - 1) || size > (uint64_t)ip->d.blocks * 512 || size >> fs->log_bs > fs->blocks_count)
			return corrupt(fs);
		return 0;
	case EXT2_S_IFLNK:
		if (is_fast_symlink(fs, ip))
			return size > FAST_SYMLINK_MAX ? corrupt(fs) : 0;
		return size >= fs->bs ? corrupt(fs) : 0;
	case EXT2_S_IFCHR: case EXT2_S_IFBLK: case EXT2_S_IFIFO: case EXT2_S_IFSOCK:
		return 0;
	}
	return corrupt(fs);
}

/* An inode named by the caller or a directory entry: must be in use. */
static int inode_get(struct ext2_fs *fs, uint32_t ino, struct ino *ip)
{
	int r = inode_read(fs, ino, ip);
	if (r)
		return r;
	if (ip->d.links == 0)
		return -ENOENT;
	return inode_check(fs, ip);
}

static int dir_get(struct ext2_fs *fs, uint32_t ino, struct ino *ip)
{
	int r = inode_get(fs, ino, ip);
	return r ? r : is_dir(ip) ? 0 : -ENOTDIR;
}

static void touch_times(struct ext2_fs *fs, struct ino *ip)
{
	ip->d.mtime = ip->d.ctime = now32(fs);
}

/* ---- block map ------------------------------------------------------------ */

/* Where logical block lblk sits in the map: idx[0] is the i_block slot,
 * idx[1..depth] the entries in the indirect blocks.  Returns the depth
 * (0 direct .. 3 triple indirect) or -EFBIG. */
static int bmap_path(const struct ext2_fs *fs, uint64_t lblk, uint32_t idx[4])
{
	uint64_t ppb = fs->ppb, m = ppb - 1;
	uint32_t lp = fs->log_ppb;
	if (lblk < NDIR) {
		idx[0] = (uint32_t)lblk;
		return 0;
	}
	lblk -= NDIR;
	if (lblk < ppb) {
		idx[0] = NDIR, idx[1] = (uint32_t)lblk;
		return 1;
	}
	lblk -= ppb;
	if (lblk < ppb << lp) {
		idx[0] = NDIR + 1, idx[1] = (uint32_t)(lblk >> lp), idx[2] = (uint32_t)(lblk & m);
		return 2;
	}
	lblk -= ppb << lp;
	if (lblk < ppb << 2 * lp) {
		idx[0] = NDIR + 2, idx[1] = (uint32_t)(lblk >> 2 * lp);
		idx[2] = (uint32_t)((lblk >> lp) & m), idx[3] = (uint32_t)(lblk & m);
		return 3;
	}
	return -EFBIG;
}

/* Follows the path as far as it is mapped.  *level: the first level whose
 * pointer is 0 (depth + 1 when the block is mapped); *blk: the last
 * non-zero pointer (the data block when mapped). */
static int bmap_walk(struct ext2_fs *fs, const struct ino *ip, const uint32_t idx[4], int depth,
		     int *level, uint32_t *blk)
{
	uint32_t b = ip->d.block[idx[0]];
	*blk = 0;
	for (int lv = 0;; lv++) {
		if (b == 0) {
			*level = lv;
			return 0;
		}
		if (!data_block_ok(fs, b))
			return corrupt(fs);
		*blk = b;
		if (lv == depth) {
			*level = depth + 1;
			return 0;
		}
		struct mc_ent *e;
		int r = mc_get(fs, b, false, &e);
		if (r)
			return r;
		b = ld32(e->data + 4 * idx[lv + 1]);
		mc_put(e);
	}
}

/* Maps logical block lblk: *pblk, or 0 for a hole.  For a hole, *hole (if
 * given) is how many blocks from lblk on are certainly holes too. */
static int bmap_get(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t *pblk,
		    uint64_t *hole)
{
	uint32_t idx[4], b;
	int depth = bmap_path(fs, lblk, idx), level;
	if (depth < 0)
		return depth;
	int r = bmap_walk(fs, ip, idx, depth, &level, &b);
	if (r)
		return r;
	*pblk = level > depth ? b : 0;
	if (hole && level <= depth) {
		/* the rest of the missing subtree: entries after ours at each level below */
		uint64_t n = 1, mult = 1;
		for (int k = depth; k > level; k--, mult <<= fs->log_ppb)
			n += (uint64_t)(fs->ppb - 1 - idx[k]) * mult;
		*hole = n;
	}
	return 0;
}

/* Allocates a block for inode ip (an indirect block when meta: zeroed in
 * the cache) and charges it to i_blocks. */
static int inode_new_block(struct ext2_fs *fs, struct ino *ip, uint32_t goal, bool meta, uint32_t *out)
{
	int r = block_alloc(fs, goal, out);
	if (r)
		return r;
	if (meta) {
		struct mc_ent *e;
		if ((r = mc_get(fs, *out, true, &e))) {
			block_free(fs, *out);
			return r;
		}
		mc_put(e);
	}
	ip->d.blocks += fs->spb;
	return 0;
}

static int inode_free_block(struct ext2_fs *fs, struct ino *ip, uint32_t blk)
{
	int r = block_free(fs, blk);
	if (r)
		return r;
	ip->d.blocks = ip->d.blocks >= fs->spb ? ip->d.blocks - fs->spb : 0;
	return 0;
}

/* Maps lblk, allocating the data block and any missing indirect blocks
 * near goal.  All-or-nothing on a consistent disk: fails with -ENOSPC
 * before allocating anything if the free count cannot cover the path.
 * *fresh: the data block is new (its contents are stale).  The caller
 * writes the inode. */
static int bmap_alloc(struct ext2_fs *fs, struct ino *ip, uint64_t lblk, uint32_t goal, uint32_t *pblk,
		      bool *fresh)
{
	uint32_t idx[4], b;
	int depth = bmap_path(fs, lblk, idx), level;
	if (depth < 0)
		return depth;
	int r = bmap_walk(fs, ip, idx, depth, &level, &b);
	if (r)
		return r;
	*fresh = level <= depth;
	if (!*fresh) {
		*pblk = b;
		return 0;
	}
	if (fs->sb.free_blocks_count < (uint32_t)(depth + 1 - level))
		return -ENOSPC;
	if (ip->d.block[idx[0]] == 0) {
		if ((r = inode_new_block(fs, ip, goal, depth > 0, &b)))
			return r;
		ip->d.block[idx[0]] = b;
		goal = b + 1;
	}
	b = ip->d.block[idx[0]];
	for (int lv = 1; lv <= depth; lv++) {
		struct mc_ent *e;
		if ((r = mc_get(fs, b, false, &e)))
			return r;
		uint32_t nb = ld32(e->data + 4 * idx[lv]);
		if (nb == 0) {
			if ((r = inode_new_block(fs, ip, goal, lv < depth, &nb))) {
				mc_put(e);
				return r;
			}
			st32(e->data + 4 * idx[lv], nb);
			mc_dirty(e);
			goal = nb + 1;
		}
		mc_put(e);
		if (!data_block_ok(fs, nb))
			return corrupt(fs);
		b = nb;
	}
	*pblk = b;
	return 0;
}

/* Where to put a new block at lblk: after the block before it, else in
 * the inode's group. */
static uint32_t block_goal(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk)
{
	uint32_t prev = 0;
	if (lblk > 0 && bmap_get(fs, ip, lblk - 1, &prev, NULL) == 0 && prev)
		return prev + 1;
	return group_first(fs, (ip->num - 1) / fs->ipg);
}

/* ---- truncation ----------------------------------------------------------- */

/* Frees what the subtree under *slot maps at relative index >= from
 * (depth 0: *slot is a data block).  Clears *slot when nothing is left. */
static int trunc_tree(struct ext2_fs *fs, struct ino *ip, uint32_t *slot, int depth, uint64_t from)
{
	uint32_t b = *slot;
	if (b == 0)
		return 0;
	if (!data_block_ok(fs, b))
		return corrupt(fs);
	if (depth > 0) {
		uint64_t span = 1ull << (fs->log_ppb * (uint32_t)(depth - 1));
		struct mc_ent *e;
		int r = mc_get(fs, b, false, &e);
		if (r)
			return r;
		bool empty = true;
		for (uint32_t i = 0; i < fs->ppb && !r; i++) {
			uint64_t first = (uint64_t)i * span;
			uint32_t v = ld32(e->data + 4 * i);
			if (v && first + span > from) {
				r = trunc_tree(fs, ip, &v, depth - 1, from > first ? from - first : 0);
				if (v == 0) {
					st32(e->data + 4 * i, 0);
					mc_dirty(e);
				}
			}
			empty = empty && v == 0;
		}
		mc_put(e);
		if (r || !empty)
			return r;
	} else if (from > 0) {
		return 0;
	}
	*slot = 0;
	return inode_free_block(fs, ip, b);
}

/* Frees every block at logical index >= keep.  The caller writes the inode. */
static int trunc_blocks(struct ext2_fs *fs, struct ino *ip, uint64_t keep)
{
	int r = 0;
	for (uint32_t i = 0; i < NDIR && !r; i++)
		if (i >= keep)
			r = trunc_tree(fs, ip, &ip->d.block[i], 0, 0);
	uint64_t base = NDIR, span = fs->ppb;
	for (int depth = 1; depth <= 3 && !r; depth++) {
		uint64_t from = keep > base ? keep - base : 0;
		if (from < span)
			r = trunc_tree(fs, ip, &ip->d.block[NDIR + depth - 1], depth, from);
		base += span;
		span <<= fs->log_ppb;
	}
	return r;
}

/* Zeroes the bytes of the last block past size, so that growing the file
 * later reads zeros there. */
static int zero_tail(struct ext2_fs *fs, const struct ino *ip, uint64_t size)
{
	uint32_t off = (uint32_t)(size & (fs->bs - 1)), pblk;
	if (off == 0)
		return 0;
	int r = bmap_get(fs, ip, size >> fs->log_bs, &pblk, NULL);
	if (r || pblk == 0)
		return r;
	struct mc_ent *e;
	if ((r = mc_get(fs, pblk, false, &e)))
		return r;
	memset(e->data + off, 0, fs->bs - off);
	e->file_data = 1;
	mc_dirty(e);
	mc_put(e);
	return 0;
}

/* Drops the inode's reference to its extended attribute block. */
static int xattr_release(struct ext2_fs *fs, struct ino *ip)
{
	uint32_t b = ip->d.file_acl;
	ip->d.file_acl = 0;
	if (!data_block_ok(fs, b))
		return corrupt(fs);
	struct mc_ent *e;
	int r = mc_get(fs, b, false, &e);
	if (r)
		return r;
	uint32_t refs = ld32(e->data + 4);
	if (ld32(e->data) != XATTR_MAGIC) {
		mc_put(e);
		return corrupt(fs);
	}
	if (refs > 1) {
		st32(e->data + 4, refs - 1);
		mc_dirty(e);
		mc_put(e);
		return 0;
	}
	mc_put(e);
	return inode_free_block(fs, ip, b);
}

static void dx_drop(struct ext2_fs *fs, uint32_t ino);

/* Frees an inode no longer linked anywhere, with its blocks. */
static int inode_release(struct ext2_fs *fs, struct ino *ip)
{
	int r = 0, r2;
	ra_drop(fs, ip->num);
	dx_drop(fs, ip->num);
	if (has_block_map(fs, ip)) {
		r = trunc_blocks(fs, ip, 0);
		i_size_set(fs, ip, 0);
	}
	if (ip->d.file_acl && (r2 = xattr_release(fs, ip)) && !r)
		r = r2;
	uint32_t now = now32(fs);
	ip->d.links = 0;
	ip->d.dtime = now ? now : 1; /* e2fsck: a deleted inode has a dtime */
	if ((r2 = inode_write(fs, ip)) && !r)
		r = r2;
	if ((r2 = inode_bit_free(fs, ip->num, is_dir(ip))) && !r)
		r = r2;
	return r;
}

/* ---- directories ------------------------------------------------------------ */

/* One entry met by dir_scan, inside its (pinned) block. */
struct dpos {
	struct mc_ent *e;
	uint64_t lblk;
	uint32_t off, prev; /* prev: offset of the previous entry, or NO_PREV */
	struct ext2_dirhdr h;
	const char *name;
};
#define NO_PREV UINT32_MAX

/* Returns 0 to go on, 1 to stop the scan, or -errno.  A visitor that
 * changes the block stops. */
typedef int (*dir_visit)(struct ext2_fs *fs, struct dpos *p, void *arg);

static struct ext2_dirhdr dirhdr_at(const uint8_t *blk, uint32_t off)
{
	struct ext2_dirhdr h;
	memcpy(&h, blk + off, sizeof h);
	return h;
}

static void dirhdr_put(uint8_t *blk, uint32_t off, const struct ext2_dirhdr *h)
{
	memcpy(blk + off, h, sizeof *h);
}

/* A directory block is a chain of records exactly covering the block. */
static int dirblock_check(struct ext2_fs *fs, const uint8_t *blk)
{
	for (uint32_t off = 0; off < fs->bs;) {
		if (fs->bs - off < DIRHDR)
			return corrupt(fs);
		struct ext2_dirhdr h = dirhdr_at(blk, off);
		if (h.rec_len < DIRHDR || h.rec_len & 3 || h.rec_len > fs->bs - off)
			return corrupt(fs);
		if (h.inode && (h.name_len == 0 || DIRHDR + h.name_len > h.rec_len || h.inode > fs->inodes_count))
			return corrupt(fs);
		off += h.rec_len;
	}
	return 0;
}

static int dir_scan_block(struct ext2_fs *fs, struct dpos *p, uint32_t skip, dir_visit fn, void *arg)
{
	int r = dirblock_check(fs, p->e->data);
	p->prev = NO_PREV;
	for (p->off = 0; !r && p->off < fs->bs; p->prev = p->off, p->off += p->h.rec_len) {
		p->h = dirhdr_at(p->e->data, p->off);
		p->name = (const char *)p->e->data + p->off + DIRHDR;
		if (p->off >= skip)
			r = fn(fs, p, arg);
	}
	return r;
}

/* Calls fn on each record from byte position start on.  Returns 1 when a
 * visitor stopped the scan, 0 at the end, or -errno. */
static int dir_scan(struct ext2_fs *fs, const struct ino *dir, uint64_t start, dir_visit fn, void *arg)
{
	uint64_t nblocks = i_size(dir) >> fs->log_bs;
	for (uint64_t lb = start >> fs->log_bs; lb < nblocks; lb++) {
		uint32_t pblk;
		uint64_t hole;
		int r = bmap_get(fs, dir, lb, &pblk, &hole);
		if (r)
			return r;
		if (pblk == 0) { /* not valid ext2, but harmless to skip */
			lb += hole - 1;
			continue;
		}
		struct dpos p = { .lblk = lb };
		if ((r = mc_get(fs, pblk, false, &p.e)))
			return r;
		uint32_t skip = lb == start >> fs->log_bs ? (uint32_t)(start & (fs->bs - 1)) : 0;
		r = dir_scan_block(fs, &p, skip, fn, arg);
		mc_put(p.e);
		if (r)
			return r;
	}
	return 0;
}

struct dname {
	const char *name;
	size_t len;
	uint32_t ino; /* found / to store */
	uint8_t ft;
};

static bool dpos_matches(const struct dpos *p, const struct dname *a)
{
	return p->h.inode && p->h.name_len == a->len && memcmp(p->name, a->name, a->len) == 0;
}

/* Writes a new record at off in blk, rec_len bytes long. */
static void dirent_put(uint8_t *blk, uint32_t off, uint32_t rec_len, const struct dname *a)
{
	struct ext2_dirhdr h = { a->ino, (uint16_t)rec_len, (uint8_t)a->len, a->ft };
	dirhdr_put(blk, off, &h);
	memcpy(blk + off + DIRHDR, a->name, a->len);
}

#define NO_ROOM UINT32_MAX

/* Puts the entry into record h at off if it has room, splitting it when it
 * is in use: the new record's offset, or NO_ROOM. */
static uint32_t rec_add(uint8_t *blk, uint32_t off, struct ext2_dirhdr h, const struct dname *a)
{
	uint32_t need = REC_LEN(a->len), used = h.inode ? REC_LEN(h.name_len) : 0, len = h.rec_len;
	if (len < used + need)
		return NO_ROOM;
	if (used) { /* the existing entry keeps what it uses */
		h.rec_len = (uint16_t)used;
		dirhdr_put(blk, off, &h);
	}
	dirent_put(blk, off + used, len - used, a);
	return off + used;
}

/* Removes the record at off; prev: the one before it, or NO_PREV. */
static void rec_remove(uint8_t *blk, uint32_t off, uint32_t prev)
{
	struct ext2_dirhdr h = dirhdr_at(blk, off);
	if (prev != NO_PREV) { /* the previous record absorbs this one */
		struct ext2_dirhdr ph = dirhdr_at(blk, prev);
		ph.rec_len = (uint16_t)(ph.rec_len + h.rec_len);
		dirhdr_put(blk, prev, &ph);
	} else {
		h.inode = 0;
		dirhdr_put(blk, off, &h);
	}
}

/* Points the record at off to a->ino. */
static void rec_set(uint8_t *blk, uint32_t off, const struct dname *a)
{
	struct ext2_dirhdr h = dirhdr_at(blk, off);
	h.inode = a->ino;
	h.file_type = a->ft;
	dirhdr_put(blk, off, &h);
}

/* The longest record that fits in a (checked) block. */
static uint32_t dirblock_room(const struct ext2_fs *fs, const uint8_t *blk)
{
	uint32_t best = 0;
	for (uint32_t off = 0; off < fs->bs;) {
		struct ext2_dirhdr h = dirhdr_at(blk, off);
		uint32_t used = h.inode ? REC_LEN(h.name_len) : 0;
		if (h.rec_len >= used && h.rec_len - used > best)
			best = h.rec_len - used;
		off += h.rec_len;
	}
	return best;
}

/* Checks a block like dirblock_check and finds the record at off: 1 (the
 * one before it in *prev), 0 when no record starts there, or -EIO. */
static int dirblock_locate(struct ext2_fs *fs, const uint8_t *blk, uint32_t off, uint32_t *prev)
{
	int r = dirblock_check(fs, blk);
	if (r)
		return r;
	*prev = NO_PREV;
	for (uint32_t o = 0; o < fs->bs && o <= off; o += dirhdr_at(blk, o).rec_len) {
		if (o == off)
			return 1;
		*prev = o;
	}
	return 0;
}

/* ---- directory index --------------------------------------------------------
 * A directory of DX_MIN_BLOCKS blocks or more gets, when first used, an
 * index built from one pass over its blocks: a hash table from a 32-bit
 * hash of each name to the position of its record (the record itself is
 * compared, so equal hashes only cost a look at a block; a name that is
 * not there costs nothing), and per block its address and the longest
 * record that fits in it, so that a new name goes where a scan would have
 * put it (the first fit) without the scan.  Every change to an indexed
 * directory updates the index; a freed directory's index is dropped.
 *
 * At most DX_DIRS directories of up to DX_MAX_BLOCKS blocks are indexed,
 * with DX_MAX_NAMES names and DX_MAX_BYTES of memory in all (11-22 bytes a
 * name, 6 a block); the least recently used index makes way.  A directory
 * beyond the bounds, or whose index cannot be allocated or built (a corrupt
 * block: the scan then reports it as it always did), is scanned.  A block
 * that fails its check later, or an index that disagrees with a block,
 * drops the index: -EIO. */

static uint32_t dx_hash(const struct ext2_fs *fs, const char *name, size_t len)
{
	uint64_t h = fs->dx_seed ^ ((uint64_t)len * 0x9e3779b97f4a7c15ull), w;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, name + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	w = 0;
	for (uint32_t shift = 0; i < len; i++, shift += 8)
		w |= (uint64_t)(uint8_t)name[i] << shift;
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h ^ h >> 32);
}

/* The byte position of a record, as a slot stores it. */
static uint32_t dx_pos(const struct ext2_fs *fs, uint32_t lb, uint32_t off)
{
	return (uint32_t)((((uint64_t)lb << fs->log_bs) + off) >> 2) + 1;
}

static size_t dx_arrays_bytes(uint32_t cap)
{
	return (size_t)cap * (sizeof(uint32_t) + sizeof(uint16_t)) + (size_t)(cap / DX_CHUNK) * sizeof(uint16_t);
}

static size_t dx_table_bytes(uint32_t slots)
{
	return (size_t)slots * sizeof(struct dx_slot);
}

static void dx_release(struct ext2_fs *fs, void *p, size_t bytes)
{
	fs_free(p, bytes);
	fs->dx_bytes -= bytes;
}

static void dx_free(struct ext2_fs *fs, struct dx_dir *d)
{
	if (d->tab)
		dx_release(fs, d->tab, dx_table_bytes(d->mask + 1));
	if (d->pblk)
		dx_release(fs, d->pblk, dx_arrays_bytes(d->cap));
	fs->dx_names -= d->names;
	*d = (struct dx_dir){ 0 };
}

/* Drops the least recently used index other than keep: false if none. */
static bool dx_evict_other(struct ext2_fs *fs, const struct dx_dir *keep)
{
	struct dx_dir *v = NULL;
	for (uint32_t i = 0; i < DX_DIRS; i++) {
		struct dx_dir *o = &fs->dx[i];
		if (o->ino && o != keep && (!v || (int32_t)(o->last - v->last) < 0))
			v = o;
	}
	if (v)
		dx_free(fs, v);
	return v != NULL;
}

/* Memory for index keep, within DX_MAX_BYTES for all of them (others are
 * dropped to make room); zeroed. */
static void *dx_alloc(struct ext2_fs *fs, const struct dx_dir *keep, size_t bytes)
{
	while (fs->dx_bytes + bytes > DX_MAX_BYTES)
		if (!dx_evict_other(fs, keep))
			return NULL;
	void *p = fs_alloc(bytes);
	if (p)
		fs->dx_bytes += bytes;
	return p;
}

static struct dx_dir *dx_find(struct ext2_fs *fs, uint32_t ino)
{
	for (uint32_t i = 0; i < DX_DIRS; i++)
		if (ino && fs->dx[i].ino == ino)
			return &fs->dx[i];
	return NULL;
}

/* Forgets what is known about directory ino (it is being freed). */
static void dx_drop(struct ext2_fs *fs, uint32_t ino)
{
	struct dx_dir *d = dx_find(fs, ino);
	if (d)
		dx_free(fs, d);
	if (fs->dx_skip_ino == ino)
		fs->dx_skip_ino = 0;
}

/* The index disagrees with the directory: forget it. */
static int dx_bad(struct ext2_fs *fs, struct dx_dir *d)
{
	dx_free(fs, d);
	return corrupt(fs);
}

/* Makes the per-block arrays hold cap blocks (a multiple of DX_CHUNK). */
static int dx_arrays(struct ext2_fs *fs, struct dx_dir *d, uint32_t cap)
{
	uint8_t *p = dx_alloc(fs, d, dx_arrays_bytes(cap));
	if (!p)
		return -ENOMEM;
	uint32_t *pblk = (uint32_t *)p;
	uint16_t *room = (uint16_t *)(p + (size_t)cap * sizeof *pblk), *chunk = room + cap;
	if (d->pblk) {
		memcpy(pblk, d->pblk, (size_t)d->nblocks * sizeof *pblk);
		memcpy(room, d->room, (size_t)d->nblocks * sizeof *room);
		memcpy(chunk, d->chunk_room, (size_t)(d->cap / DX_CHUNK) * sizeof *chunk);
		dx_release(fs, d->pblk, dx_arrays_bytes(d->cap));
	}
	d->pblk = pblk;
	d->room = room;
	d->chunk_room = chunk;
	d->cap = cap;
	return 0;
}

static uint32_t dx_round_cap(uint64_t n)
{
	n = (n + DX_CHUNK - 1) / DX_CHUNK * DX_CHUNK;
	return n < DX_MAX_BLOCKS ? (uint32_t)n : DX_MAX_BLOCKS;
}

/* Sets the room of block lb (< nblocks) and its chunk's summary. */
static void dx_set_room(struct dx_dir *d, uint32_t lb, uint32_t room)
{
	uint32_t c = lb / DX_CHUNK, end = c * DX_CHUNK + DX_CHUNK;
	uint16_t best = 0;
	d->room[lb] = (uint16_t)room;
	if (end > d->nblocks)
		end = d->nblocks;
	for (uint32_t b = c * DX_CHUNK; b < end; b++)
		if (d->room[b] > best)
			best = d->room[b];
	d->chunk_room[c] = best;
}

/* The first block with room for a record of need bytes, or -1. */
static int64_t dx_room_find(const struct dx_dir *d, uint32_t need)
{
	for (uint32_t c = 0; c * DX_CHUNK < d->nblocks; c++) {
		if (d->chunk_room[c] < need)
			continue;
		uint32_t end = c * DX_CHUNK + DX_CHUNK;
		for (uint32_t b = c * DX_CHUNK; b < end && b < d->nblocks; b++)
			if (d->room[b] >= need)
				return b;
	}
	return -1;
}

/* (Re)allocates the table with `slots` slots (a power of two). */
static int dx_table(struct ext2_fs *fs, struct dx_dir *d, uint32_t slots)
{
	struct dx_slot *t = dx_alloc(fs, d, dx_table_bytes(slots));
	if (!t)
		return -ENOMEM;
	uint32_t mask = slots - 1;
	for (uint32_t i = 0; d->tab && i <= d->mask; i++) {
		struct dx_slot s = d->tab[i];
		uint32_t j = s.tag & mask;
		if (!s.pos)
			continue;
		while (t[j].pos)
			j = (j + 1) & mask;
		t[j] = s;
	}
	if (d->tab)
		dx_release(fs, d->tab, dx_table_bytes(d->mask + 1));
	d->tab = t;
	d->mask = mask;
	return 0;
}

static int dx_insert(struct ext2_fs *fs, struct dx_dir *d, uint32_t tag, uint32_t pos)
{
	while (fs->dx_names >= DX_MAX_NAMES)
		if (!dx_evict_other(fs, d))
			return -ENOSPC; /* this one alone is too big */
	if (d->names + 1 > (d->mask + 1) / 4 * 3) { /* at most 3/4 full */
		int r = dx_table(fs, d, 2 * (d->mask + 1));
		if (r)
			return r;
	}
	uint32_t i = tag & d->mask;
	while (d->tab[i].pos)
		i = (i + 1) & d->mask;
	d->tab[i] = (struct dx_slot){ tag, pos };
	d->names++;
	fs->dx_names++;
	return 0;
}

/* Empties slot i, moving later slots of its cluster back (no tombstones). */
static void dx_delete(struct ext2_fs *fs, struct dx_dir *d, uint32_t i)
{
	uint32_t m = d->mask;
	for (uint32_t j = (i + 1) & m; d->tab[j].pos; j = (j + 1) & m) {
		uint32_t home = d->tab[j].tag & m;
		if (((j - home) & m) >= ((j - i) & m)) { /* slot i lies between its home and j */
			d->tab[i] = d->tab[j];
			i = j;
		}
	}
	d->tab[i] = (struct dx_slot){ 0, 0 };
	d->names--;
	fs->dx_names--;
}

/* Indexes the names of block lb, and its room. */
static int dx_index_block(struct ext2_fs *fs, struct dx_dir *d, uint32_t lb, const uint8_t *blk)
{
	int r = dirblock_check(fs, blk);
	for (uint32_t off = 0; !r && off < fs->bs; off += dirhdr_at(blk, off).rec_len) {
		struct ext2_dirhdr h = dirhdr_at(blk, off);
		if (h.inode)
			r = dx_insert(fs, d, dx_hash(fs, (const char *)blk + off + DIRHDR, h.name_len), dx_pos(fs, lb, off));
	}
	if (!r)
		d->room[lb] = (uint16_t)dirblock_room(fs, blk);
	return r;
}

/* Builds the index of dir (n blocks) in the empty d.  Blocks the cache
 * does not hold are read in runs of contiguous blocks, one call each. */
static int dx_build(struct ext2_fs *fs, const struct ino *dir, struct dx_dir *d, uint32_t n)
{
	int r = dx_arrays(fs, d, dx_round_cap(n + n / 8 + 1));
	if (r || (r = dx_table(fs, d, 256))) /* it grows as the names come */
		return r;
	d->ino = dir->num;
	d->nblocks = n;
	for (uint32_t lb = 0; lb < n;) {
		uint32_t pblk;
		uint64_t hole;
		if ((r = bmap_get(fs, dir, lb, &pblk, &hole)))
			return r;
		if (pblk) {
			d->pblk[lb++] = pblk;
			continue;
		}
		for (uint64_t k = 0; k < hole && lb < n; k++) /* not valid ext2, but harmless */
			d->pblk[lb++] = 0;
	}
	for (uint32_t lb = 0; lb < n;) {
		uint32_t p = d->pblk[lb], k = 1;
		struct mc_ent *e = p ? mc_lookup(fs, p) : NULL;
		if (!p || e) {
			if (e && (r = dx_index_block(fs, d, lb, e->data)))
				return r;
			lb++;
			continue;
		}
		while (lb + k < n && k < fs->stage_blocks && d->pblk[lb + k] == p + k && !mc_lookup(fs, p + k))
			k++;
		ra_drop(fs, 0);
		if ((r = dev_read(fs, p, k, fs->stage)))
			return r;
		for (uint32_t i = 0; i < k; i++, lb++)
			if ((r = dx_index_block(fs, d, lb, fs->stage + ((size_t)i << fs->log_bs))))
				return r;
	}
	for (uint32_t lb = 0; lb < n; lb += DX_CHUNK)
		dx_set_room(d, lb, d->room[lb]);
	return 0;
}

/* The index of directory dir, built now if it has none and is worth one;
 * NULL: scan the directory. */
static struct dx_dir *dx_get(struct ext2_fs *fs, const struct ino *dir)
{
	uint64_t size = i_size(dir), n = size >> fs->log_bs;
	struct dx_dir *d = dx_find(fs, dir->num);
	if (d && d->size == size && d->blk0 == dir->d.block[0]) {
		d->last = ++fs->dx_tick;
		return d;
	}
	if (d)
		dx_free(fs, d); /* out of date */
	if (n < DX_MIN_BLOCKS || n > DX_MAX_BLOCKS || size > 0xffffffffu ||
	    (dir->num == fs->dx_skip_ino && size == fs->dx_skip_size))
		return NULL;
	d = &fs->dx[0];
	for (uint32_t i = 0; i < DX_DIRS && d->ino; i++)
		if (!fs->dx[i].ino || (int32_t)(fs->dx[i].last - d->last) < 0)
			d = &fs->dx[i];
	dx_free(fs, d);
	bool was_corrupt = fs->corrupt;
	int r = dx_build(fs, dir, d, (uint32_t)n);
	if (r) {
		dx_free(fs, d);
		fs->corrupt = was_corrupt; /* the scan that follows reports it */
		fs->dx_skip_ino = dir->num;
		fs->dx_skip_size = size;
		return NULL;
	}
	d->size = size;
	d->blk0 = dir->d.block[0];
	d->last = ++fs->dx_tick;
	return d;
}

/* A record found through the index, its block pinned. */
struct dx_hit {
	struct mc_ent *e;
	uint32_t slot, lb, off, prev;
	uint32_t ino;
};

/* Finds name in indexed directory d: 0 (hit->e pinned), -ENOENT, or
 * another error (the index is dropped). */
static int dx_lookup(struct ext2_fs *fs, struct dx_dir *d, const char *name, size_t len, struct dx_hit *hit)
{
	uint32_t tag = dx_hash(fs, name, len);
	for (uint32_t i = tag & d->mask, probes = 0; probes <= d->mask; i = (i + 1) & d->mask, probes++) {
		struct dx_slot s = d->tab[i];
		if (!s.pos)
			return -ENOENT;
		if (s.tag != tag)
			continue;
		uint64_t byte = (uint64_t)(s.pos - 1) << 2;
		uint32_t lb = (uint32_t)(byte >> fs->log_bs), off = (uint32_t)(byte & (fs->bs - 1)), prev = NO_PREV;
		if (lb >= d->nblocks || !d->pblk[lb])
			return dx_bad(fs, d);
		struct mc_ent *e;
		int r = mc_get(fs, d->pblk[lb], false, &e);
		if (r) {
			dx_free(fs, d);
			return r;
		}
		if ((r = dirblock_locate(fs, e->data, off, &prev)) < 0) {
			mc_put(e);
			dx_free(fs, d);
			return r;
		}
		struct ext2_dirhdr h = r ? dirhdr_at(e->data, off) : (struct ext2_dirhdr){ 0 };
		if (h.inode && h.name_len == len && !memcmp(e->data + off + DIRHDR, name, len)) {
			*hit = (struct dx_hit){ e, i, lb, off, prev, h.inode };
			return 0;
		}
		mc_put(e);
		if (!h.inode) /* no record there, or an empty one */
			return dx_bad(fs, d);
	}
	return dx_bad(fs, d); /* no empty slot: cannot happen */
}

static int dir_add_block(struct ext2_fs *fs, struct ino *dir, const struct dname *a, uint32_t *out);

/* Adds a->name to indexed directory d (dir): where a scan would put it. */
static int dx_add(struct ext2_fs *fs, struct dx_dir *d, struct ino *dir, const struct dname *a)
{
	uint32_t need = REC_LEN(a->len), lb, off = NO_ROOM;
	int64_t b = dx_room_find(d, need);
	int r;
	if (b >= 0) {
		struct mc_ent *e;
		lb = (uint32_t)b;
		if ((r = mc_get(fs, d->pblk[lb], false, &e))) {
			dx_free(fs, d);
			return r;
		}
		if (!(r = dirblock_check(fs, e->data)))
			for (uint32_t o = 0; o < fs->bs && off == NO_ROOM;) {
				struct ext2_dirhdr h = dirhdr_at(e->data, o);
				off = rec_add(e->data, o, h, a);
				o += h.rec_len;
			}
		if (!r && off == NO_ROOM)
			r = corrupt(fs); /* the index said it had room */
		if (!r) {
			mc_dirty(e);
			dx_set_room(d, lb, dirblock_room(fs, e->data));
		}
		mc_put(e);
		if (r) {
			dx_free(fs, d);
			return r;
		}
	} else {
		uint32_t pblk;
		lb = d->nblocks;
		off = 0;
		if ((r = dir_add_block(fs, dir, a, &pblk))) {
			dx_free(fs, d);
			return r;
		}
		d->size = i_size(dir);
		if (lb >= d->cap && (lb >= DX_MAX_BLOCKS || dx_arrays(fs, d, dx_round_cap(2ull * d->cap)))) {
			dx_free(fs, d); /* too big now, or no memory: scan from now on */
			return 0;
		}
		d->pblk[lb] = pblk;
		d->nblocks = lb + 1;
		dx_set_room(d, lb, fs->bs - need);
	}
	if (dx_insert(fs, d, dx_hash(fs, a->name, a->len), dx_pos(fs, lb, off)))
		dx_free(fs, d);
	return 0;
}

/* ---- directory operations ------------------------------------------------ */

static int v_find(struct ext2_fs *fs, struct dpos *p, void *arg)
{
	(void)fs;
	struct dname *a = arg;
	if (!dpos_matches(p, a))
		return 0;
	a->ino = p->h.inode;
	return 1;
}

static int dir_find(struct ext2_fs *fs, const struct ino *dir, const char *name, size_t len, uint32_t *ino)
{
	struct dx_dir *d = dx_get(fs, dir);
	if (d) {
		struct dx_hit hit;
		int r = dx_lookup(fs, d, name, len, &hit);
		if (r)
			return r;
		mc_put(hit.e);
		*ino = hit.ino;
		return 0;
	}
	struct dname a = { name, len, 0, 0 };
	int r = dir_scan(fs, dir, 0, v_find, &a);
	if (r < 0)
		return r;
	if (r == 0)
		return -ENOENT;
	*ino = a.ino;
	return 0;
}

/* A directory changed: times, and any htree index is now stale. */
static int dir_touch(struct ext2_fs *fs, struct ino *dir)
{
	touch_times(fs, dir);
	dir->d.flags &= ~(uint32_t)INDEX_FL;
	return inode_write(fs, dir);
}

static int v_add(struct ext2_fs *fs, struct dpos *p, void *arg)
{
	(void)fs;
	if (rec_add(p->e->data, p->off, p->h, arg) == NO_ROOM)
		return 0;
	mc_dirty(p->e);
	return 1;
}

/* Appends a block holding just this entry (at *pblk, if given). */
static int dir_add_block(struct ext2_fs *fs, struct ino *dir, const struct dname *a, uint32_t *out)
{
	uint64_t lb = i_size(dir) >> fs->log_bs;
	uint32_t pblk;
	bool fresh;
	if (i_size(dir) + fs->bs > 0xffffffffu)
		return -EFBIG;
	int r = bmap_alloc(fs, dir, lb, block_goal(fs, dir, lb), &pblk, &fresh);
	if (r)
		return r;
	struct mc_ent *e;
	if ((r = mc_get(fs, pblk, true, &e)))
		return r;
	dirent_put(e->data, 0, fs->bs, a);
	mc_put(e);
	i_size_set(fs, dir, (lb + 1) << fs->log_bs);
	if (out)
		*out = pblk;
	return 0;
}

/* Adds name -> ino (the name must not exist yet); writes the directory. */
static int dir_add(struct ext2_fs *fs, struct ino *dir, const char *name, size_t len, uint32_t ino, uint8_t ft)
{
	struct dname a = { name, len, ino, ft };
	struct dx_dir *d = dx_get(fs, dir);
	int r;
	if (d)
		r = dx_add(fs, d, dir, &a);
	else if ((r = dir_scan(fs, dir, 0, v_add, &a)) == 0)
		r = dir_add_block(fs, dir, &a, NULL);
	if (r < 0) {
		inode_write(fs, dir); /* a block may have been allocated */
		return r;
	}
	return dir_touch(fs, dir);
}

static int v_remove(struct ext2_fs *fs, struct dpos *p, void *arg)
{
	(void)fs;
	if (!dpos_matches(p, arg))
		return 0;
	rec_remove(p->e->data, p->off, p->prev);
	mc_dirty(p->e);
	return 1;
}

static int dir_remove(struct ext2_fs *fs, struct ino *dir, const char *name, size_t len)
{
	struct dname a = { name, len, 0, 0 };
	struct dx_dir *d = dx_get(fs, dir);
	int r;
	if (d) {
		struct dx_hit hit;
		if ((r = dx_lookup(fs, d, name, len, &hit)))
			return r;
		rec_remove(hit.e->data, hit.off, hit.prev);
		mc_dirty(hit.e);
		dx_set_room(d, hit.lb, dirblock_room(fs, hit.e->data));
		mc_put(hit.e);
		dx_delete(fs, d, hit.slot);
	} else {
		if (fs->dx_skip_ino == dir->num)
			fs->dx_skip_ino = 0; /* smaller now: worth another try */
		r = dir_scan(fs, dir, 0, v_remove, &a);
		if (r < 0)
			return r;
		if (r == 0)
			return -ENOENT;
	}
	return dir_touch(fs, dir);
}

static int v_set(struct ext2_fs *fs, struct dpos *p, void *arg)
{
	(void)fs;
	struct dname *a = arg;
	if (!dpos_matches(p, a))
		return 0;
	rec_set(p->e->data, p->off, a);
	mc_dirty(p->e);
	return 1;
}

/* Points the existing entry name at ino; writes the directory. */
static int dir_set(struct ext2_fs *fs, struct ino *dir, const char *name, size_t len, uint32_t ino, uint8_t ft)
{
	struct dname a = { name, len, ino, ft };
	struct dx_dir *d = dx_get(fs, dir);
	int r;
	if (d) {
		struct dx_hit hit;
		if ((r = dx_lookup(fs, d, name, len, &hit)))
			return r == -ENOENT ? corrupt(fs) : r;
		rec_set(hit.e->data, hit.off, &a);
		mc_dirty(hit.e);
		mc_put(hit.e);
	} else {
		r = dir_scan(fs, dir, 0, v_set, &a);
		if (r < 0)
			return r;
		if (r == 0)
			return corrupt(fs);
	}
	return dir_touch(fs, dir);
}

static int v_nonempty(struct ext2_fs *fs, struct dpos *p, void *arg)
{
	(void)fs, (void)arg;
	return p->h.inode && !is_dot_or_dotdot(p->name, p->h.name_len);
}

static int dir_is_empty(struct ext2_fs *fs, const struct ino *dir)
{
	int r = dir_scan(fs, dir, 0, v_nonempty, NULL);
	return r < 0 ? r : r == 0;
}

/* The first block of a new directory: "." and "..". */
static int dir_init(struct ext2_fs *fs, struct ino *dir, uint32_t parent)
{
	uint32_t pblk;
	bool fresh;
	dx_drop(fs, dir->num);
	int r = bmap_alloc(fs, dir, 0, block_goal(fs, dir, 0), &pblk, &fresh);
	if (r)
		return r;
	struct mc_ent *e;
	if ((r = mc_get(fs, pblk, true, &e)))
		return r;
	uint8_t ft = dirent_ft(fs, EXT2_S_IFDIR);
	struct dname dot = { ".", 1, dir->num, ft }, dotdot = { "..", 2, parent, ft };
	dirent_put(e->data, 0, REC_LEN(1), &dot);
	dirent_put(e->data, REC_LEN(1), fs->bs - REC_LEN(1), &dotdot);
	mc_put(e);
	i_size_set(fs, dir, fs->bs);
	return inode_write(fs, dir);
}

/* Fails with -EINVAL if dir is anc or below it (walking up ".."). */
static int check_not_below(struct ext2_fs *fs, uint32_t anc, uint32_t dir)
{
	uint32_t cur = dir;
	for (uint32_t i = 0; i < MAX_DIR_DEPTH; i++) {
		if (cur == anc)
			return -EINVAL;
		if (cur == EXT2_ROOT_INO)
			return 0;
		struct ino ip;
		int r = dir_get(fs, cur, &ip);
		if (r)
			return r == -ENOTDIR ? corrupt(fs) : r;
		r = dir_find(fs, &ip, "..", 2, &cur);
		if (r)
			return r == -ENOENT ? corrupt(fs) : r;
	}
	return corrupt(fs);
}

/* ---- file data -------------------------------------------------------------- */

static uint32_t max_run(const struct ext2_fs *fs)
{
	return MAX_IO_BYTES >> fs->log_bs;
}

/* How many blocks from lblk on map to pblk, pblk + 1, ... (at most max).
 * Each table of pointers is looked up once and scanned, not walked again
 * from the inode for every block (256 walks per MiB read). */
static uint32_t run_length(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t pblk, uint64_t max)
{
	uint32_t n = 1;
	while (n < max) {
		uint32_t idx[4], k, end, table;
		int depth = bmap_path(fs, lblk + n, idx), level;
		struct mc_ent *e = NULL;
		if (depth < 0)
			break;
		if (depth == 0) {
			k = idx[0], end = NDIR;
		} else {
			if (bmap_walk(fs, ip, idx, depth - 1, &level, &table) || level != depth || mc_get(fs, table, false, &e))
				break;
			k = idx[depth], end = fs->ppb;
		}
		for (; k < end && n < max; k++, n++) {
			uint32_t next = e ? ld32(e->data + 4 * k) : ip->d.block[k];
			if (next != pblk + n || !data_block_ok(fs, next))
				break;
		}
		if (e)
			mc_put(e);
		if (k < end)
			break; /* not contiguous, or max */
	}
	return n;
}

/* Blocks [pblk, pblk + n) were just read into buf: the cache's dirty
 * copies (partial data writes not yet on the device) are newer. */
static void mc_overlay(struct ext2_fs *fs, uint32_t pblk, uint32_t n, uint8_t *buf)
{
	for (uint32_t k = 0; k < n; k++) {
		const struct mc_ent *e = mc_lookup(fs, pblk + k);
		if (e && e->dirty)
			memcpy(buf + ((size_t)k << fs->log_bs), e->data, fs->bs);
	}
}

/* Copies what the window holds of [pos, pos + len) from pos on: bytes. */
static size_t ra_copy(struct ext2_fs *fs, const struct ino *ip, uint64_t pos, uint8_t *buf, size_t len)
{
	if (fs->ra_ino != ip->num)
		return 0;
	uint64_t start = fs->ra_lblk << fs->log_bs, end = start + ((uint64_t)fs->ra_blocks << fs->log_bs);
	if (pos < start || pos >= end)
		return 0;
	size_t n = min64(len, end - pos);
	memcpy(buf, fs->stage + fs->ra_off + (pos - start), n);
	return n;
}

/* How many blocks the next device read from lblk of ip should fetch: the
 * window's first size, or twice the last read's if this one continues it. */
static uint32_t ra_want(const struct ext2_fs *fs, const struct ino *ip, uint64_t lblk)
{
	if (fs->seq_ino != ip->num || fs->seq_next != lblk)
		return fs->ra_max;
	uint32_t twice = 2 * fs->seq_blocks;
	return twice < fs->ra_max ? fs->ra_max : twice > fs->stage_blocks ? fs->stage_blocks : twice;
}

static void ra_note(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t n)
{
	fs->seq_ino = ip->num, fs->seq_next = lblk + n, fs->seq_blocks = n;
}

/* The blocks of ip from lblk (mapped at pblk) one device call reads: max
 * at most, up to the end of the file or a discontinuity on disk. */
static uint32_t file_run(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t pblk, uint32_t max)
{
	uint64_t eof = (i_size(ip) + fs->bs - 1) >> fs->log_bs;
	return run_length(fs, ip, lblk, pblk, min64(max, eof > lblk ? eof - lblk : 1));
}

/* Fills the window from lblk (mapped at pblk) with want blocks at most,
 * up to the end of the file or a discontinuity on disk, in one device
 * call. */
static int ra_fill(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t pblk, uint32_t want)
{
	uint32_t n = file_run(fs, ip, lblk, pblk, want);
	fs->ra_ino = 0; /* run_length may have reused the stage */
	int r = dev_read(fs, pblk, n, fs->stage);
	if (r)
		return r;
	mc_overlay(fs, pblk, n, fs->stage);
	fs->ra_ino = ip->num;
	fs->ra_lblk = lblk;
	fs->ra_blocks = n;
	fs->ra_off = 0;
	ra_note(fs, ip, lblk, n);
	return 0;
}

/* A read-only disk's window is of disk blocks, not of one file's: a tree
 * read file by file is laid out in that order (copyin.c takes blocks in
 * order), so one device call can serve many small files (rp_fill): 100,000
 * files of 4 KiB, one VM exit each before (~40 us on kvm_pvm), read in 3.5 s
 * instead of 7.1.  No write can make it stale: the disk is never written. */
static int rp_holds(const struct ext2_fs *fs, uint32_t pblk)
{
	return fs->rp_blocks && pblk >= fs->rp_blk && pblk - fs->rp_blk < fs->rp_blocks;
}

static size_t rp_copy(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t pblk, uint64_t pos,
		      uint8_t *buf, size_t len)
{
	if (!rp_holds(fs, pblk))
		return 0;
	uint32_t run = run_length(fs, ip, lblk, pblk, fs->rp_blk + fs->rp_blocks - pblk);
	if (!rp_holds(fs, pblk))
		return 0; /* run_length took the stage */
	/* the file's run in the window is its read-ahead window now: its next
	 * reads there are copies, with no block lookup */
	fs->ra_ino = ip->num, fs->ra_lblk = lblk, fs->ra_blocks = run;
	fs->ra_off = (pblk - fs->rp_blk) << fs->log_bs;
	return ra_copy(fs, ip, pos, buf, len);
}

/* Fills the window from block pblk (lblk of ip): with what this file needs
 * from there (up to the first size), or, when the read continues the last
 * window on the disk (files read in the order they were laid out), twice
 * that window, up to the stage and never past the disk.  So files read in
 * any other order cost what they did, and files read in order ever fewer
 * device calls. */
static int rp_fill(struct ext2_fs *fs, const struct ino *ip, uint64_t lblk, uint32_t pblk)
{
	uint32_t n;
	if (fs->rp_blocks && pblk == fs->rp_blk + fs->rp_blocks) {
		n = 2 * fs->rp_blocks < fs->stage_blocks ? 2 * fs->rp_blocks : fs->stage_blocks;
	} else {
		n = file_run(fs, ip, lblk, pblk, fs->ra_max);
	}
	if (n > fs->blocks_count - pblk)
		n = fs->blocks_count - pblk;
	fs->ra_ino = 0, fs->rp_blocks = 0; /* the stage is this window's now */
	int r = dev_read(fs, pblk, n, fs->stage);
	if (r)
		return r;
	mc_overlay(fs, pblk, n, fs->stage);
	fs->rp_blk = pblk, fs->rp_blocks = n;
	return 0;
}

/* Reads from pos up to len bytes with one device call at most: from the
 * cache or the read-ahead window (filled first for reads smaller than it
 * would be, under RA_DIRECT), zeros for a hole, or whole blocks straight
 * into buf for a large read.  Returns bytes. */
static long read_chunk(struct ext2_fs *fs, const struct ino *ip, uint64_t pos, uint8_t *buf, size_t len)
{
	size_t n = ra_copy(fs, ip, pos, buf, len);
	if (n)
		return (long)n;
	uint64_t lblk = pos >> fs->log_bs, hole = 1;
	uint32_t boff = (uint32_t)(pos & (fs->bs - 1)), pblk;
	int r = bmap_get(fs, ip, lblk, &pblk, &hole);
	if (r)
		return r;
	if (pblk == 0) {
		n = min64(len, (hole << fs->log_bs) - boff);
		memset(buf, 0, n);
		return (long)n;
	}
	struct mc_ent *e = mc_lookup(fs, pblk);
	if (e) {
		n = min64(len, fs->bs - boff);
		memcpy(buf, e->data + boff, n);
		return (long)n;
	}
	if (fs->read_only && (boff || len < RA_DIRECT)) {
		if (!(n = rp_copy(fs, ip, lblk, pblk, pos, buf, len))) {
			if ((r = rp_fill(fs, ip, lblk, pblk)))
				return r;
			n = rp_copy(fs, ip, lblk, pblk, pos, buf, len);
		}
		return n ? (long)n : -EIO;
	}
	uint32_t want = ra_want(fs, ip, lblk);
	if (boff || (len < (size_t)want << fs->log_bs && len < RA_DIRECT)) {
		if ((r = ra_fill(fs, ip, lblk, pblk, want)))
			return r;
		return (long)ra_copy(fs, ip, pos, buf, len);
	}
	uint32_t blocks = run_length(fs, ip, lblk, pblk, min64(len >> fs->log_bs, max_run(fs)));
	if ((r = dev_read(fs, pblk, blocks, buf)))
		return r;
	mc_overlay(fs, pblk, blocks, buf);
	ra_note(fs, ip, lblk, blocks);
	return (long)((uint64_t)blocks << fs->log_bs);
}

/* Writes one partial block at pos, in the cache (read first unless new):
 * the device sees it at the next write-back, with its neighbours. */
static long write_partial(struct ext2_fs *fs, struct ino *ip, uint64_t pos, const uint8_t *src, size_t len,
			  uint32_t *goal)
{
	uint32_t boff = (uint32_t)(pos & (fs->bs - 1)), pblk;
	size_t n = min64(fs->bs - boff, len);
	bool fresh;
	struct mc_ent *e;
	int r = bmap_alloc(fs, ip, pos >> fs->log_bs, *goal, &pblk, &fresh);
	if (r || (r = mc_get(fs, pblk, fresh, &e)))
		return r;
	memcpy(e->data + boff, src, n);
	e->file_data = 1;
	mc_dirty(e);
	mc_put(e);
	*goal = pblk + 1;
	return (long)n;
}

/* Writes whole blocks from pos (block-aligned): as many as map to
 * contiguous disk blocks, in one call. */
static long write_blocks(struct ext2_fs *fs, struct ino *ip, uint64_t pos, const uint8_t *src, size_t len,
			 uint32_t *goal)
{
	uint64_t lblk = pos >> fs->log_bs, want = min64(len >> fs->log_bs, max_run(fs)), n = 1;
	uint32_t first, next;
	bool fresh;
	int r = bmap_alloc(fs, ip, lblk, *goal, &first, &fresh);
	if (r)
		return r;
	for (; n < want; n++)
		if (bmap_alloc(fs, ip, lblk + n, first + (uint32_t)n, &next, &fresh) || next != first + n)
			break; /* the next call writes (or fails on) that block */
	for (uint64_t k = 0; k < n; k++)
		mc_forget(fs, first + (uint32_t)k); /* a cached copy is older now */
	if ((r = dev_write(fs, first, (uint32_t)n, src)))
		return r;
	*goal = first + (uint32_t)n;
	return (long)(n << fs->log_bs);
}

/* ---- mount ------------------------------------------------------------------- */

/* The largest file the block map and a 32-bit i_blocks can describe
 * (as Linux's ext2_max_size computes it). */
static uint64_t max_file_size(const struct ext2_fs *fs)
{
	uint32_t bits = fs->log_bs, lp = fs->log_ppb;
	if (fs->sb.rev_level == 0)
		return 0x7fffffff;
	uint64_t res = NDIR + (1ull << lp) + (1ull << 2 * lp) + (1ull << 3 * lp);
	uint64_t meta = 1 + (1 + (1ull << lp)) + (1 + (1ull << lp) + (1ull << 2 * lp));
	uint64_t upper = ((1ull << 32) - 1) >> (bits - 9);
	upper = (upper - meta) << bits;
	res <<= bits;
	return res < upper ? res : upper;
}

/* Geometry from the superblock, each value checked. */
static int sb_geometry(struct ext2_fs *fs)
{
	const struct ext2_super *s = &fs->sb;
	if (s->magic != EXT2_MAGIC || s->log_block_size > 2 || s->rev_level > 1)
		return -EINVAL;
	fs->log_bs = 10 + s->log_block_size;
	fs->bs = 1u << fs->log_bs;
	fs->spb = fs->bs / 512;
	fs->ppb = fs->bs / 4;
	fs->log_ppb = fs->log_bs - 2;
	fs->blocks_count = s->blocks_count;
	fs->first_data_block = s->first_data_block;
	fs->bpg = s->blocks_per_group;
	fs->ipg = s->inodes_per_group;
	fs->inodes_count = s->inodes_count;
	if (fs->first_data_block != (fs->bs == 1024 ? 1u : 0u) || fs->blocks_count <= fs->first_data_block + 1)
		return -EINVAL;
	if ((uint64_t)fs->blocks_count * fs->spb > fs->bd->sectors)
		return -EINVAL; /* truncated image */
	if (fs->bpg < 8 || fs->bpg > 8 * fs->bs || fs->bpg % 8 || fs->ipg == 0 || fs->ipg > 8 * fs->bs)
		return -EINVAL;
	fs->ngroups = (fs->blocks_count - fs->first_data_block - 1) / fs->bpg + 1;
	if (fs->inodes_count == 0 || (uint64_t)fs->ipg * fs->ngroups != fs->inodes_count)
		return -EINVAL;
	if (s->rev_level == 0) {
		fs->inode_size = GOOD_OLD_INODE_SIZE;
		fs->first_ino = GOOD_OLD_FIRST_INO;
	} else {
		fs->inode_size = s->inode_size;
		fs->first_ino = s->first_ino;
	}
	if (fs->inode_size < GOOD_OLD_INODE_SIZE || fs->inode_size > fs->bs ||
	    (fs->inode_size & (fs->inode_size - 1)))
		return -EINVAL;
	if (fs->first_ino < GOOD_OLD_FIRST_INO || fs->first_ino > fs->inodes_count)
		return -EINVAL;
	fs->itb = (uint32_t)(((uint64_t)fs->ipg * fs->inode_size + fs->bs - 1) >> fs->log_bs);
	fs->gdt_blocks = (uint32_t)(((uint64_t)fs->ngroups * sizeof(struct ext2_gd) + fs->bs - 1) >> fs->log_bs);
	fs->rsv_gdt = s->feature_compat & COMPAT_RESIZE_INODE ? s->reserved_gdt_blocks : 0;
	if ((uint64_t)1 + fs->gdt_blocks + fs->rsv_gdt + 2 + fs->itb > group_blocks(fs, 0))
		return -EINVAL;
	if (s->free_blocks_count > fs->blocks_count || s->free_inodes_count > fs->inodes_count)
		return -EINVAL;
	fs->max_size = max_file_size(fs);
	return 0;
}

static int sb_features(const struct ext2_fs *fs)
{
	const struct ext2_super *s = &fs->sb;
	if (s->rev_level == 0)
		return 0;
	if (s->feature_incompat & ~(uint32_t)INCOMPAT_SUPPORTED)
		return -EINVAL;
	if (!fs->read_only && (s->feature_ro_compat & ~(uint32_t)RO_COMPAT_SUPPORTED))
		return -EINVAL;
	return 0;
}

static void *alloc_array(size_t n, size_t size)
{
	return n && size > SIZE_MAX / n ? NULL : fs_alloc(n * size);
}

static int mount_alloc(struct ext2_fs *fs)
{
	fs->mc_n = MC_BYTES >> fs->log_bs;
	if (fs->mc_n < MC_MIN)
		fs->mc_n = MC_MIN;
	uint32_t nb = 1;
	while (nb < 2 * fs->mc_n)
		nb <<= 1;
	fs->mc_hmask = nb - 1;
	fs->stage_blocks = STAGE_BYTES >> fs->log_bs;
	fs->ra_max = RA_BYTES >> fs->log_bs;
	fs->gd = alloc_array(fs->gdt_blocks, fs->bs);
	fs->mc = alloc_array(fs->mc_n, sizeof *fs->mc);
	fs->mc_hash = alloc_array(nb, sizeof *fs->mc_hash);
	fs->mc_order = alloc_array(fs->mc_n, sizeof *fs->mc_order);
	fs->mc_data = alloc_array(fs->mc_n, fs->bs);
	fs->stage = alloc_array(fs->stage_blocks, fs->bs);
	if (!fs->gd || !fs->mc || !fs->mc_hash || !fs->mc_order || !fs->mc_data || !fs->stage)
		return -ENOMEM;
	for (uint32_t i = 0; i < nb; i++)
		fs->mc_hash[i] = -1;
	for (uint32_t i = 0; i < fs->mc_n; i++)
		fs->mc[i] = (struct mc_ent){ .data = fs->mc_data + (size_t)i * fs->bs, .next = -1 };
	return 0;
}

static void mount_free(struct ext2_fs *fs)
{
	if (fs->gd)
		fs_free(fs->gd, (size_t)fs->gdt_blocks * fs->bs);
	if (fs->mc)
		fs_free(fs->mc, (size_t)fs->mc_n * sizeof *fs->mc);
	if (fs->mc_hash)
		fs_free(fs->mc_hash, (size_t)(fs->mc_hmask + 1) * sizeof *fs->mc_hash);
	if (fs->mc_order)
		fs_free(fs->mc_order, (size_t)fs->mc_n * sizeof *fs->mc_order);
	if (fs->mc_data)
		fs_free(fs->mc_data, (size_t)fs->mc_n * fs->bs);
	if (fs->stage)
		fs_free(fs->stage, (size_t)fs->stage_blocks * fs->bs);
	for (uint32_t i = 0; i < DX_DIRS; i++)
		dx_free(fs, &fs->dx[i]);
	fs_free(fs, sizeof *fs);
}

/* Reads the group descriptors and checks each one against the geometry. */
static int gdt_load(struct ext2_fs *fs)
{
	int r = dev_read(fs, fs->first_data_block + 1, fs->gdt_blocks, fs->gd);
	if (r)
		return r;
	for (uint32_t g = 0; g < fs->ngroups; g++) {
		const struct ext2_gd *gd = &fs->gd[g];
		uint32_t lo = fs->first_data_block ? fs->first_data_block : 1;
		if (gd->block_bitmap < lo || gd->block_bitmap >= fs->blocks_count ||
		    gd->inode_bitmap < lo || gd->inode_bitmap >= fs->blocks_count ||
		    gd->inode_table < lo || (uint64_t)gd->inode_table + fs->itb > fs->blocks_count)
			return -EINVAL;
		if (gd->free_blocks_count > group_blocks(fs, g) || gd->free_inodes_count > fs->ipg ||
		    gd->used_dirs_count > fs->ipg)
			return -EINVAL;
	}
	return 0;
}

/* Read-write: the disk says "not clean" until unmount. */
static int mount_mark(struct ext2_fs *fs)
{
	fs->mount_state = fs->sb.state;
	fs->sb.state &= (uint16_t)~EXT2_VALID_FS;
	fs->sb.mnt_count++;
	int r = sb_write(fs);
	return r ? r : fs->bd->flush(fs->bd->ctx);
}

int ext2_mount(struct ext2_fs **out, struct blockdev *bd, int read_only)
{
	*out = NULL;
	if (!bd || !bd->read || bd->sectors < 4)
		return -EINVAL;
	if (!read_only && (bd->read_only || !bd->write || !bd->flush))
		return -EROFS;
	struct ext2_fs *fs = fs_alloc(sizeof *fs);
	if (!fs)
		return -ENOMEM;
	fs->bd = bd;
	fs->read_only = read_only;
	int r = bd->read(bd->ctx, SB_SECTOR, &fs->sb, sizeof fs->sb / 512) ? -EIO : 0;
	if (!r)
		r = sb_geometry(fs);
	if (!r)
		r = sb_features(fs);
	if (r) {
		fs_free(fs, sizeof *fs);
		return r;
	}
	r = mount_alloc(fs);
	if (!r)
		r = gdt_load(fs);
	/* the directory index's hash: keyed per mount, so that names chosen
	 * to collide are hard to find */
	fs->dx_seed = 0x243f6a8885a308d3ull ^ (uint64_t)(uintptr_t)fs ^ ((uint64_t)fs->sb.wtime << 32);
	for (uint32_t i = 0; i < sizeof fs->sb.uuid; i++)
		fs->dx_seed = (fs->dx_seed ^ fs->sb.uuid[i]) * 0x100000001b3ull;
	struct ino root;
	if (!r && (r = dir_get(fs, EXT2_ROOT_INO, &root)))
		r = -EIO;
	if (!r && !read_only)
		r = mount_mark(fs);
	if (r) {
		mount_free(fs);
		return r;
	}
	*out = fs;
	return 0;
}

void ext2_set_clock(struct ext2_fs *fs, int64_t (*now)(void))
{
	fs->now = now;
	if (!fs->read_only) { /* the mount time, now that there is a clock */
		fs->sb.mtime = now32(fs);
		fs->sb_dirty = true;
	}
}

int ext2_sync(struct ext2_fs *fs)
{
	if (fs->read_only)
		return 0;
	int r = mc_writeback(fs);
	if (!r && fs->gdt_dirty && !(r = dev_write(fs, fs->first_data_block + 1, fs->gdt_blocks, fs->gd)))
		fs->gdt_dirty = false;
	if (!r && fs->sb_dirty) {
		fs->sb.wtime = now32(fs);
		r = sb_write(fs);
	}
	return r ? r : fs->bd->flush(fs->bd->ctx);
}

int ext2_unmount(struct ext2_fs *fs)
{
	int r = 0;
	if (!fs)
		return 0;
	if (!fs->read_only) {
		fs->sb.state = fs->mount_state | (fs->corrupt ? EXT2_ERROR_FS : 0);
		fs->sb_dirty = true;
		r = ext2_sync(fs);
	}
	mount_free(fs);
	return r;
}

uint64_t ext2_free_bytes(struct ext2_fs *fs)
{
	return (uint64_t)fs->sb.free_blocks_count << fs->log_bs;
}

/* ---- lookups and attributes -------------------------------------------------- */

int ext2_lookup(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	struct ino d;
	int r = name_check(name, len);
	if (!r)
		r = dir_get(fs, dir, &d);
	return r ? r : dir_find(fs, &d, name, len, ino);
}

int ext2_stat(struct ext2_fs *fs, uint32_t ino, struct ext2_stat *st)
{
	struct ino ip;
	int r = inode_get(fs, ino, &ip);
	if (r)
		return r;
	*st = (struct ext2_stat){
		.ino = ino,
		.mode = ip.d.mode,
		.nlink = ip.d.links,
		.uid = ip.d.uid | (uint32_t)ip.d.uid_hi << 16,
		.gid = ip.d.gid | (uint32_t)ip.d.gid_hi << 16,
		.size = i_size(&ip),
		.blocks = ip.d.blocks,
		.atime = (int32_t)ip.d.atime,
		.mtime = (int32_t)ip.d.mtime,
		.ctime = (int32_t)ip.d.ctime,
	};
	return 0;
}

/* An inode a mutating call may change: not on a read-only mount. */
static int inode_for_change(struct ext2_fs *fs, uint32_t ino, struct ino *ip)
{
	return fs->read_only ? -EROFS : inode_get(fs, ino, ip);
}

/* A regular file's inode, for writing or truncating. */
static int regular_for_change(struct ext2_fs *fs, uint32_t ino, struct ino *ip)
{
	int r = inode_for_change(fs, ino, ip);
	return r ? r : is_dir(ip) ? -EISDIR : !is_reg(ip) ? -EINVAL : 0;
}

int ext2_set_times(struct ext2_fs *fs, uint32_t ino, int64_t atime, int64_t mtime)
{
	struct ino ip;
	int r = inode_for_change(fs, ino, &ip);
	if (r)
		return r;
	if (atime != -1)
		ip.d.atime = (uint32_t)atime;
	if (mtime != -1)
		ip.d.mtime = (uint32_t)mtime;
	ip.d.ctime = now32(fs);
	return inode_write(fs, &ip);
}

int ext2_chmod(struct ext2_fs *fs, uint32_t ino, uint32_t mode)
{
	struct ino ip;
	int r = inode_for_change(fs, ino, &ip);
	if (r)
		return r;
	ip.d.mode = (uint16_t)(mode_type(ip.d.mode) | (mode & 07777));
	ip.d.ctime = now32(fs);
	return inode_write(fs, &ip);
}

struct rd_arg {
	struct ext2_dirent *out;
	uint64_t *pos;
	uint32_t log_bs;
};

static int v_readdir(struct ext2_fs *fs, struct dpos *p, void *arg)
{
	(void)fs;
	struct rd_arg *a = arg;
	if (!p->h.inode)
		return 0;
	a->out->ino = p->h.inode;
	a->out->type = ft_to_dt(p->h.file_type);
	a->out->name_len = p->h.name_len;
	memcpy(a->out->name, p->name, p->h.name_len);
	a->out->name[p->h.name_len] = 0;
	*a->pos = (p->lblk << a->log_bs) + p->off + p->h.rec_len;
	return 1;
}

int ext2_readdir(struct ext2_fs *fs, uint32_t dir, uint64_t *pos, struct ext2_dirent *out)
{
	struct ino d;
	int r = dir_get(fs, dir, &d);
	if (r)
		return r;
	if (*pos >= i_size(&d))
		return 0;
	struct rd_arg a = { out, pos, fs->log_bs };
	r = dir_scan(fs, &d, *pos, v_readdir, &a);
	if (r <= 0) {
		if (r == 0)
			*pos = i_size(&d);
		return r;
	}
	struct ino ip;
	if (out->type == EXT2_DT_UNKNOWN && inode_read(fs, out->ino, &ip) == 0)
		out->type = ft_to_dt(mode_to_ft(ip.d.mode));
	return 1;
}

/* ---- file data ------------------------------------------------------------------ */

long ext2_read(struct ext2_fs *fs, uint32_t ino, uint64_t off, void *buf, size_t len)
{
	struct ino ip;
	int r = inode_get(fs, ino, &ip);
	if (r)
		return r;
	if (is_dir(&ip))
		return -EISDIR;
	if (!is_reg(&ip))
		return -EINVAL;
	uint64_t size = i_size(&ip);
	if (off >= size)
		return 0;
	len = min64(min64(len, size - off), __LONG_MAX__);
	size_t done = 0;
	while (done < len) {
		long n = read_chunk(fs, &ip, off + done, (uint8_t *)buf + done, len - done);
		if (n < 0)
			return done ? (long)done : n;
		done += (size_t)n;
	}
	return (long)done;
}

long ext2_write(struct ext2_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	struct ino ip;
	int r = regular_for_change(fs, ino, &ip);
	if (r)
		return r;
	if (len == 0)
		return 0;
	if (off >= fs->max_size)
		return -EFBIG;
	ra_drop(fs, ino);
	len = min64(min64(len, fs->max_size - off), __LONG_MAX__);
	uint32_t goal = block_goal(fs, &ip, off >> fs->log_bs);
	size_t done = 0;
	long n = 0;
	while (done < len) {
		uint64_t pos = off + done;
		const uint8_t *src = (const uint8_t *)buf + done;
		if ((pos & (fs->bs - 1)) || len - done < fs->bs)
			n = write_partial(fs, &ip, pos, src, len - done, &goal);
		else
			n = write_blocks(fs, &ip, pos, src, len - done, &goal);
		if (n < 0)
			break;
		done += (size_t)n;
	}
	if (done) {
		if (off + done > i_size(&ip))
			i_size_set(fs, &ip, off + done);
		touch_times(fs, &ip);
	}
	r = inode_write(fs, &ip); /* blocks may have been allocated even on failure */
	if (done)
		return r ? r : (long)done;
	return n < 0 ? n : r;
}

int ext2_truncate(struct ext2_fs *fs, uint32_t ino, uint64_t size)
{
	struct ino ip;
	int r = regular_for_change(fs, ino, &ip);
	if (r)
		return r;
	if (size > fs->max_size)
		return -EFBIG;
	ra_drop(fs, ino);
	if (size < i_size(&ip)) {
		r = trunc_blocks(fs, &ip, (size + fs->bs - 1) >> fs->log_bs);
		if (!r)
			r = zero_tail(fs, &ip, size);
	}
	if (!r)
		i_size_set(fs, &ip, size);
	touch_times(fs, &ip);
	int r2 = inode_write(fs, &ip);
	return r ? r : r2;
}

/* ---- creating and linking --------------------------------------------------------- */

/* Allocates and initialises an inode (not yet linked anywhere). */
static int inode_new(struct ext2_fs *fs, const struct ino *parent, uint32_t mode, struct ino *ip)
{
	bool dir = mode_type(mode) == EXT2_S_IFDIR, fresh;
	int r = inode_alloc(fs, parent->num, dir, &ip->num, &fresh);
	if (r)
		return r;
	if ((r = inode_clear(fs, ip->num, fresh))) {
		inode_bit_free(fs, ip->num, dir);
		return r;
	}
	uint32_t now = now32(fs);
	memset(&ip->d, 0, sizeof ip->d);
	ip->d.mode = (uint16_t)mode;
	ip->d.links = dir ? 2 : 1;
	ip->d.atime = ip->d.mtime = ip->d.ctime = now;
	return inode_write(fs, ip);
}

/* Checks that name can be added to directory `dir` (loaded into d). */
static int prepare_new_name(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, struct ino *d)
{
	uint32_t ino;
	if (fs->read_only)
		return -EROFS;
	int r = name_check(name, len);
	if (!r)
		r = dir_get(fs, dir, d);
	if (!r)
		r = dir_find(fs, d, name, len, &ino);
	return r == -ENOENT ? 0 : r ? r : -EEXIST;
}

/* Links a new inode into d under name, or frees it again. */
static int link_new(struct ext2_fs *fs, struct ino *d, const char *name, size_t len, struct ino *ip)
{
	int r = dir_add(fs, d, name, len, ip->num, dirent_ft(fs, ip->d.mode));
	if (r) {
		inode_release(fs, ip);
		return r;
	}
	if (is_dir(ip)) {
		d->d.links++;
		return inode_write(fs, d);
	}
	return 0;
}

int ext2_create(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode, uint32_t *ino)
{
	struct ino d, ip;
	int r = prepare_new_name(fs, dir, name, len, &d);
	if (r)
		return r;
	if (mode_type(mode) == 0)
		mode |= EXT2_S_IFREG;
	switch (mode_type(mode)) {
	case EXT2_S_IFREG: case EXT2_S_IFDIR: case EXT2_S_IFIFO: case EXT2_S_IFSOCK:
	case EXT2_S_IFCHR: case EXT2_S_IFBLK:
		break;
	default:
		return -EINVAL;
	}
	mode &= EXT2_S_IFMT | 07777;
	if (mode_type(mode) == EXT2_S_IFDIR && d.d.links >= EXT2_LINK_MAX)
		return -EMLINK;
	if ((r = inode_new(fs, &d, mode, &ip)))
		return r;
	if (is_dir(&ip) && (r = dir_init(fs, &ip, dir))) {
		inode_release(fs, &ip);
		return r;
	}
	if ((r = link_new(fs, &d, name, len, &ip)))
		return r;
	if (ino)
		*ino = ip.num;
	return 0;
}

/* The target of a new symlink: in i_block when short, else in a block. */
static int symlink_store(struct ext2_fs *fs, struct ino *ip, const char *target, size_t tlen)
{
	if (tlen <= FAST_SYMLINK_MAX) {
		memcpy(ip->d.block, target, tlen);
	} else {
		uint32_t pblk;
		bool fresh;
		struct mc_ent *e;
		int r = bmap_alloc(fs, ip, 0, block_goal(fs, ip, 0), &pblk, &fresh);
		if (!r)
			r = mc_get(fs, pblk, true, &e);
		if (r)
			return r;
		memcpy(e->data, target, tlen);
		mc_put(e);
	}
	i_size_set(fs, ip, tlen);
	return inode_write(fs, ip);
}

int ext2_symlink(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, const char *target, size_t tlen,
		 uint32_t *ino)
{
	struct ino d, ip;
	int r = prepare_new_name(fs, dir, name, len, &d);
	if (r)
		return r;
	if (tlen == 0)
		return -ENOENT;
	if (tlen >= fs->bs)
		return -ENAMETOOLONG;
	if (memchr(target, 0, tlen))
		return -EINVAL;
	if ((r = inode_new(fs, &d, EXT2_S_IFLNK | 0777, &ip)))
		return r;
	if ((r = symlink_store(fs, &ip, target, tlen))) {
		inode_release(fs, &ip);
		return r;
	}
	if ((r = link_new(fs, &d, name, len, &ip)))
		return r;
	if (ino)
		*ino = ip.num;
	return 0;
}

long ext2_readlink(struct ext2_fs *fs, uint32_t ino, char *buf, size_t len)
{
	struct ino ip;
	int r = inode_get(fs, ino, &ip);
	if (r)
		return r;
	if (!is_lnk(&ip))
		return -EINVAL;
	size_t n = min64(len, i_size(&ip)); /* inode_check bounded the size */
	if (is_fast_symlink(fs, &ip)) {
		memcpy(buf, ip.d.block, n);
		return (long)n;
	}
	uint32_t pblk;
	struct mc_ent *e;
	if ((r = bmap_get(fs, &ip, 0, &pblk, NULL)))
		return r;
	if (pblk == 0)
		return corrupt(fs);
	if ((r = mc_get(fs, pblk, false, &e)))
		return r;
	memcpy(buf, e->data, n);
	mc_put(e);
	return (long)n;
}

int ext2_link(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t ino)
{
	struct ino d, ip;
	int r = prepare_new_name(fs, dir, name, len, &d);
	if (!r)
		r = inode_get(fs, ino, &ip);
	if (r)
		return r;
	if (is_dir(&ip))
		return -EPERM;
	if (ip.d.links >= EXT2_LINK_MAX)
		return -EMLINK;
	if ((r = dir_add(fs, &d, name, len, ino, dirent_ft(fs, ip.d.mode))))
		return r;
	ip.d.links++;
	ip.d.ctime = now32(fs);
	return inode_write(fs, &ip);
}

/* ---- removing and renaming ---------------------------------------------------------- */

/* Drops one link to ip (all of a directory's); frees it at zero. */
static int drop_link(struct ext2_fs *fs, struct ino *ip)
{
	if (is_dir(ip) || ip->d.links <= 1)
		return inode_release(fs, ip);
	ip->d.links--;
	ip->d.ctime = now32(fs);
	return inode_write(fs, ip);
}

/* Looks up name in dir for removal: both loaded. */
static int prepare_remove(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len, struct ino *d,
			  struct ino *ip)
{
	uint32_t ino;
	if (fs->read_only)
		return -EROFS;
	int r = name_check(name, len);
	if (!r)
		r = dir_get(fs, dir, d);
	if (!r)
		r = dir_find(fs, d, name, len, &ino);
	if (!r)
		r = inode_get(fs, ino, ip);
	return r;
}

int ext2_unlink(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len)
{
	struct ino d, ip;
	int r = prepare_remove(fs, dir, name, len, &d, &ip);
	if (r)
		return r;
	if (is_dir(&ip))
		return -EISDIR;
	if ((r = dir_remove(fs, &d, name, len)))
		return r;
	return drop_link(fs, &ip);
}

int ext2_rmdir(struct ext2_fs *fs, uint32_t dir, const char *name, size_t len)
{
	struct ino d, ip;
	if (len == 1 && name[0] == '.')
		return fs->read_only ? -EROFS : -EINVAL;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return fs->read_only ? -EROFS : -ENOTEMPTY;
	int r = prepare_remove(fs, dir, name, len, &d, &ip);
	if (r)
		return r;
	if (!is_dir(&ip))
		return -ENOTDIR;
	if (ip.num == d.num || ip.num == EXT2_ROOT_INO)
		return corrupt(fs);
	if ((r = dir_is_empty(fs, &ip)) <= 0)
		return r < 0 ? r : -ENOTEMPTY;
	if ((r = dir_remove(fs, &d, name, len)))
		return r;
	if (d.d.links > 1)
		d.d.links--;
	if ((r = inode_write(fs, &d)))
		return r;
	return inode_release(fs, &ip);
}

/* The loaded parties of a rename.  nd may alias od; ni is valid when the
 * target exists. */
struct rename_ctx {
	struct ino od_s, nd_s, oi, ni;
	struct ino *od, *nd;
	bool target;
};

/* Loads both directories and both entries, and applies rename(2)'s rules. */
static int rename_prepare(struct ext2_fs *fs, struct rename_ctx *c, uint32_t odir, const char *oname, size_t olen,
			  uint32_t ndir, const char *nname, size_t nlen)
{
	uint32_t oino, nino;
	int r = name_check(oname, olen);
	if (!r)
		r = name_check(nname, nlen);
	if (r)
		return r;
	if (is_dot_or_dotdot(oname, olen) || is_dot_or_dotdot(nname, nlen))
		return -EINVAL;
	c->od = &c->od_s;
	c->nd = odir == ndir ? &c->od_s : &c->nd_s;
	if ((r = dir_get(fs, odir, c->od)) || (odir != ndir && (r = dir_get(fs, ndir, c->nd))))
		return r;
	if ((r = dir_find(fs, c->od, oname, olen, &oino)) || (r = inode_get(fs, oino, &c->oi)))
		return r;
	if (oino == odir || oino == ndir)
		return -EINVAL;
	r = dir_find(fs, c->nd, nname, nlen, &nino);
	if (r && r != -ENOENT)
		return r;
	c->target = r == 0;
	if (c->target) {
		if (nino == oino)
			return 1; /* both names already link the same inode: nothing to do */
		if ((r = inode_get(fs, nino, &c->ni)))
			return r;
		if (is_dir(&c->oi) && !is_dir(&c->ni))
			return -ENOTDIR;
		if (!is_dir(&c->oi) && is_dir(&c->ni))
			return -EISDIR;
		if (is_dir(&c->ni) && (r = dir_is_empty(fs, &c->ni)) <= 0)
			return r < 0 ? r : -ENOTEMPTY;
	}
	if (is_dir(&c->oi) && odir != ndir) {
		if ((r = check_not_below(fs, oino, ndir)))
			return r;
		if (!c->target && c->nd->d.links >= EXT2_LINK_MAX)
			return -EMLINK;
	}
	return 0;
}

int ext2_rename(struct ext2_fs *fs, uint32_t odir, const char *oname, size_t olen, uint32_t ndir,
		const char *nname, size_t nlen)
{
	struct rename_ctx c;
	if (fs->read_only)
		return -EROFS;
	int r = rename_prepare(fs, &c, odir, oname, olen, ndir, nname, nlen);
	if (r)
		return r < 0 ? r : 0;
	uint8_t ft = dirent_ft(fs, c.oi.d.mode);
	bool moving_dir = is_dir(&c.oi) && odir != ndir;
	r = c.target ? dir_set(fs, c.nd, nname, nlen, c.oi.num, ft) : dir_add(fs, c.nd, nname, nlen, c.oi.num, ft);
	if (r || (r = dir_remove(fs, c.od, oname, olen)))
		return r;
	if (moving_dir) {
		if ((r = dir_set(fs, &c.oi, "..", 2, ndir, dirent_ft(fs, EXT2_S_IFDIR))))
			return r;
		if (c.od->d.links > 1)
			c.od->d.links--;
		c.nd->d.links++;
	}
	if (c.target && is_dir(&c.ni) && c.nd->d.links > 1)
		c.nd->d.links--; /* the replaced directory's ".." */
	c.oi.d.ctime = now32(fs);
	if ((r = inode_write(fs, &c.oi)) || (r = inode_write(fs, c.od)) || (r = inode_write(fs, c.nd)))
		return r;
	return c.target ? drop_link(fs, &c.ni) : 0;
}
