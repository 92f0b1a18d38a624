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
#include "husk/etc_files.h"

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
		{ "passwd", HUSK_ETC_PASSWD },
		{ "group", HUSK_ETC_GROUP },
		{ "hosts", HUSK_ETC_HOSTS },
		{ "hostname", HUSK_ETC_HOSTNAME },
		/* musl asks the guest kernel's DNS server without this file too, glibc reads it */
		{ "resolv.conf", HUSK_ETC_RESOLV_CONF },
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
	const void *data = boot.script_data ? boot.script_data : (const void *)boot.script_gpa;
	int r = put_file(m, boot.script_name, 0444, data, boot.script_size);
	if (!boot.script_data)
		mem_release_boot_data(boot.script_gpa, boot.script_size);
	return r;
}
