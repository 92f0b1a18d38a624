/* SPDX-License-Identifier: GPL-2.0-only */
/* A run's settings, from the command line and the policy file. */
#ifndef HUSK_OPTIONS_H
#define HUSK_OPTIONS_H
#include <stdint.h>

#include "version.h"
#include "review/file_policy.h"
/* --pids: threads and processes alive at once in the guest (the default,
 * HUSK_PIDS_DEFAULT, is the boot tree's: husk/boot_tree.h). */
#define HUSK_PIDS_MAX 4096

struct options {
	uint64_t memory;
	double timeout, cpu_time;
	uint64_t output_limit;
	uint32_t open_files;
	uint32_t pids;
	char **env;
	int nenv;
	int no_pvm, no_namespaces, syscalls, selftest, stats;
	int cold;           /* --cold: boot afresh, no snapshot (vmm/snapshot/snapshot.h) */
	const char *audit;  /* --audit FILE */
	char **ro;       /* --ro NAME=PATH */
	int nro;
	const char *workdir;
	uint64_t disk_size;
	/* The network (docs/network.md): none unless an entry allows something. */
	char **net_rules;   /* --allow-net ENTRY, --deny-net ENTRY (as "!ENTRY"), in order */
	int nnet_rules;
	char **net_hosts;   /* --net-host NAME=ADDR[,ADDR...]: answered without DNS */
	int nnet_hosts;
	const char *net_dns; /* --net-dns ADDR[:PORT],...: the DNS servers the broker asks */
	int net_no_name_check;
	int net_loopback;   /* --net-loopback: AF_INET sockets between the guest's own processes only */
	uint32_t net_max_open, net_max_connects, net_max_denials, net_max_resolves;
	uint64_t net_max_bytes, net_max_rate;  /* 0: no limit */
	int review;         /* --review: the workdir's changes staged for a person (review/stage.h) */
	struct file_policy files; /* --files-*: what the program may change in the workdir */
	const char *image;  /* --image NAME: a Debian image (husk image build) as the guest's root; program is a command in it */
	const char *program;
	char **args; /* argv of the program, args[0] = program as given */
	int nargs;
};

/* Defaults, then the policy file's settings (--policy), then the options in
 * argv (argv[0] is skipped; they win).  A bad option ends husk with
 * EXIT_USAGE, --help and --version with 0.  With need_program, argv must
 * name the program (unless --kernel-selftest). */
void parse_options(int argc, char **argv, struct options *o, int need_program);
/* husk --help. */
void options_help(void);
/* "256M", "1G", "2T", "1048576": bytes from min to max, else a usage error
 * naming `what`. */
uint64_t parse_bytes(const char *what, const char *s, uint64_t min, uint64_t max);
#endif
