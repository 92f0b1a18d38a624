/* The record stream from the workdir reader (the confined child that parses
 * the guest's ext2 image) to the writer (extract.c); tests/fuzz builds such
 * streams too.  Each record is a struct rec, its name, then `size` bytes. */
#ifndef HUSK_EXTRACT_STREAM_H
#define HUSK_EXTRACT_STREAM_H
#include <stdint.h>

/* R_UP: back to the parent directory.  R_LINK: another name of a file
 * already sent; its data is the first name's path from the workdir's top. */
enum { R_DIR = 1, R_UP, R_FILE, R_SYMLINK, R_OTHER, R_END, R_LINK };

struct rec {
	uint8_t type;
	uint8_t pad;
	uint16_t name_len;
	uint32_t mode;
	int64_t mtime;
	uint64_t size; /* bytes that follow the name: file data or link target */
};
#endif
