/* SPDX-License-Identifier: GPL-2.0-only */
/* mkbomb IMAGE NBLOCKS LOOP: grows directory /d of an ext2 image by NBLOCKS
 * blocks packed with 12-byte entries (names 0000..ffff, repeating); with
 * LOOP they all point at /d itself, else at a new fifo.  A hostile guest's
 * directory bomb for the write-back reader's tests. */
#include <ext2fs/ext2fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill_block(char *blk, unsigned bs, ext2_ino_t target, long *n)
{
	memset(blk, 0, bs);
	for (unsigned off = 0; off < bs; off += 12) {
		struct ext2_dir_entry *e = (void *)(blk + off);
		int last = off + 24 > bs;
		char name[8];
		e->inode = target;
		e->rec_len = last ? bs - off : 12;
		snprintf(name, sizeof name, "%04lx", (*n)++ & 0xffff);
		ext2fs_dirent_set_name_len(e, 4);
		memcpy(e->name, name, 4);
		if (last)
			break;
	}
}

static int make_fifo(ext2_filsys fs, ext2_ino_t *ino)
{
	struct ext2_inode in = { 0 };
	if (ext2fs_new_inode(fs, EXT2_ROOT_INO, LINUX_S_IFIFO | 0644, 0, ino))
		return -1;
	ext2fs_inode_alloc_stats2(fs, *ino, +1, 0);
	in.i_mode = LINUX_S_IFIFO | 0644;
	in.i_links_count = 1;
	return ext2fs_write_new_inode(fs, *ino, &in) ? -1 : 0;
}

int main(int argc, char **argv)
{
	ext2_filsys fs;
	ext2_ino_t dir, other;
	ext2_file_t file;
	if (argc != 4 || ext2fs_open(argv[1], EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs) ||
	    ext2fs_read_bitmaps(fs) || ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, "d", &dir) ||
	    make_fifo(fs, &other) ||
	    ext2fs_file_open(fs, dir, EXT2_FILE_WRITE, &file))
		return fprintf(stderr, "mkbomb: cannot open %s\n", argc > 1 ? argv[1] : "(none)"), 1;
	ext2fs_file_llseek(file, 0, EXT2_SEEK_END, NULL);
	char *blk = malloc(fs->blocksize);
	long n = 0;
	for (long b = 0; b < atol(argv[2]); b++) {
		unsigned got;
		fill_block(blk, fs->blocksize, atoi(argv[3]) ? dir : other, &n);
		if (ext2fs_file_write(file, blk, fs->blocksize, &got) || got != fs->blocksize)
			return fprintf(stderr, "mkbomb: write failed\n"), 1;
	}
	ext2fs_file_close(file);
	ext2fs_close(fs);
	free(blk);
	return 0;
}
