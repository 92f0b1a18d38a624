/* SPDX-License-Identifier: GPL-2.0-only */
/* The command line: husk run's options, the same from a policy file
 * (policy.h), and --help. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errmsg.h"
#include "exit_codes.h"
#include "husk/abi.h"
#include "husk/boot_tree.h"
#include "net/net_config.h"
#include "options.h"
#include "option_table.h"
#include "policy.h"

void options_help(void)
{
	printf("Usage: husk run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	       "       husk run --image NAME [OPTIONS] [--] COMMAND [ARGS...]\n"
	       "       husk images                  list the images, their aliases and versions\n"
	       "       husk image build NAME PACKAGE...  a Debian image from Debian packages\n"
	       "       husk image ls | rm NAME...   the Debian images built\n"
	       "       husk cache ls | clear [KIND...]  what the cache holds (cap: HUSK_CACHE_MAX)\n"
	       "       husk snapshot build [--preload MODULES] [OPTIONS] PROGRAM | ls | rm [NAME...]\n"
	       "                                    the snapshots runs start from (--cold: none)\n"
	       "       husk policy show [OPTIONS]   print the effective policy as JSON\n"
	       "       husk writeback IMAGE DIR     retry a workdir write-back that could not complete\n"
	       "Run PROGRAM in a fresh hardware-isolated microVM and exit with its status.\n"
	       "PROGRAM is an image name or alias (python3, lua; see husk images) or the path of\n"
	       "a static x86-64 ELF executable.  `husk run python FILE.py` runs a host script:\n"
	       "without -w it is copied into /workdir, a scratch directory in guest RAM.\n"
	       "With --image NAME the guest's root file system is that Debian image (husk image\n"
	       "build) and COMMAND is looked up in it along PATH: Debian's own programs run\n"
	       "unmodified (python3, bash, ...).\n"
	       "\n"
	       "Options:\n"
	       "  -m, --memory SIZE     guest memory, e.g. 256M or 1G (default 256M; %lluM to %lluG)\n"
	       "  -t, --timeout SECS    stop the run after SECS seconds of wall time (exit 124)\n"
	       "      --cpu-time SECS   stop the run after SECS seconds of CPU time (exit 152)\n"
	       "      --output-limit SIZE  stdout and stderr together (default 64M); a write\n"
	       "                        beyond it ends the run (exit 153) with a marker on stderr\n"
	       "      --open-files N    files the program may have open at once, 3 to 1024\n"
	       "                        (default 1024; beyond it open fails with EMFILE)\n"
	       "      --pids N          threads and processes alive at once, 1 to %d\n"
	       "                        (default %d; beyond it a new thread fails with EAGAIN)\n"
	       "  -e, --env KEY=VALUE   set a variable in the program's environment (repeatable;\n"
	       "                        otherwise it holds only the image's defaults and\n"
	       "                        PATH, HOME, LANG: nothing of the host's)\n"
	       "      --ro NAME=PATH    attach PATH (a directory or an ext2 image) read-only at\n"
	       "                        /data/NAME (repeatable); a directory's data is read\n"
	       "                        from its files, never copied\n"
	       "  -w, --workdir DIR     attach DIR (created if missing) writable at /workdir, the\n"
	       "                        current directory (without -w: a scratch directory in\n"
	       "                        RAM, discarded); what the program changed there is\n"
	       "                        written back to DIR after the run, whatever its outcome\n"
	       "                        (where the host changed a path too, the program's version\n"
	       "                        goes beside the host's as NAME.husk-conflict)\n"
	       "      --disk SIZE       capacity of the workdir disk (default 1G)\n"
	       "      --allow-net ENTRY let the program connect where ENTRY says (repeatable;\n"
	       "                        without one there is no network): HOST[:PORTS], HOST a\n"
	       "                        name (ports 443 and 80 by default), *.SUFFIX (its\n"
	       "                        subdomains), an address or a CIDR (every port by\n"
	       "                        default), PORTS N, N-M or *; metadata, multicast and\n"
	       "                        reserved ranges are never reachable, private and\n"
	       "                        loopback ones only by an entry inside them\n"
	       "      --deny-net ENTRY  refuse what ENTRY names, whatever allows it (repeatable)\n"
	       "      --net-loopback    AF_INET and AF_INET6 sockets on the guest's own loopback\n"
	       "                        (servers and clients among its processes; nothing leaves\n"
	       "                        the VM; implied by --allow-net)\n"
	       "      --net-dns ADDR[:PORT][,...]  the DNS servers names are resolved with\n"
	       "                        (default: the host's /etc/resolv.conf)\n"
	       "      --net-host NAME=ADDR[,ADDR...]  resolve NAME to these, without DNS\n"
	       "      --net-no-name-check  do not check the name a TLS (443) or HTTP (80)\n"
	       "                        connection asks for against the name it was allowed by\n"
	       "      --net-max-open N  connections open at once (default %u)\n"
	       "      --net-max-connects N  connects in all (default %u)\n"
	       "      --net-max-denials N  denials after which every request is refused\n"
	       "                        (default %u; 0: no limit)\n"
	       "      --net-max-bytes SIZE  bytes in and out together (default: no limit)\n"
	       "      --net-max-rate SIZE  bytes per second, in and out together (default: no\n"
	       "                        limit; a second's worth may go at once)\n"
	       "      --net-max-resolves N  names resolved per second (default %u; 0: no limit)\n"
	       "      --review          stage the workdir's changes instead of writing them back:\n"
	       "                        shown with diffs and applied as you choose on the\n"
	       "                        terminal, else kept for husk review|apply|discard\n"
	       "      --files-allow GLOB  paths the program may create, change or delete in the\n"
	       "                        workdir (repeatable; !GLOB refuses; the last match\n"
	       "                        decides; * within a name, ** across names)\n"
	       "      --files-max-size SIZE  the largest file it may write back\n"
	       "      --files-max-total SIZE  bytes of files it may write back in all\n"
	       "      --files-refuse KINDS  never write back these: symlinks, executables,\n"
	       "                        hidden (comma-separated); a refused change is\n"
	       "                        recorded in the audit and never applied\n"
	       "      --policy FILE     settings from a JSON policy file (options given win)\n"
	       "      --audit FILE      append the run's record to FILE as JSON lines (/dev/fd/N:\n"
	       "                        to the descriptor N husk inherits, e.g. a shell's >(...))\n"
	       "      --stats           a short summary of the run on stderr\n"
	       "      --cold            boot afresh instead of from a snapshot (a program starts\n"
	       "                        from one by default; see husk snapshot --help)\n"
	       "      --no-pvm          do not use kvm_pvm even where /dev/kvm offers it\n"
	       "      --no-namespaces   keep the VMM in husk's namespaces and root (saves\n"
	       "                        ~0.4 ms; by default it is pid 1 of a new pid namespace,\n"
	       "                        in mount, network, IPC and UTS namespaces of husk's own\n"
	       "                        (kept in /run/husk/ns) with an empty root)\n"
	       "      --syscalls        list the system calls the program made, on stderr\n"
	       "      --kernel-selftest boot the guest kernel into its self-test instead of a program\n"
	       "  -h, --help            show this help\n"
	       "  -V, --version         show the version\n"
	       "\n"
	       "Exit status: the program's; 128+N when the program was killed by signal N;\n"
	       "120 host error, 121 guest broke the device protocol, 122 guest kernel panic,\n"
	       "123 workdir not written back, 124 timeout, 125 usage error (bad option, image,\n"
	       "program or no /dev/kvm), 152 CPU time limit, 153 output limit.\n"
	       "Images are looked up in $HUSK_IMAGES, else build/images beside the husk binary,\n"
	       "else ../lib/husk from it (an installed husk).  See husk(1).\n",
	       (unsigned long long)(HUSK_RAM_MIN >> 20), (unsigned long long)(HUSK_RAM_MAX >> 30), HUSK_PIDS_MAX,
	       HUSK_PIDS_DEFAULT, NET_MAX_OPEN_DEFAULT, NET_MAX_CONNECTS_DEFAULT, NET_MAX_DENIALS_DEFAULT,
	       NET_MAX_RESOLVES_DEFAULT);
}

uint64_t parse_bytes(const char *what, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		usage_error("bad %s '%s'", what, s);
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		usage_error("bad %s '%s'", what, s);
	if (v > (max >> shift) || (v << shift) < min || (v << shift) > max)
		usage_error("%s '%s' is outside %lluM..%lluG", what, s, (unsigned long long)(min >> 20),
			    (unsigned long long)(max >> 30));
	return (uint64_t)v << shift;
}

/* A whole number from min to max: --open-files, --pids. */
static uint32_t parse_count(const char *what, const char *s, uint32_t min, uint32_t max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		usage_error("bad %s '%s' (a number from %u to %u)", what, s, min, max);
	return (uint32_t)v;
}

