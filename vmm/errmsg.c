#include <stdarg.h>
#include <stdio.h>
#include "errmsg.h"

int errmsg(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
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
