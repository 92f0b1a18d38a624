/* One-line error messages into a caller's buffer. */
#ifndef HUSK_ERRMSG_H
#define HUSK_ERRMSG_H
#include <stddef.h>

/* Formats into err and returns -1, so `return errmsg(err, n, ...)` fails. */
int errmsg(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Bytes of len (guest-chosen names) as printable ASCII for husk's own
 * messages: every other byte, and the backslash, as \xNN.  Returns out
 * (always terminated; cut short if out is too small). */
char *str_escape(const char *s, size_t len, char *out, size_t outlen);
#endif