/* Guest memory: rounded up to 2 MiB pages. */
static uint64_t parse_memory(const char *s)
{
	uint64_t bytes = parse_bytes("memory size", s, HUSK_RAM_MIN, HUSK_RAM_MAX);
	return (bytes + (2ull << 20) - 1) & ~((2ull << 20) - 1);
}

static double parse_seconds(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e7)
		usage_error("bad timeout '%s' (seconds, more than 0)", s);
	return v;
}


/* --deny-net ENTRY is the entry "!ENTRY". */
static char *deny_entry(const char *e)
{
	char *s;
	if (asprintf(&s, "!%s", e) < 0)
		die(EXIT_INTERNAL, "out of memory");
	return s;
}

/* The lists options add to (-e, --ro, --allow-net, ...): room for n. */
static void lists_room(struct options *o, size_t n)
{
	o->env = realloc(o->env, n * sizeof *o->env);
	o->ro = realloc(o->ro, n * sizeof *o->ro);
	o->net_rules = realloc(o->net_rules, n * sizeof *o->net_rules);
	o->net_hosts = realloc(o->net_hosts, n * sizeof *o->net_hosts);
	o->files.globs = realloc(o->files.globs, n * sizeof *o->files.globs);
	if (!o->env || !o->ro || !o->net_rules || !o->net_hosts || !o->files.globs)
		die(EXIT_INTERNAL, "out of memory");
}

