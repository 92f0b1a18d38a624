/* SPDX-License-Identifier: GPL-2.0-only */
/* What a run may change in its workdir (--files-allow, --files-max-size,
 * --files-max-total, --files-refuse; the policy's "files" object).  Each
 * change the program made is checked when it is staged (stage.h): one
 * outside the policy is kept for the review, marked denied, recorded in the
 * audit, and never applied. */
#ifndef HUSK_FILE_POLICY_H
#define HUSK_FILE_POLICY_H
#include <stdint.h>

enum { FP_SYMLINKS = 1, FP_EXECUTABLES = 2, FP_HIDDEN = 4 };

struct file_policy {
	char **globs; /* in order, the last that matches decides; "!GLOB" refuses */
	int nglobs;
	uint64_t max_file, max_total; /* bytes; 0: no limit */
	unsigned refuse;              /* FP_* */
};

/* One change, as the policy sees it. */
struct file_change {
	const char *path; /* from the workdir's top */
	char type;        /* 'f' file, 'd' directory, 'l' symlink */
	int removes;      /* a deletion: only the paths and hidden rules apply */
	uint32_t mode;    /* permissions after the change */
	uint64_t size;    /* bytes after the change */
};

/* Whether any rule is set. */
int file_policy_set(const struct file_policy *p);
/* NULL when the change is allowed (a directory made is, unless hidden:
 * it is made for what goes in it) (and *total, the bytes allowed so far,
 * grows by its size), else why not, as a phrase ("outside --files-allow"). */
const char *file_policy_refuses(const struct file_policy *p, const struct file_change *c, uint64_t *total);
/* "symlinks,executables,hidden" (any of them, comma-separated) into FP_*
 * bits: 0, or -1 naming the unknown kind in err. */
int file_policy_kinds(const char *list, unsigned *bits, char *err, unsigned long errlen);
/* Whether glob matches path: '*' and '?' and [...] within a name, "**"
 * any number of names; a glob without '/' matches a name at any depth; a
 * glob that matches a directory matches everything below it. */
int file_glob_match(const char *glob, const char *path);
#endif
