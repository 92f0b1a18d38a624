/* SPDX-License-Identifier: GPL-2.0-only */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include "errmsg.h"
#include "review/file_policy.h"

/* The next name of a path: its length (up to '/' or the end). */
static size_t name_len(const char *s)
{
	const char *slash = strchr(s, '/');
	return slash ? (size_t)(slash - s) : strlen(s);
}

/* Whether one glob name (no '/') matches one path name. */
static int name_match(const char *g, size_t glen, const char *p, size_t plen)
{
	char gb[256], pb[256];
	if (glen >= sizeof gb || plen >= sizeof pb)
		return 0;
	memcpy(gb, g, glen), gb[glen] = 0;
	memcpy(pb, p, plen), pb[plen] = 0;
	return fnmatch(gb, pb, 0) == 0;
}

/* The glob's names against the path's names, from the start of each: 1
 * when the glob is used up at a name boundary of the path (the rest of the
 * path lies below what matched). */
static int match_from(const char *g, const char *p)
{
	if (!*g)
		return !*p || *p == '/';
	if (*p == '/')
		p++;
	size_t gl = name_len(g);
	const char *gnext = g[gl] ? g + gl + 1 : g + gl;
	if (gl == 2 && g[0] == '*' && g[1] == '*') {
		for (;;) { /* zero names, then one more each time */
			if (match_from(gnext, p))
				return 1;
			if (!*p)
				return 0;
			p += name_len(p);
			if (*p == '/')
				p++;
		}
	}
	if (!*p)
		return 0;
	size_t pl = name_len(p);
	return name_match(g, gl, p, pl) && match_from(gnext, p + pl);
}

int file_glob_match(const char *glob, const char *path)
{
	if (glob[0] == '/')
		glob++;
	if (strchr(glob, '/'))
		return match_from(glob, path);
	for (const char *p = path; *p;) { /* a name at any depth */
		if (match_from(glob, p))
			return 1;
		p += name_len(p);
		if (*p == '/')
			p++;
	}
	return 0;
}

int file_policy_set(const struct file_policy *p)
{
	return p->nglobs || p->max_file || p->max_total || p->refuse;
}

/* The last glob that matches decides; with none, a path is allowed
 * unless some glob allows paths (then only those are). */
static int allowed_path(const struct file_policy *p, const char *path)
{
	int decided = -1, any_allow = 0;
	for (int i = 0; i < p->nglobs; i++) {
		int deny = p->globs[i][0] == '!';
		any_allow |= !deny;
		if (file_glob_match(p->globs[i] + deny, path))
			decided = !deny;
	}
	return decided >= 0 ? decided : !any_allow;
}

static int hidden(const char *path)
{
	for (const char *p = path; *p;) {
		if (*p == '.')
			return 1;
		p += name_len(p);
		p += *p == '/';
	}
	return 0;
}

const char *file_policy_refuses(const struct file_policy *p, const struct file_change *c, uint64_t *total)
{
	/* a directory made holds nothing by itself: it is made for what is
	 * allowed in it (an empty one too) */
	if ((c->removes || c->type != 'd') && !allowed_path(p, c->path))
		return "outside --files-allow";
	if ((p->refuse & FP_HIDDEN) && hidden(c->path))
		return "a hidden file: --files-refuse hidden";
	if (c->removes)
		return NULL;
	if ((p->refuse & FP_SYMLINKS) && c->type == 'l')
		return "a symlink: --files-refuse symlinks";
	if ((p->refuse & FP_EXECUTABLES) && c->type == 'f' && (c->mode & 0111))
		return "an executable: --files-refuse executables";
	if (c->type != 'f')
		return NULL;
	if (p->max_file && c->size > p->max_file)
		return "larger than --files-max-size";
	if (p->max_total && c->size > p->max_total - *total)
		return "over --files-max-total with the files before it";
	*total += c->size;
	return NULL;
}

int file_policy_kinds(const char *list, unsigned *bits, char *err, unsigned long errlen)
{
	static const char *const names[] = { "symlinks", "executables", "hidden" };
	for (const char *s = list; *s;) {
		size_t n = strcspn(s, ",");
		unsigned i = 0;
		while (i < 3 && !(strlen(names[i]) == n && !strncmp(s, names[i], n)))
			i++;
		if (i == 3)
			return errmsg(err, errlen, "unknown kind of file '%.*s' (symlinks, executables or hidden)", (int)n, s);
		*bits |= 1u << i;
		s += n + (s[n] == ',');
	}
	return 0;
}
