/* expected: socket() of every family returns -1 with EAFNOSUPPORT; socketpair and pipe fail too; exit 0 */
/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	static const int fams[] = { AF_INET, AF_INET6, AF_UNIX, AF_NETLINK, AF_PACKET, AF_VSOCK };
	int bad = 0;
	for (unsigned i = 0; i < sizeof fams / sizeof fams[0]; i++) {
		errno = 0;
		int s = socket(fams[i], SOCK_STREAM, 0);
		printf("socket(%d): %d %s\n", fams[i], s, strerror(errno));
		bad += !(s == -1 && errno == EAFNOSUPPORT);
	}
	int sv[2];
	errno = 0;
	int r = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	printf("socketpair: %d %s\n", r, strerror(errno));
	bad += r != -1;
	errno = 0;
	r = pipe(sv);
	printf("pipe: %d %s\n", r, strerror(errno));
	bad += r != -1;
	printf("%d unexpected\n", bad);
	return bad != 0;
}
