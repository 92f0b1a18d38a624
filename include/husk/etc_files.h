/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's /etc files: the guest kernel makes them in its own /etc
 * (guest/fs/initial_files.c), and a Debian image has them in its root's
 * (vmm/debian/root_fs.c).  The program runs as root (uid 0) with /tmp as
 * its home; names resolve on the guest's loopback, and DNS goes to the guest
 * kernel's own server (guest/net/dns.c). */
#ifndef HUSK_ETC_FILES_H
#define HUSK_ETC_FILES_H
#define HUSK_ETC_PASSWD "root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
#define HUSK_ETC_GROUP "root:x:0:\nnogroup:x:65534:\n"
#define HUSK_ETC_HOSTS "127.0.0.1\tlocalhost\n127.0.1.1\thusk\n::1\tlocalhost ip6-localhost ip6-loopback\n"
#define HUSK_ETC_HOSTNAME "husk\n"
#define HUSK_ETC_RESOLV_CONF "nameserver 127.0.0.1\n"
#endif
