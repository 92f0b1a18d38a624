/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errmsg.h"
#include "exit_codes.h"

int errmsg(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

int errmsg_errno(char *err, size_t n, const char *fmt, ...)
{
	int e = errno; /* the failed call's, before formatting can touch it */
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(err, n, fmt, ap);
	va_end(ap);
	if (e && len >= 0 && (size_t)len < n)
		snprintf(err + len, n - len, ": %s", strerror(e));
	return -1;
}

static void vreport(const char *fmt, va_list ap, const char *tail)
{
	fputs("husk: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(tail, stderr);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap, "\n");
	va_end(ap);
	exit(code);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(fmt, ap, " (see husk --help)\n");
	va_end(ap);
	exit(EXIT_USAGE);
}

char *str_escape(const char *s, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 5 <= outlen; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	if (outlen)
		out[o < outlen ? o : outlen - 1] = 0;
	return out;
}

/* 268435456 -> "256M", 21729280 -> "20.7M": in the largest unit that is at
 * least 1, exact where it is. */
const char *size_text(double bytes, char *buf, size_t n)
{
	static const char units[] = "KMGT";
	if (bytes < 1024) {
		snprintf(buf, n, "%.0f bytes", bytes);
		return buf;
	}
	int u = 0;
	for (bytes /= 1024; bytes >= 1024 && u < 3; bytes /= 1024)
		u++;
	if (bytes == (double)(long long)bytes)
		snprintf(buf, n, "%lld%c", (long long)bytes, units[u]);
	else
		snprintf(buf, n, "%.1f%c", bytes, units[u]);
	return buf;
}
