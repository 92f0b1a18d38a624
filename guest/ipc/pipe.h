/* SPDX-License-Identifier: GPL-2.0-only */
/* Pipes: a 64 KiB ring between a read end and a write end.  Unix socket
 * pairs are two of them crossed (unix_socket.c). */
#ifndef GUEST_PIPE_H
#define GUEST_PIPE_H
#include <stddef.h>
#include <stdint.h>
#include "fs/file.h"

#define PIPE_SIZE (64u << 10) /* Linux's default pipe capacity */
#define SOCKET_BUFFER 212992u /* Linux's default socket buffer (net.core.wmem_default) */
#define PIPE_BUF  4096        /* writes up to this size are atomic */
#define PIPE_MAX_SIZE (1u << 20) /* Linux's /proc/sys/fs/pipe-max-size */

struct pipe {
	char *buf;
	uint32_t size;       /* capacity */
	uint32_t head, len;  /* where the next read starts; bytes held */
	int readers, writers;
	int shut;            /* a socket's writer shut it down: EOF once drained */
};

struct pipe *pipe_new(uint32_t size);
void pipe_free(struct pipe *p);
/* One end closed (or shut down): the pipe is freed with its last end. */
void pipe_drop(struct pipe *p, int reader);
/* f: the file read or written, for O_NONBLOCK.  peek: leave the bytes. */
long pipe_read(struct pipe *p, struct file *f, void *buf, size_t len, int peek);
/* atomic: all of len at once or nothing (datagrams, and <= PIPE_BUF). */
long pipe_write(struct pipe *p, struct file *f, const void *buf, size_t len, int atomic);
unsigned pipe_poll_read(const struct pipe *p);
unsigned pipe_poll_write(const struct pipe *p);
long sys_pipe2(int *fds, long flags);
/* A pipe end's or FIFO's stream operations, on the ring ops->pipe gives. */
long pipe_end_read(struct file *f, void *buf, size_t len);
long pipe_end_write(struct file *f, const void *buf, size_t len);
unsigned pipe_end_poll_read(struct file *f, uint64_t *deadline);
unsigned pipe_end_poll_write(struct file *f, uint64_t *deadline);
/* F_GETPIPE_SZ (set 0) and F_SETPIPE_SZ: -EBADF unless f is a pipe or FIFO. */
long pipe_size_fcntl(struct file *f, int set, unsigned long want);
#endif
