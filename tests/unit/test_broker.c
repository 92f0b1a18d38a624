/* SPDX-License-Identifier: GPL-2.0-only */
/* vmm/net/broker.c, spoken to as the VMM's device would, in a network
 * namespace of the test's own (lo with 127.0.0.1 and 11.0.0.1, a public
 * looking address that exists nowhere else): connects allowed and refused
 * at once (the server sees nothing), the floor, names resolved or not and
 * pinned, rebinding to loopback refused, the TLS name check, bytes both
 * ways with credit, the host's end, the denial limit, malformed messages,
 * and the record of each.  Needs root (unshare). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "net/broker.h"
#include "net/dns.h"
#include "tap.h"

static int vmm, rec;
static char records[65536];
static size_t nrec;

static void put(uint32_t op, uint32_t conn, const char *addr, uint16_t port, const void *p, size_t len)
{
	static uint8_t m[HUSK_NET_MSG_MAX];
	struct husk_net_hdr h = { .op = op, .conn = conn, .len = (uint32_t)len, .buf_alloc = 65536, .port = port };
	if (addr) {
		h.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
		inet_pton(h.family, addr, h.addr);
	}
	memcpy(m, &h, sizeof h);
	if (len)
		memcpy(m + sizeof h, p, len);
	send(vmm, m, sizeof h + len, 0);
}

/* The next message from the broker about conn but CREDIT (within 5 s):
 * its header; payload in p.  (Others: a closed server's SHUTDOWN.) */
static struct husk_net_hdr get_for(uint32_t conn, uint8_t *p, size_t *len)
{
	static uint8_t m[HUSK_NET_MSG_MAX];
	struct husk_net_hdr h = { 0 };
	ssize_t n;
	do {
		struct pollfd pfd = { vmm, POLLIN, 0 };
		if (poll(&pfd, 1, 5000) != 1)
			return (struct husk_net_hdr){ 0 };
		n = recv(vmm, m, sizeof m, 0);
		if (n < (ssize_t)sizeof h)
			return (struct husk_net_hdr){ 0 };
		memcpy(&h, m, sizeof h);
	} while (h.op == HUSK_NET_CREDIT || h.conn != conn);
	if (p)
		memcpy(p, m + sizeof h, (size_t)n - sizeof h);
	if (len)
		*len = (size_t)n - sizeof h;
	return h;
}

static const char *read_records(void)
{
	ssize_t n;
	while ((n = read(rec, records + nrec, sizeof records - 1 - nrec)) > 0)
		nrec += (size_t)n;
	records[nrec] = 0;
	return records;
}

static int listener(const char *addr, uint16_t port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, addr, &a.sin_addr);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16))
		return -1;
	return s;
}

/* The connection the listener got within ms, or -1. */
static int accepted(int l, int ms)
{
	struct pollfd pfd = { l, POLLIN, 0 };
	return poll(&pfd, 1, ms) == 1 ? accept(l, NULL, NULL) : -1;
}

static size_t client_hello(uint8_t *out, const char *name)
{
	size_t nl = strlen(name), ext = 9 + nl, body = 2 + 32 + 1 + 4 + 2 + 2 + ext, n = 0;
	uint8_t h[] = { 22, 3, 1, (uint8_t)((body + 4) >> 8), (uint8_t)(body + 4), 1, 0, (uint8_t)(body >> 8), (uint8_t)body, 3, 3 };
	memcpy(out, h, sizeof h), n = sizeof h;
	memset(out + n, 9, 32), n += 32;
	uint8_t mid[] = { 0, 0, 2, 0x13, 1, 1, 0, (uint8_t)(ext >> 8), (uint8_t)ext, 0, 0, (uint8_t)((nl + 5) >> 8),
			  (uint8_t)(nl + 5), (uint8_t)((nl + 3) >> 8), (uint8_t)(nl + 3), 0, (uint8_t)(nl >> 8), (uint8_t)nl };
	memcpy(out + n, mid, sizeof mid), n += sizeof mid;
	memcpy(out + n, name, nl);
	return n + nl;
}

