/* SPDX-License-Identifier: GPL-2.0-only */
/* A program's image and environment.  Errors end husk (errmsg.h): an unknown
 * or bad image name with EXIT_USAGE, a host failure with EXIT_INTERNAL. */
#ifndef HUSK_IMAGE_H
#define HUSK_IMAGE_H
#include "options.h"

/* The file to run: a name with a slash as it is, an image name (no slash)
 * from $HUSK_IMAGES, else build/images beside the husk binary.  *system_disk
 * gets the image's NAME.disk (mounted on /usr) if there is one, else NULL.
 * Both malloc'd. */
char *resolve_program(const char *name, char **system_disk);
/* Adds the image's default environment, PATH.env, after the given -e
 * variables (which win). */
void image_env(const char *path, struct options *o);
/* Adds PATH, HOME and LANG where not set yet: the program sees nothing of
 * the host's environment. */
void add_default_env(struct options *o);
#endif
