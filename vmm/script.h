/* SPDX-License-Identifier: GPL-2.0-only */
/* The script an interpreter image is asked to run (`husk run python
 * FILE.py`), found by the interpreter's own option grammar.  Without -w the
 * guest's /workdir is a scratch directory in RAM that starts empty: a host
 * file named as the script is copied into it, read-only, under its own name,
 * and the argument becomes that name.  With -w the script must be in the
 * workdir (the program starts there).  Paths the guest cannot see get a
 * one-line error (the script) or note (other arguments) instead of the
 * interpreter's puzzled "can't open file". */
#ifndef HUSK_SCRIPT_H
#define HUSK_SCRIPT_H
#include <stdint.h>
#include "guest_mem.h"
#include "options.h"

struct script {
	int fd;          /* the host file, or -1: nothing to copy */
	uint64_t size;
	char name[256];  /* its name in the guest's /workdir */
	uint64_t gpa;    /* where script_load put it */
};

/* For the image IMAGE (its canonical name, e.g. "python"): finds the script
 * among o->args, opens it and rewrites its argument when it is to be copied.
 * Returns 0, or -1 with a one-line reason in err (the user's error). */
int script_find(const char *image, struct options *o, struct script *sc, char *err, size_t n);
/* Reads the whole script (sc->size bytes) into buf and closes it.  0, or -1
 * with a reason in err. */
int script_read(struct script *sc, void *buf, char *err, size_t n);
/* Copies the script into guest RAM at the first page boundary at or above
 * image_end, leaving the program 1 MiB of heap below the stack; closes it.
 * Returns 0, or -1 with a reason in err (the script does not fit). */
int script_load(struct script *sc, struct guest_mem *mem, uint64_t image_end, uint64_t ram_size, char *err,
		size_t n);
#endif
