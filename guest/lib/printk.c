/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel text output: a small vsnprintf, console printing and panic. */
#include <string.h>
#include "arch/cpu.h"
#include "kernel.h"

struct out {
	char *buf;
	size_t n, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->n)
		o->buf[o->len] = c;
	o->len++;
}

static void put_num(struct out *o, unsigned long v, unsigned base, int neg, int width, char pad)
{
	char tmp[24];
	int i = 0;
	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		tmp[i++] = '-';
	while (i < width--)
		put(o, pad);
	while (i)
		put(o, tmp[--i]);
}

int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct out o = { buf, n, 0 };
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		char pad = ' ';
		int width = 0, lng = 0;
		if (*++fmt == '0')
			pad = '0', fmt++;
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z')
			lng = 1, fmt++;
		switch (*fmt) {
		case 'd': {
			long v = lng ? va_arg(ap, long) : va_arg(ap, int);
			put_num(&o, v < 0 ? -(unsigned long)v : (unsigned long)v, 10, v < 0, width, pad);
			break;
		}
		case 'u':
			put_num(&o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 10, 0, width, pad);
			break;
		case 'x':
			put_num(&o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 16, 0, width, pad);
			break;
		case 'o':
			put_num(&o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 8, 0, width, pad);
			break;
		case 'p':
			put(&o, '0'), put(&o, 'x');
			put_num(&o, (uintptr_t)va_arg(ap, void *), 16, 0, width, pad);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			while (*s)
				put(&o, *s++);
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			put(&o, '?');
			if (!*fmt)
				fmt--;
		}
	}
	if (n)
		buf[o.len < n ? o.len : n - 1] = 0;
	return (int)o.len;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = kvsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

/* Kernel messages go to the program's stdout console (selftest output). */
void kprintf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int len = kvsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (len >= (int)sizeof buf)
		len = sizeof buf - 1;
	console_write(1, buf, len);
}

_Noreturn void halt_exit(int status)
{
	REPORT->tsc_exit = rdtsc();
	for (;;)
		outl(HUSK_PORT_EXIT, (uint32_t)status);
}

/* The VMM prints the message and ends the run with its kernel-panic code. */
_Noreturn void panic(const char *fmt, ...)
{
	char buf[sizeof REPORT->msg];
	va_list ap;
	va_start(ap, fmt);
	kvsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	memcpy((void *)REPORT->msg, buf, sizeof buf);
	for (;;)
		outl(HUSK_PORT_PANIC, 0);
}
