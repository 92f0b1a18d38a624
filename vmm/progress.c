/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"

static const char *label;
static int shown;
static struct timespec last;

void progress_begin(const char *what)
{
	label = what && isatty(2) ? what : NULL;
	shown = 0;
	clock_gettime(CLOCK_MONOTONIC, &last);
}

void progress_show(uint64_t count, const char *unit, uint64_t bytes)
{
	struct timespec t;
	if (!label)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if ((t.tv_sec - last.tv_sec) * 1000 + (t.tv_nsec - last.tv_nsec) / 1000000 < 500)
		return;
	last = t;
	shown = 1;
	if (bytes)
		fprintf(stderr, "\rhusk: %s: %llu %s, %llu MB\033[K", label, (unsigned long long)count, unit,
			(unsigned long long)(bytes / 1000000));
	else
		fprintf(stderr, "\rhusk: %s: %llu %s\033[K", label, (unsigned long long)count, unit);
}

void progress_end(void)
{
	if (shown)
		fputs("\r\033[K", stderr);
	shown = 0;
	label = NULL;
}