/* One pass of getopt over argv (argv[0] is skipped); returns optind.  With
 * policy set, only --policy is taken and everything else is checked only. */
static int apply_options(int argc, char **argv, struct options *o, const char **policy)
{
	struct options scratch = *o;
	struct options *t = policy ? &scratch : o;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:m:t:e:w:hV", husk_run_options, NULL)) != -1) {
		switch (c) {
		case 'm': t->memory = parse_memory(optarg); break;
		case 'R': t->ro[t->nro++] = optarg; break;
		case 'w': t->workdir = optarg; break;
		case 'D': t->disk_size = parse_bytes("disk size", optarg, 16ull << 20, 1ull << 40) & ~4095ull; break;
		case 't': t->timeout = parse_seconds(optarg); break;
		case 'C': t->cpu_time = parse_seconds(optarg); break;
		case 'O': t->output_limit = parse_bytes("output limit", optarg, 1, 1ull << 50); break;
		case 'e':
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage_error("bad environment variable '%s' (expected KEY=VALUE)", optarg);
			t->env[t->nenv++] = optarg;
			break;
		case 'p':
			if (policy)
				*policy = optarg;
			break;
		case 'A': t->audit = optarg; break;
		case 's': t->stats = 1; break;
		case 'F': t->open_files = parse_count("open-files limit", optarg, 3, HUSK_OPEN_FILES_MAX); break;
		case 'T': t->pids = parse_count("pids limit", optarg, 1, HUSK_PIDS_MAX); break;
		case 'P': t->no_pvm = 1; break;
		case 'k': t->cold = 1; break;
		case 'N': t->no_namespaces = 1; break;
		case 'S': t->syscalls = 1; break;
		case 'K': t->selftest = 1; break;
		case 'a': t->net_rules[t->nnet_rules++] = optarg; break;
		case 'd': t->net_rules[t->nnet_rules++] = deny_entry(optarg); break;
		case 'n': t->net_dns = optarg; break;
		case 'H': t->net_hosts[t->nnet_hosts++] = optarg; break;
		case 'c': t->net_no_name_check = 1; break;
		case 'L': t->net_loopback = 1; break;
		case 'o': t->net_max_open = parse_count("net-max-open limit", optarg, 1, 1024); break;
		case 'x': t->net_max_connects = parse_count("net-max-connects limit", optarg, 1, UINT32_MAX); break;
		case 'y': t->net_max_denials = parse_count("net-max-denials limit", optarg, 0, UINT32_MAX); break;
		case 'b': t->net_max_bytes = parse_bytes("net-max-bytes limit", optarg, 1, 1ull << 50); break;
		case 'r': t->net_max_rate = parse_bytes("net-max-rate limit", optarg, 1, 1ull << 40); break;
		case 'q': t->net_max_resolves = parse_count("net-max-resolves limit", optarg, 0, UINT32_MAX); break;
		case 'W': t->review = 1; break;
		case 'f':
			if (!optarg[0] || !strcmp(optarg, "!"))
				usage_error("bad --files-allow glob '%s'", optarg);
			t->files.globs[t->files.nglobs++] = optarg;
			break;
		case 'z': t->files.max_file = parse_bytes("files-max-size limit", optarg, 1, 1ull << 50); break;
		case 'Z': t->files.max_total = parse_bytes("files-max-total limit", optarg, 1, 1ull << 50); break;
		case 'u': {
			char why[200];
			if (file_policy_kinds(optarg, &t->files.refuse, why, sizeof why))
				usage_error("%s", why);
			break;
		}
		case 'i': t->image = optarg; break;
		case 'h': options_help(); exit(0);
		case 'V': printf("husk %s\n", HUSK_VERSION); exit(0);
		case ':': usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return optind;
}

/* The policy file's settings: turned into options (policy.h) and applied
 * like the command line's.  The lists hold room entries and get one more
 * for each of the policy's options, any of which could add to one. */
static void apply_policy(const char *policy, char *argv0, struct options *o, size_t room)
{
	char err[512];
	char **pargs = NULL;
	int npargs = policy_to_args(policy, &pargs, err, sizeof err);
	if (npargs < 0)
		die(EXIT_USAGE, "%s", err);
	lists_room(o, room + npargs);
	char **v = calloc(npargs + 2, sizeof *v);
	if (!v)
		die(EXIT_INTERNAL, "out of memory");
	v[0] = argv0;
	memcpy(v + 1, pargs, npargs * sizeof *v);
	apply_options(npargs + 1, v, o, NULL);
}

void parse_options(int argc, char **argv, struct options *o, int need_program)
{
	o->memory = 256ull << 20;
	o->disk_size = 1ull << 30;
	o->output_limit = 64ull << 20;
	o->open_files = HUSK_OPEN_FILES_MAX;
	o->pids = HUSK_PIDS_DEFAULT;
	const char *policy = NULL;
	o->net_max_open = NET_MAX_OPEN_DEFAULT;
	o->net_max_connects = NET_MAX_CONNECTS_DEFAULT;
	o->net_max_denials = NET_MAX_DENIALS_DEFAULT;
	o->net_max_resolves = NET_MAX_RESOLVES_DEFAULT;
	/* Every option could add to a list. */
	size_t room = argc + 1;
	lists_room(o, room);
	apply_options(argc, argv, o, &policy);
	if (policy)
		apply_policy(policy, argv[0], o, room);
	int first = apply_options(argc, argv, o, NULL);
	char err[512];
	if (net_options_check(o, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	if (o->selftest) {
		static char *self[] = { "husk-kernel-selftest", NULL };
		o->args = self;
		o->nargs = 1;
		return;
	}
	if (first >= argc) {
		if (need_program)
			usage_error("no program given");
		return;
	}
	o->program = argv[first];
	o->args = argv + first;
	o->nargs = argc - first;
}
