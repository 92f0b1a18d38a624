/* SPDX-License-Identifier: GPL-2.0-only */
/* husk's version: the executable's (husk --version, the audit) and
 * libhusk's (husk_version). */
#ifndef HUSK_VERSION_H
#define HUSK_VERSION_H
#define HUSK_VERSION "0.1.0"
#endif
