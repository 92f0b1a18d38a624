/* SPDX-License-Identifier: GPL-2.0-only */
/* husk's own exit statuses.  Otherwise husk exits with the program's status,
 * or 128 + signal when the program faulted. */
#ifndef HUSK_EXIT_CODES_H
#define HUSK_EXIT_CODES_H
#define EXIT_INTERNAL    120 /* husk or KVM failed on the host */
#define EXIT_GUEST_ERROR 121 /* the guest broke the device protocol (bad descriptor, unknown MMIO/port) */
#define EXIT_PANIC       122 /* the guest kernel panicked or crashed */
#define EXIT_WORKDIR     123 /* the workdir could not be written back (fully) */
#define EXIT_TIMEOUT     124 /* --timeout expired */
#define EXIT_CPU         152 /* --cpu-time reached: 128 + SIGXCPU, as RLIMIT_CPU would */
#define EXIT_OUTPUT      153 /* --output-limit passed: 128 + SIGXFSZ, as RLIMIT_FSIZE would */
#define EXIT_USAGE       125 /* bad command line, image, program file, or no /dev/kvm */
#endif