/* A DNS server on 127.0.0.1:5353 (guest/net/dns.c's codec): dns.test is
 * 11.0.0.1, rebind.test 127.0.0.1, any other name NXDOMAIN; each name asked
 * goes to the pipe `asked`. */
static pid_t dns_server(int asked)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(5353) };
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (bind(s, (struct sockaddr *)&a, sizeof a))
		return -1;
	pid_t pid = fork();
	if (pid)
		return close(s), pid;
	for (;;) {
		uint8_t q[512], out[512];
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(s, q, sizeof q, 0, (struct sockaddr *)&from, &fl);
		struct dns_query d;
		if (n <= 0 || dns_query_parse(q, (size_t)n, &d))
			continue;
		dprintf(asked, "%s %u\n", d.name, d.qtype);
		struct husk_net_addr addr = { .family = AF_INET };
		int known = !strcmp(d.name, "dns.test") || !strcmp(d.name, "rebind.test");
		memcpy(addr.addr, !strcmp(d.name, "dns.test") ? "\x0b\0\0\x01" : "\x7f\0\0\x01", 4);
		size_t m = dns_answer(&d, q, known ? 0 : HUSK_NET_NXDOMAIN, &addr, known, out, sizeof out);
		sendto(s, out, m, 0, (struct sockaddr *)&from, fl);
	}
}

/* Names by DNS, through the confined broker (no /etc/hosts, no file). */
static void check_dns(int l3)
{
	struct broker_config c = { .dns = 1, .dns_servers = "127.0.0.1:5353", .check_names = 1, .record_fd = -1 };
	char err[256];
	int ap[2];
	pipe2(ap, O_CLOEXEC | O_NONBLOCK);
	pid_t server = dns_server(ap[1]);
	close(ap[1]);
	ok(server > 0 && !rules_add(&c.rules, "dns.test", err, sizeof err) && !rules_add(&c.rules, "rebind.test", err, sizeof err),
	   "a DNS server of the test's own on 127.0.0.1:5353; rules for dns.test and rebind.test");
	pid_t pid = broker_start(&c, &vmm, err, sizeof err);
	uint8_t p[HUSK_NET_MSG_MAX];
	size_t len = 0;
	put(HUSK_NET_RESOLVE, 30, NULL, 0, "dns.test", 8);
	struct husk_net_hdr h = get_for(30, p, &len);
	struct husk_net_addr ans = { 0 };
	memcpy(&ans, p, len >= sizeof ans ? sizeof ans : 0);
	ok(h.op == HUSK_NET_RESOLVED && !h.error && len >= sizeof ans && ans.family == AF_INET && ans.addr[0] == 11,
	   "RESOLVE dns.test: the DNS server's answer, 11.0.0.1 (error %d, %zu bytes)", h.error, len);
	put(HUSK_NET_CONNECT, 31, "11.0.0.1", 443, NULL, 0);
	h = get_for(31, NULL, NULL);
	int s = accepted(l3, 2000);
	ok(h.op == HUSK_NET_CONNECTED && s >= 0, "CONNECT to it: allowed by the pinned name");
	if (s >= 0)
		close(s);
	put(HUSK_NET_RESOLVE, 32, NULL, 0, "denied.test", 11);
	h = get_for(32, NULL, &len);
	ok(h.op == HUSK_NET_RESOLVED && h.error == HUSK_NET_NXDOMAIN, "RESOLVE of a name no rule lists: NXDOMAIN");
	put(HUSK_NET_RESOLVE, 33, NULL, 0, "rebind.test", 11);
	h = get_for(33, NULL, &len);
	put(HUSK_NET_CONNECT, 34, "127.0.0.1", 443, NULL, 0);
	struct husk_net_hdr h2 = get_for(34, NULL, NULL);
	ok(h.op == HUSK_NET_RESOLVED && !h.error && h2.op == HUSK_NET_RESET && h2.error == EACCES,
	   "rebind.test answers 127.0.0.1: resolved, but a connect there is refused");
	char asked[1024] = "";
	usleep(100000);
	ssize_t n = read(ap[0], asked, sizeof asked - 1);
	asked[n > 0 ? n : 0] = 0;
	ok(strstr(asked, "dns.test 1") && strstr(asked, "rebind.test 1") && !strstr(asked, "denied"),
	   "the DNS server was asked for the listed names only, never for denied.test (%s)", strtok(asked, "\n"));
	close(vmm);
	int st;
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st), "the confined broker resolved and ended 0 (%#x)", st);
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	rules_free(&c.rules);
}

