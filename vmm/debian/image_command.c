/* SPDX-License-Identifier: GPL-2.0-only */
/* husk image build|ls|rm: which of build.c and store.c does it. */
#include <string.h>
#include "debian/debian.h"
#include "errmsg.h"

int debian_image_command(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[2], "build"))
		return debian_image_build(argc, argv);
	if (argc >= 3 && !strcmp(argv[2], "ls"))
		return debian_image_ls(argc, argv);
	if (argc >= 3 && !strcmp(argv[2], "rm"))
		return debian_image_rm(argc, argv);
	usage_error("usage: husk image build NAME PACKAGE... | husk image ls | husk image rm NAME...");
}
