/* SPDX-License-Identifier: GPL-2.0-only */
/* What the RAM file systems start with: /etc's few files (the run's one
 * user, root, as getuid reports; the loopback names), and in the scratch
 * /workdir the script the VMM passed (then its boot pages are freed).
 * Filled on first use, like every mount. */
#include <errno.h>
#include <string.h>
#include "kernel.h"
#include "linux_abi.h"
#include "fs/vfs.h"

static int put_file(struct mount *m, const char *name, uint32_t mode, const void *data, size_t len)
{
	uint32_t ino;
	int r = m->ops->create(m->fs, m->ops->root, name, strlen(name), S_IFREG | mode, &ino);
	if (r)
		return r;
	long n = len ? m->ops->write(m->fs, ino, 0, data, len) : 0;
	return n < 0 ? (int)n : (size_t)n != len ? -EIO : 0;
}

extern const char etc_services[], etc_services_end[]; /* services.S: Debian's netbase file */

int etc_populate(struct mount *m)
{
	static const struct { const char *name, *text; } files[] = {
		{ "passwd", "root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n" },
		{ "group", "root:x:0:\nnogroup:x:65534:\n" },
		{ "hosts", "127.0.0.1\tlocalhost\n127.0.1.1\thusk\n::1\tlocalhost ip6-localhost ip6-loopback\n" },
		{ "hostname", "husk\n" },
		/* the guest kernel's own DNS server (net/inet.c): musl asks it without
		 * this file too, glibc reads it */
		{ "resolv.conf", "nameserver 127.0.0.1\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		int r = put_file(m, files[i].name, 0444, files[i].text, strlen(files[i].text));
		if (r)
			return r;
	}
	return put_file(m, "services", 0444, etc_services, (size_t)(etc_services_end - etc_services));
}

int scratch_populate(struct mount *m)
{
	if (!boot.script_name)
		return 0;
	const void *data = (const void *)boot.script_gpa;
	int r = put_file(m, boot.script_name, 0444, data, boot.script_size);
	mem_release_boot_data(boot.script_gpa, boot.script_size);
	return r;
}
