/* SPDX-License-Identifier: GPL-2.0-only */
/* husk run's options by their long names: the one table, read by the
 * command line's parser (options.c) and by libhusk (lib/config.c), which
 * takes them by name. */
#include <string.h>
#include "option_table.h"

const struct option husk_run_options[] = {
	{ "memory", required_argument, 0, 'm' },
	{ "timeout", required_argument, 0, 't' },
	{ "env", required_argument, 0, 'e' },
	{ "cpu-time", required_argument, 0, 'C' },
	{ "output-limit", required_argument, 0, 'O' },
	{ "ro", required_argument, 0, 'R' },
	{ "workdir", required_argument, 0, 'w' },
	{ "disk", required_argument, 0, 'D' },
	{ "policy", required_argument, 0, 'p' },
	{ "audit", required_argument, 0, 'A' },
	{ "stats", no_argument, 0, 's' },
	{ "open-files", required_argument, 0, 'F' },
	{ "pids", required_argument, 0, 'T' },
	{ "no-pvm", no_argument, 0, 'P' },
	{ "cold", no_argument, 0, 'k' },
	{ "no-namespaces", no_argument, 0, 'N' },
	{ "syscalls", no_argument, 0, 'S' },
	{ "kernel-selftest", no_argument, 0, 'K' },
	{ "allow-net", required_argument, 0, 'a' },
	{ "deny-net", required_argument, 0, 'd' },
	{ "net-dns", required_argument, 0, 'n' },
	{ "net-host", required_argument, 0, 'H' },
	{ "net-no-name-check", no_argument, 0, 'c' },
	{ "net-loopback", no_argument, 0, 'L' },
	{ "net-max-open", required_argument, 0, 'o' },
	{ "net-max-connects", required_argument, 0, 'x' },
	{ "net-max-denials", required_argument, 0, 'y' },
	{ "net-max-bytes", required_argument, 0, 'b' },
	{ "net-max-rate", required_argument, 0, 'r' },
	{ "net-max-resolves", required_argument, 0, 'q' },
	{ "review", no_argument, 0, 'W' },
	{ "files-allow", required_argument, 0, 'f' },
	{ "files-max-size", required_argument, 0, 'z' },
	{ "files-max-total", required_argument, 0, 'Z' },
	{ "files-refuse", required_argument, 0, 'u' },
	{ "image", required_argument, 0, 'i' },
	{ "help", no_argument, 0, 'h' },
	{ "version", no_argument, 0, 'V' },
	{ 0, 0, 0, 0 },
};

const struct option *husk_option_find(const char *name)
{
	for (const struct option *o = husk_run_options; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* Options given more than once add an entry each (options.c appends them);
 * any other's last value holds. */
int husk_option_repeats(const char *name)
{
	static const char *const lists[] = { "env", "ro", "allow-net", "deny-net", "net-host", "files-allow", "files-refuse" };
	for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
		if (!strcmp(name, lists[i]))
			return 1;
	return 0;
}
