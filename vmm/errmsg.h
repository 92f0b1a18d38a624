/* One-line error messages into a caller's buffer. */
#ifndef HUSK_ERRMSG_H
#define HUSK_ERRMSG_H
#include <stddef.h>

/* Formats into err and returns -1, so `return errmsg(err, n, ...)` fails. */
int errmsg(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
