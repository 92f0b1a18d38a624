/* SPDX-License-Identifier: GPL-2.0-only */
/* The record stream from the workdir reader (the confined child that parses
 * the guest's ext2 image, workdir_reader.c) to the writer (extract.c);
 * tests/fuzz builds such streams too.  Each record is a struct rec, its
 * name, then `size` bytes. */
#ifndef HUSK_EXTRACT_STREAM_H
#define HUSK_EXTRACT_STREAM_H
#include <stdint.h>
#include "disks/copyin.h"

/* R_UP: back to the parent directory.  R_LINK: another name of a file
 * already sent; its data is the first name's path from the workdir's top.
 * R_ERROR: the reader gave up; `size` holds an enum reader_error. */
enum { R_DIR = 1, R_UP, R_FILE, R_SYMLINK, R_OTHER, R_END, R_LINK, R_ERROR };

enum reader_error {
	RE_CORRUPT = 1, /* unreadable or inconsistent metadata */
	RE_ENTRIES,     /* more entries than the limit */
	RE_BYTES,       /* more data than the limit */
	RE_DEPTH,       /* nested deeper than MAX_DEPTH */
	RE_LOOP,        /* a directory reached twice */
	RE_MEMORY,      /* the reader's own memory budget */
};

struct rec {
	uint8_t type;
	uint8_t touched; /* the guest wrote the inode (HUSK_EXT2_TOUCHED) */
	uint16_t name_len;
	uint32_t mode;
	uint32_t ino;    /* the guest's inode number */
	uint32_t flags;  /* R_WITHHELD, R_LOST */
	int64_t mtime;
	uint64_t size;   /* bytes that follow the name: file data or link target */
};

/* A file the program left alone (stream_untouched): sent without its data,
 * which the writer does not need. */
#define R_WITHHELD 1u
/* A file whose data cannot be rebuilt: parts of it were left in a host
 * file that is gone or replaced (a copy-on-write workdir, mapped.h).  No
 * data follows. */
#define R_LOST 2u

/* The program left this entry alone: the name it was copied to (e is its
 * record entry there, or NULL), the inode it was copied into, never
 * written by the guest, of the same type.  One rule for the reader and the
 * writer. */
static inline int stream_untouched(const struct copyin_entry *e, uint32_t ino, uint32_t mode, int touched)
{
	return e && !touched && e->guest_ino == ino && (mode & 0170000) == (e->mode & 0170000);
}

/* A name the writer (and the stage) takes from the stream: not empty, not
 * "." or "..", no '/' or NUL, under 256 bytes. */
static inline int stream_valid_name(const char *s, unsigned long len)
{
	return len && len < 256 && !__builtin_memchr(s, '/', len) && !__builtin_memchr(s, 0, len) &&
	       !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.');
}

#define MAX_DEPTH COPYIN_MAX_DEPTH /* the bound of the copy-in, both ways */
#define MAX_PATH ((MAX_DEPTH + 1) * 256)
#endif