int main(void)
{
	if (unshare(CLONE_NEWNET)) {
		ok(0, "unshare(CLONE_NEWNET) for the test's own network: %s (run as root)", strerror(errno));
		return tap_done();
	}
	int ipr = system("ip link set lo up && ip addr add 11.0.0.1/32 dev lo");
	ok(ipr == 0, "a network namespace of the test's own: lo up, 11.0.0.1 on it");
	int l1 = listener("127.0.0.1", 8080), l2 = listener("127.0.0.1", 8081), l3 = listener("11.0.0.1", 443);
	ok(l1 >= 0 && l2 >= 0 && l3 >= 0, "servers on 127.0.0.1:8080, 127.0.0.1:8081 and 11.0.0.1:443");

	struct broker_config c = { .check_names = 1, .max_denials = 12, .record_fd = -1 };
	char err[256];
	struct broker_host hosts[3];
	const char *entries[] = { "127.0.0.1/32:8080", "svc.test:8081", "pub.test", "other.test", NULL };
	int good = 1;
	for (int i = 0; entries[i]; i++)
		good &= !rules_add(&c.rules, entries[i], err, sizeof err);
	good &= !broker_host_parse("svc.test=127.0.0.1", &hosts[0], err, sizeof err) &&
		!broker_host_parse("pub.test=11.0.0.1", &hosts[1], err, sizeof err) &&
		!broker_host_parse("other.test=11.0.0.1", &hosts[2], err, sizeof err);
	ok(good, "rules and a hosts map");
	c.hosts = hosts, c.nhosts = 3;
	int sp[2], rp[2];
	socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp);
	pipe2(rp, O_CLOEXEC | O_NONBLOCK);
	c.record_fd = rp[1];
	pid_t broker = fork();
	if (broker == 0) {
		close(sp[0]);
		_exit(broker_run(sp[1], &c) ? 1 : 0);
	}
	close(sp[1]);
	close(rp[1]);
	vmm = sp[0], rec = rp[0];

	uint8_t p[HUSK_NET_MSG_MAX];
	size_t len;
	put(HUSK_NET_CONNECT, 1, "127.0.0.1", 8080, NULL, 0);
	struct husk_net_hdr h = get_for(1, NULL, NULL);
	int s1 = accepted(l1, 2000);
	ok(h.op == HUSK_NET_CONNECTED && h.conn == 1 && h.family == AF_INET && s1 >= 0,
	   "CONNECT to 127.0.0.1:8080 (listed): CONNECTED, the server accepts (op %u, error %d)", h.op, h.error);
	put(HUSK_NET_DATA, 1, NULL, 0, "hello", 5);
	char got[16] = "";
	struct pollfd sp1 = { s1, POLLIN, 0 };
	ok(poll(&sp1, 1, 2000) == 1 && read(s1, got, sizeof got) == 5 && !memcmp(got, "hello", 5), "DATA reaches the server");
	write(s1, "world", 5);
	h = get_for(1, p, &len);
	ok(h.op == HUSK_NET_DATA && len == 5 && !memcmp(p, "world", 5), "the server's bytes come back as DATA");
	close(s1);
	h = get_for(1, NULL, NULL);
	ok(h.op == HUSK_NET_SHUTDOWN && (h.flags & HUSK_NET_SHUT_WR), "the server's close: SHUTDOWN (it sends no more)");
	put(HUSK_NET_RESET, 1, NULL, 0, NULL, 0);

	put(HUSK_NET_CONNECT, 2, "127.0.0.1", 8081, NULL, 0);
	h = get_for(2, NULL, NULL);
	ok(h.op == HUSK_NET_RESET && h.error == EACCES && accepted(l2, 200) < 0,
	   "CONNECT to 127.0.0.1:8081 (not listed by address): RESET EACCES at once, the server sees nothing");
	put(HUSK_NET_CONNECT, 3, "169.254.169.254", 80, NULL, 0);
	h = get_for(3, NULL, NULL);
	ok(h.op == HUSK_NET_RESET && h.error == EACCES, "CONNECT to 169.254.169.254: EACCES");

	put(HUSK_NET_RESOLVE, 4, NULL, 0, "nope.test", 9);
	h = get_for(4, NULL, &len);
	ok(h.op == HUSK_NET_RESOLVED && h.conn == 4 && h.error == HUSK_NET_NXDOMAIN && len == 0,
	   "RESOLVE of a name no rule lists: NXDOMAIN");
	put(HUSK_NET_RESOLVE, 5, NULL, 0, "SVC.test.", 9);
	h = get_for(5, p, &len);
	struct husk_net_addr ans;
	memcpy(&ans, p, sizeof ans);
	ok(h.op == HUSK_NET_RESOLVED && !h.error && len == sizeof ans && ans.family == AF_INET && ans.addr[0] == 127,
	   "RESOLVE of a listed name (any case, trailing dot): its address");
	put(HUSK_NET_CONNECT, 6, "127.0.0.1", 8081, NULL, 0);
	h = get_for(6, NULL, NULL);
	ok(h.op == HUSK_NET_RESET && h.error == EACCES && accepted(l2, 200) < 0,
	   "CONNECT to the loopback address that name resolved to: refused (rebinding), the server sees nothing");

	put(HUSK_NET_CONNECT, 7, "11.0.0.1", 443, NULL, 0);
	h = get_for(7, NULL, NULL);
	ok(h.op == HUSK_NET_RESET && h.error == EACCES, "CONNECT to 11.0.0.1:443 before any name resolved to it: refused");
	put(HUSK_NET_RESOLVE, 8, NULL, 0, "pub.test", 8);
	h = get_for(8, NULL, NULL);
	put(HUSK_NET_CONNECT, 9, "11.0.0.1", 443, NULL, 0);
	h = get_for(9, NULL, NULL);
	int s3 = accepted(l3, 2000);
	ok(h.op == HUSK_NET_CONNECTED && s3 >= 0, "after pub.test resolved to it: CONNECTED (the pinned name allows it)");
	size_t hl = client_hello(p, "pub.test");
	put(HUSK_NET_DATA, 9, NULL, 0, p, hl);
	struct pollfd sp3 = { s3, POLLIN, 0 };
	ssize_t r3 = poll(&sp3, 1, 2000) == 1 ? read(s3, got, 5) : -1;
	ok(r3 == 5 && got[0] == 22, "a ClientHello for pub.test goes through to the server");
	put(HUSK_NET_CONNECT, 10, "11.0.0.1", 443, NULL, 0);
	h = get_for(10, NULL, NULL);
	int s4 = accepted(l3, 2000);
	hl = client_hello(p, "evil.example.com");
	put(HUSK_NET_DATA, 10, NULL, 0, p, hl);
	h = get_for(10, NULL, NULL);
	struct pollfd sp4 = { s4, POLLIN, 0 };
	int seen = poll(&sp4, 1, 300) == 1 ? (int)read(s4, got, 5) : -1;
	ok(h.op == HUSK_NET_RESET && h.error == ECONNRESET && h.conn == 10 && seen <= 0,
	   "a ClientHello for another name: RESET before any byte reaches the server (%d)", seen);
	close(s3);
	close(s4);

	put(HUSK_NET_DATA, 999, NULL, 0, "x", 1); /* no such connection */
	uint8_t junk[10] = { 1, 2, 3 };
	send(vmm, junk, sizeof junk, 0); /* shorter than a header */
	struct husk_net_hdr lie = { .op = HUSK_NET_DATA, .conn = 1, .len = 1000 };
	send(vmm, &lie, sizeof lie, 0); /* a length it does not have */
	put(HUSK_NET_CONNECT, 11, "127.0.0.1", 8080, NULL, 0);
	h = get_for(11, NULL, NULL);
	int s5 = accepted(l1, 2000);
	ok(h.op == HUSK_NET_CONNECTED && h.conn == 11 && s5 >= 0, "after malformed messages the broker goes on");
	close(s5);

	int refused = 0;
	for (uint16_t port = 9000; port < 9020; port++) {
		put(HUSK_NET_CONNECT, 100 + port, "127.0.0.1", port, NULL, 0);
		h = get_for(100 + port, NULL, NULL);
		refused += h.op == HUSK_NET_RESET && h.error == EACCES;
	}
	put(HUSK_NET_CONNECT, 12, "127.0.0.1", 8080, NULL, 0);
	h = get_for(12, NULL, NULL);
	ok(refused == 20 && h.op == HUSK_NET_RESET && accepted(l1, 200) < 0,
	   "a port scan: 20 refused; past the denial limit (12) an allowed connect is refused too");

	close(vmm);
	int st;
	ok(waitpid(broker, &st, 0) == broker && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the VMM's end closed: the broker ends, 0");
	const char *r = read_records();
	ok(strstr(r, "\"op\":\"connect\"") && strstr(r, "\"verdict\":\"allowed\"") && strstr(r, "\"addr\":\"127.0.0.1\""),
	   "the record has the allowed connect");
	ok(strstr(r, "inside the floor") != NULL, "and the floor's denial");
	ok(strstr(r, "\"op\":\"resolve\"") && strstr(r, "\"name\":\"nope.test\""), "and the refused name");
	ok(strstr(r, "private or loopback") != NULL, "and the rebinding");
	ok(strstr(r, "asks for another name (TLS: evil.example.com)") != NULL, "and the name check");
	ok(strstr(r, "shorter than a header") && strstr(r, "its length is not its header's"), "and the malformed messages");
	ok(strstr(r, "the denial limit") != NULL, "and the denial limit");
	if (tap_failed)
		printf("# records:\n%s", r);

	/* the same broker as husk starts it: its own process, confined */
	int rp2[2];
	pipe2(rp2, O_CLOEXEC | O_NONBLOCK);
	c.record_fd = rp2[1];
	c.max_denials = 0;
	pid_t pid = broker_start(&c, &vmm, err, sizeof err);
	close(rp2[1]);
	ok(pid > 0, "broker_start: pid %d (%s)", (int)pid, pid > 0 ? "" : err);
	put(HUSK_NET_CONNECT, 20, "127.0.0.1", 8080, NULL, 0);
	h = get_for(20, NULL, NULL);
	int s6 = accepted(l1, 2000);
	ok(h.op == HUSK_NET_CONNECTED && s6 >= 0, "confined, it connects where the rules allow (op %u)", h.op);
	put(HUSK_NET_DATA, 20, NULL, 0, "ping", 4);
	struct pollfd sp6 = { s6, POLLIN, 0 };
	ok(poll(&sp6, 1, 2000) == 1 && read(s6, got, sizeof got) == 4 && !memcmp(got, "ping", 4), "and relays bytes");
	put(HUSK_NET_RESOLVE, 21, NULL, 0, "pub.test", 8);
	h = get_for(21, p, &len);
	ok(h.op == HUSK_NET_RESOLVED && !h.error && len == sizeof(struct husk_net_addr), "and resolves a listed name");
	char path[64], status[4096] = "";
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	size_t sl = f ? fread(status, 1, sizeof status - 1, f) : 0;
	status[sl] = 0;
	if (f)
		fclose(f);
	ok(strstr(status, "Seccomp:\t2") != NULL && strstr(status, "NoNewPrivs:\t1") != NULL, "it runs under a seccomp filter");
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	int fds = 0;
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));)
		fds += e->d_name[0] != '.';
	if (d)
		closedir(d);
	ok(fds >= 4 && fds <= 6, "with its socket, the record, stdio and the one connection: %d fds", fds);
	close(s6);
	close(vmm);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "its socket closed, it ends with 0 (status %#x: a call outside its filter would be SIGSYS)", st);
	rules_free(&c.rules);
	check_dns(l3);
	return tap_done();
}
