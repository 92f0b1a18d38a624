/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/review/stage.c reading a stage's manifest (husk review|apply|discard
 * read any directory they are given): it is taken, with every change's
 * path and fields checked, or refused with a reason; and a manifest taken
 * is written back whole. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"
#include "review/apply.h"
#include "review/stage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz_stage.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		chmod(dir, 0700);
	}
	char path[128];
	snprintf(path, sizeof path, "%s/manifest.json", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size && close(fd) == 0, "writing the manifest");
	struct stage s;
	char err[512] = "";
	if (stage_open(dir, &s, err, sizeof err)) {
		CHECK(err[0], "refused without a reason");
		return 0;
	}
	size_t i, pending = 0;
	json_t *c;
	json_array_foreach(s.changes, i, c) {
		const char *p = change_str(c, "path");
		CHECK(p && p[0] != '/' && !strstr(p, "//") && strcmp(p, "..") && strncmp(p, "../", 3) && !strstr(p, "/../"),
		      "a path taken that leaves the workdir: %s", p ? p : "(null)");
		pending += !strcmp(change_str(c, "state"), "staged") && !json_object_get(c, "denied");
	}
	CHECK(stage_pending(&s) == pending, "pending %zu, counted %zu", stage_pending(&s), pending);
	struct stage_paths all = { NULL, 0 };
	stage_drop(&s, stage_want_paths, &all);
	CHECK(stage_pending(&s) == 0, "changes left after dropping all");
	CHECK(stage_save(&s, err, sizeof err) == 0, "written back: %s", err);
	stage_close(&s);
	return 0;
}
