/* expected: malformed control messages, names and addresses get errors (EINVAL, EFAULT, EBADF, EROFS,
 * ECONNREFUSED, EAGAIN), descriptor cycles and unaccepted connections are dropped at close, 2000 connections come
 * and go; the kernel stays up: prints "0 unexpected", exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int bad;

static void expect(const char *what, long r, int err)
{
	int got = r < 0 ? errno : 0;
	if (got != err) {
		printf("UNEXPECTED %s: %ld %s (wanted %s)\n", what, r, strerror(got), strerror(err));
		bad++;
	}
}

/* sendmsg of one byte with this control buffer, straight to the kernel
 * (musl's sendmsg copies the control data first, and refuses above 1 KiB) */
static long send_control(int s, void *control, size_t len)
{
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control };
	memcpy((char *)&m + offsetof(struct msghdr, msg_control) + sizeof(void *), &len, sizeof len); /* 64 bits */
	return syscall(SYS_sendmsg, s, &m, MSG_DONTWAIT);
}

static struct sockaddr_un addr(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strncpy(a.sun_path, path, sizeof a.sun_path - 1);
	return a;
}

int main(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(300 * sizeof(int))];
	} c;
	memset(&c, 0, sizeof c);
	c.h.cmsg_level = SOL_SOCKET, c.h.cmsg_type = SCM_RIGHTS;
	c.h.cmsg_len = 4; /* shorter than its header */
	expect("cmsg_len below the header", send_control(sv[0], &c, sizeof c), EINVAL);
	uint64_t huge = (uint64_t)1 << 40; /* the kernel's cmsg_len is 64 bits (musl's: 32 and padding) */
	memcpy(&c.h, &huge, sizeof huge);
	expect("cmsg_len beyond the buffer", send_control(sv[0], &c, CMSG_SPACE(4)), EINVAL);
	memset(&c.h, 0, sizeof c.h);
	c.h.cmsg_level = SOL_SOCKET, c.h.cmsg_type = SCM_RIGHTS;
	c.h.cmsg_len = CMSG_LEN(254 * sizeof(int)); /* one above SCM_MAX_FD */
	int *fds = (int *)CMSG_DATA(&c.h);
	for (int i = 0; i < 254; i++)
		fds[i] = 0;
	expect("254 descriptors", send_control(sv[0], &c, CMSG_SPACE(254 * sizeof(int))), EINVAL);
	c.h.cmsg_len = CMSG_LEN(sizeof(int));
	fds[0] = 999;
	expect("a descriptor not open", send_control(sv[0], &c, CMSG_SPACE(sizeof(int))), EBADF);
	fds[0] = -1;
	expect("descriptor -1", send_control(sv[0], &c, CMSG_SPACE(sizeof(int))), EBADF);
	c.h.cmsg_type = 77;
	expect("an unknown control type", send_control(sv[0], &c, CMSG_SPACE(sizeof(int))), EINVAL);
	c.h.cmsg_level = 6, c.h.cmsg_type = SCM_RIGHTS;
	expect("another level", send_control(sv[0], &c, CMSG_SPACE(sizeof(int))), EINVAL);
	expect("control buffer unmapped", send_control(sv[0], (void *)16, 64), EFAULT);
	expect("control length huge", send_control(sv[0], &c, (size_t)1 << 40), ENOBUFS);
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = (void *)16, .msg_controllen = 64 };
	expect("recvmsg into an unmapped control buffer", syscall(SYS_recvmsg, sv[1], &m, MSG_DONTWAIT), EFAULT);

	/* a socket sent to itself, then closed: a cycle only a garbage collector frees */
	for (int i = 0; i < 50; i++) {
		int p[2];
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, p))
			return 1;
		c.h.cmsg_level = SOL_SOCKET, c.h.cmsg_type = SCM_RIGHTS;
		c.h.cmsg_len = CMSG_LEN(2 * sizeof(int));
		fds[0] = p[0], fds[1] = p[1];
		expect("send both ends to one of them", send_control(p[0], &c, CMSG_SPACE(2 * sizeof(int))), 0);
		close(p[0]), close(p[1]);
	}

	/* names */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = addr("/tmp/s");
	expect("address longer than sockaddr_un", bind(s, (struct sockaddr *)&a, 200), EINVAL);
	expect("address of one byte", bind(s, (struct sockaddr *)&a, 1), EINVAL);
	expect("address unmapped", bind(s, (struct sockaddr *)16, sizeof a), EFAULT);
	a.sun_family = AF_INET;
	expect("another family", bind(s, (struct sockaddr *)&a, sizeof a), EINVAL);
	a = addr("/usr/lib/s");
	expect("bind on the read-only system disk", bind(s, (struct sockaddr *)&a, sizeof a), EROFS);
	a = addr("/dev/s");
	expect("bind in /dev", bind(s, (struct sockaddr *)&a, sizeof a), EROFS);
	memset(a.sun_path, 'x', sizeof a.sun_path); /* no NUL: Linux takes all 108 bytes (in the working directory) */
	expect("a 108-byte name", bind(s, (struct sockaddr *)&a, sizeof a), 0);
	char name[sizeof a.sun_path + 1];
	memcpy(name, a.sun_path, sizeof a.sun_path);
	name[sizeof a.sun_path] = 0;
	struct stat st;
	if (lstat(name, &st) || !S_ISSOCK(st.st_mode)) {
		printf("UNEXPECTED the 108-byte name is not a socket node\n");
		bad++;
	}
	close(s);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	mkfifo("/tmp/fifo", 0600);
	a = addr("/tmp/fifo");
	expect("connect to a FIFO", connect(s, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
	a = addr("/tmp");
	expect("connect to a directory", connect(s, (struct sockaddr *)&a, sizeof a), ECONNREFUSED);
	close(s);

	/* a listener's queue: full, then dropped with the listener */
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	a = addr("/tmp/listener");
	expect("bind", bind(l, (struct sockaddr *)&a, sizeof a), 0);
	expect("listen", listen(l, 2), 0);
	int queued = 0;
	for (int i = 0; i < 10; i++) {
		int k = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(k, (struct sockaddr *)&a, sizeof a) == 0)
			queued++;
		else
			expect("connect to a full queue", -1, EAGAIN);
	}
	if (queued != 3) {
		printf("UNEXPECTED %d connections queued (backlog 2: 3, as Linux)\n", queued);
		bad++;
	}
	close(l);
	/* 2000 connections made, used and closed */
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	a = addr("\0many");
	a.sun_path[0] = 0;
	socklen_t alen = offsetof(struct sockaddr_un, sun_path) + 5;
	expect("bind abstract", bind(l, (struct sockaddr *)&a, alen), 0);
	expect("listen", listen(l, 16), 0);
	for (int i = 0; i < 2000; i++) {
		int k = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(k, (struct sockaddr *)&a, alen)) {
			expect("connect", -1, 0);
			break;
		}
		int t = accept(l, 0, 0);
		char got = 0;
		if (t < 0 || write(k, "y", 1) != 1 || read(t, &got, 1) != 1 || got != 'y') {
			printf("UNEXPECTED connection %d\n", i);
			bad++;
			break;
		}
		close(t), close(k);
	}
	printf("%d unexpected\n", bad);
	return bad != 0;
}
