/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/audit_show.c on arbitrary audit files (husk audit show reads any file
 * it is given): all runs and each of runs -2..2 alone; it shows them or
 * refuses with a reason, and never reads or writes outside what it holds. */
#include "fuzz.h"
#include "audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	if (!quiet) /* the screens are not the point: their making is */
		quiet = freopen("/dev/null", "w", stdout) != NULL;
	for (long want = -2; want <= 2; want++) {
		FILE *f = fmemopen((void *)data, size ? size : 1, "r");
		if (!f)
			return 0;
		if (!size)
			fgetc(f); /* an empty file: at its end at once */
		char err[512] = "";
		long skipped = -1;
		int r = audit_show_stream(f, "fuzz", want, &skipped, err, sizeof err);
		fclose(f);
		CHECK(r == 0 || (r == -1 && err[0]), "%d, reason '%s'", r, err);
		CHECK(skipped >= 0 && (size_t)skipped <= size, "%ld lines skipped of %zu bytes", skipped, size);
	}
	fflush(stdout);
	return 0;
}
