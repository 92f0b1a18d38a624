/* Writing the workdir back: the guest's ext2 image is untrusted.  A child
 * process parses it with e2fsprogs' libext2fs under a seccomp filter that
 * allows little more than reading and writing one pipe, and streams the tree
 * to husk, which writes it under DIR with *at calls that never follow a
 * symlink.  Names are checked, counts and bytes are capped. */
#ifndef HUSK_EXTRACT_H
#define HUSK_EXTRACT_H
#include <stddef.h>
#include <stdint.h>

struct extract_limits {
	uint64_t max_files, max_bytes;
};

struct extract_stats {
	uint64_t files, dirs, symlinks, skipped, removed, bytes, unchanged;
};

/* 0, or -1 with a one-line reason in err (what was written so far stays). */
int workdir_extract(const char *image, const char *dir, const struct extract_limits *lim, struct extract_stats *st,
		    char *err, size_t errlen);
#endif
