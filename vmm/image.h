/* SPDX-License-Identifier: GPL-2.0-only */
/* A program's image and environment.  Errors end husk (errmsg.h): an unknown
 * or bad image name with EXIT_USAGE, a host failure with EXIT_INTERNAL. */
#ifndef HUSK_IMAGE_H
#define HUSK_IMAGE_H
#include "options.h"

/* The file to run: a name with a slash as it is, an image name (no slash)
 * or one of an image's aliases (its NAME.info: python3 is python) from the
 * image directory: $HUSK_IMAGES, else build/images beside the husk binary (a
 * checkout), else ../lib/husk from the binary's directory (installed).
 * *system_disk gets the image's NAME.disk (mounted on /usr) if there is one,
 * else NULL.  Both malloc'd.  An unknown name ends husk with EXIT_USAGE and
 * one line listing the images there are. */
char *resolve_program(const char *name, char **system_disk);
/* Adds the image's default environment, PATH.env, after the given -e
 * variables (which win). */
void image_env(const char *path, struct options *o);
/* Adds PATH, HOME and LANG where not set yet: the program sees nothing of
 * the host's environment. */
void add_default_env(struct options *o);
/* husk images: the images of the image directory, one line each (name,
 * aliases, version, size on disk of the program and its system disk, what
 * it contains), under a heading.  A missing image directory ends husk with
 * EXIT_USAGE and one line.  Returns husk's exit status. */
int images_command(int argc, char **argv);
/* Where a snapshot of the program at path stops (its NAME.info, snapshot=):
 * HUSK_SNAPSHOT_PROGRAM where the program has a ready point of its own
 * ("program"), else HUSK_SNAPSHOT_KERNEL. */
int image_snapshot_level(const char *path);
#endif
