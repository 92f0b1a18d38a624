/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest's /etc/services: Debian's netbase file as the build host has it
 * (scripts/install-deps installs netbase), for getservbyname and
 * getaddrinfo's service names. */
	.section .rodata
	.globl etc_services, etc_services_end
etc_services:
	.incbin ETC_SERVICES
etc_services_end:
	.section .note.GNU-stack, "", @progbits
