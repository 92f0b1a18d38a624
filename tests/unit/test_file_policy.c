/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/review/file_policy.c: globs as the README states them ('*' within a
 * name, "**" across names, a glob without '/' at any depth, a directory's
 * glob over what it holds), the last match deciding, and each rule. */
#include <string.h>
#include "review/file_policy.h"
#include "tap.h"

static const char *check(struct file_policy *p, const char *path, char type, int removes, unsigned mode,
			 unsigned long long size, uint64_t *total)
{
	struct file_change c = { path, type, removes, mode, size };
	return file_policy_refuses(p, &c, total);
}

int main(void)
{
	static const struct { const char *glob, *path; int match; } g[] = {
		{ "src/**", "src/a.c", 1 },        { "src/**", "src/x/y/z.c", 1 },  { "src/**", "srcx/a.c", 0 },
		{ "src/**", "src", 1 },            { "src", "src/deep/file", 1 },  { "*.py", "a.py", 1 },
		{ "*.py", "pkg/sub/a.py", 1 },     { "*.py", "a.pyc", 0 },          { "src/*.c", "src/a.c", 1 },
		{ "src/*.c", "src/x/a.c", 0 },     { "**/.git/**", ".git/config", 1 }, { "**/.git/**", "a/b/.git/HEAD", 1 },
		{ "**/.git/**", "a/.gitignore", 0 }, { "docs/**/*.md", "docs/a.md", 1 }, { "docs/**/*.md", "docs/x/y/a.md", 1 },
		{ "docs/**/*.md", "docs/x/a.txt", 0 }, { "/top.txt", "top.txt", 1 }, { "a?c", "abc", 1 },
		{ "[ab].txt", "b.txt", 1 },        { "[ab].txt", "c.txt", 0 },       { "*", "anything/at/all", 1 },
	};
	for (size_t i = 0; i < sizeof g / sizeof *g; i++)
		ok(file_glob_match(g[i].glob, g[i].path) == g[i].match, "'%s' %s '%s'", g[i].glob,
		   g[i].match ? "matches" : "does not match", g[i].path);

	char *globs[] = { "src/**", "!**/*.bak", "src/keep.bak" };
	struct file_policy p = { globs, 3, 100, 150, FP_SYMLINKS | FP_EXECUTABLES | FP_HIDDEN };
	uint64_t total = 0;
	ok(file_policy_set(&p), "a policy with rules is set");
	ok(!check(&p, "src/a.c", 'f', 0, 0644, 60, &total) && total == 60, "an allowed file, counted");
	ok(check(&p, "README", 'f', 0, 0644, 1, &total) != NULL, "outside the allowed paths");
	ok(check(&p, "src/x.bak", 'f', 0, 0644, 1, &total) != NULL, "a later ! glob refuses");
	ok(!check(&p, "src/keep.bak", 'f', 0, 0644, 1, &total), "a yet later glob allows again: the last match decides");
	ok(check(&p, "src/big", 'f', 0, 0644, 101, &total) != NULL, "over the size per file");
	ok(check(&p, "src/b.c", 'f', 0, 0644, 95, &total) != NULL && total == 61, "over the total: refused, not counted");
	ok(check(&p, "src/.env", 'f', 0, 0644, 1, &total) != NULL, "hidden: refused");
	ok(check(&p, "src/.d/x", 'f', 0, 0644, 1, &total) != NULL, "in a hidden directory: refused");
	ok(check(&p, "src/run", 'f', 0, 0755, 1, &total) != NULL, "an executable: refused");
	ok(check(&p, "src/l", 'l', 0, 0777, 3, &total) != NULL, "a symlink: refused");
	ok(!check(&p, "src/newdir", 'd', 0, 0755, 0, &total), "a directory under an allowed glob");
	ok(!check(&p, "pkg", 'd', 0, 0755, 0, &total), "a directory made outside the globs: made for what is allowed in it");
	ok(check(&p, "pkg", 'd', 1, 0755, 0, &total) != NULL, "... but not deleted");
	ok(check(&p, "README", 'f', 1, 0, 0, &total) != NULL, "deleting outside the allowed paths: refused");
	ok(!check(&p, "src/gone", 'f', 1, 0, 10000, &total), "deleting inside: no size rule applies");

	struct file_policy none = { 0 };
	ok(!file_policy_set(&none) && !check(&none, ".anything/at all", 'l', 0, 0777, 1ull << 40, &total),
	   "no policy: everything allowed");
	char *deny_only[] = { "!secrets/**" };
	struct file_policy d = { deny_only, 1, 0, 0, 0 };
	ok(!check(&d, "a.txt", 'f', 0, 0644, 1, &total) && check(&d, "secrets/k", 'f', 0, 0644, 1, &total),
	   "only ! globs: everything else allowed");

	unsigned bits = 0;
	char err[200];
	ok(!file_policy_kinds("symlinks,hidden", &bits, err, sizeof err) && bits == (FP_SYMLINKS | FP_HIDDEN), "kinds parsed");
	ok(file_policy_kinds("symlinks,devices", &bits, err, sizeof err) && strstr(err, "'devices'"), "an unknown kind named: %s", err);
	return tap_done();
}
