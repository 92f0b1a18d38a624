/* expected: socket() of every family but AF_UNIX returns -1 with EAFNOSUPPORT; socketpair(AF_INET) fails;
 * socketpair(AF_UNIX), a listening AF_UNIX socket and pipe work, inside the VM only (bytes go round within it);
 * exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void)
{
	static const int fams[] = { AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK };
	int bad = 0;
	for (unsigned i = 0; i < sizeof fams / sizeof fams[0]; i++) {
		errno = 0;
		int s = socket(fams[i], SOCK_STREAM, 0);
		printf("socket(%d): %d %s\n", fams[i], s, strerror(errno));
		bad += !(s == -1 && errno == EAFNOSUPPORT);
	}
	int sv[2];
	errno = 0;
	int r = socketpair(AF_INET, SOCK_STREAM, 0, sv);
	printf("socketpair(AF_INET): %d %s\n", r, strerror(errno));
	bad += r != -1;
	char got[4] = "";
	r = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	bad += r != 0 || write(sv[0], "abc", 3) != 3 || read(sv[1], got, 3) != 3 || memcmp(got, "abc", 3);
	printf("socketpair(AF_UNIX): %d, %.3s\n", r, got);
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/tmp/listener" };
	int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0), s = -1;
	bad += l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
	       connect(c, (struct sockaddr *)&a, sizeof a) || (s = accept(l, 0, 0)) < 0 || write(c, "def", 3) != 3 ||
	       read(s, got, 3) != 3 || memcmp(got, "def", 3);
	printf("AF_UNIX listener: %d %d %d, %.3s\n", l, c, s, got);
	r = pipe(sv);
	bad += r != 0 || write(sv[1], "xyz", 3) != 3 || read(sv[0], got, 3) != 3 || memcmp(got, "xyz", 3);
	printf("pipe: %d, %.3s\n", r, got);
	printf("%d unexpected\n", bad);
	return bad != 0;
}
