/* SPDX-License-Identifier: GPL-2.0-only */
/* Errors in the VMM follow one of two conventions, by who is at fault.
 *
 * Guest protocol faults: the guest broke the device or port protocol (a bad
 * descriptor, a register it may not write, an unknown MMIO address).  The
 * device code returns -1 and sets a `const char **err` to a static string:
 * nothing to format or allocate in the middle of a vCPU exit, with the VMM
 * confined.  The run stops; run.c prints "guest misbehaved: ..." and husk
 * exits with EXIT_GUEST_ERROR (121).
 *
 * Host set-up errors: preparing the run on the host failed (/dev/kvm, a
 * disk, a file, the policy, the audit file).  The function formats a
 * one-line reason with errmsg() or errmsg_errno() into the caller's buffer
 * (char *err, size_t n) and returns -1 (or NULL).  The top level (main.c,
 * options.c, image.c), having no caller to hand it to, prints it with die()
 * and husk exits with EXIT_INTERNAL (120), or EXIT_USAGE (125) when the
 * cause is the user's (a bad option, image, program or no /dev/kvm). */
#ifndef HUSK_ERRMSG_H
#define HUSK_ERRMSG_H
#include <stddef.h>

/* Formats into err and returns -1, so `return errmsg(err, n, ...)` fails. */
int errmsg(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with ": " and errno's text appended when errno is set: for a
 * failed system call or ioctl. */
int errmsg_errno(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "husk: MESSAGE" on stderr, then exit(code). */
_Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A bad command line: the message with a pointer to --help, EXIT_USAGE. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Bytes of len (guest-chosen names) as printable ASCII for husk's own
 * messages: every other byte, and the backslash, as \xNN.  Returns out
 * (always terminated; cut short if out is too small). */
char *str_escape(const char *s, size_t len, char *out, size_t outlen);
/* 268435456 -> "256M", 21729280 -> "20.7M", 100 -> "100 bytes": for people. */
const char *size_text(double bytes, char *buf, size_t n);
#endif
