/* The fd table: fds 0-2 start as the consoles; dup shares one open file. */
#include <string.h>
#include "file.h"
#include "kernel.h"

enum { EBADF = 9, ENOMEM = 12, EMFILE = 24 };

static struct file *fds[MAX_FDS];
static uint8_t cloexec[MAX_FDS];

struct file *fd_get(long fd)
{
	return fd >= 0 && fd < MAX_FDS ? fds[fd] : 0;
}

struct file *file_new(int kind)
{
	struct file *f = kalloc(sizeof *f);
	if (f)
		f->refs = 1, f->kind = kind;
	return f;
}

void file_put(struct file *f)
{
	if (--f->refs)
		return;
	if (f->path)
		kfree(f->path, PATH_MAX);
	kfree(f, sizeof *f);
}

int fd_install(struct file *f, int min, int ce)
{
	for (int fd = min < 0 ? 0 : min; fd < MAX_FDS; fd++)
		if (!fds[fd]) {
			fds[fd] = f;
			cloexec[fd] = !!ce;
			return fd;
		}
	return -EMFILE;
}

int fd_close(long fd)
{
	struct file *f = fd_get(fd);
	if (!f)
		return -EBADF;
	fds[fd] = 0;
	file_put(f);
	return 0;
}

int fd_cloexec(long fd, int set)
{
	if (!fd_get(fd))
		return -EBADF;
	if (set >= 0)
		cloexec[fd] = !!set;
	return cloexec[fd];
}

void fd_init_console(void)
{
	static const int mode[3] = { 0, 1, 1 }; /* O_RDONLY, O_WRONLY, O_WRONLY */
	for (int fd = 0; fd < 3; fd++) {
		struct file *f = file_new(FILE_CONSOLE);
		if (!f)
			panic("out of memory for the console files");
		f->dev = fd;
		f->flags = mode[fd];
		fds[fd] = f;
	}
}
