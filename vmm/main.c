/* husk: run one program in a fresh microVM.  Command line, then the run:
 * create the VM, load kernel and program, describe the machine in a device
 * tree, run, report. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include "audit.h"
#include "boot_fdt.h"
#include "disks.h"
#include "confine.h"
#include "isolate.h"
#include "elf_load.h"
#include "exit_codes.h"
#include "husk/abi.h"
#include "options.h"
#include "policy.h"
#include "run.h"
#include "virtio_blk.h"
#include "virtio_console.h"
#include "writeback.h"
#include "extract.h"
#include "vm.h"

#ifndef HUSK_VERSION
#define HUSK_VERSION "0.1.0"
#endif

extern const uint8_t husk_kernel_elf[], husk_kernel_elf_end[];


static _Noreturn void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("husk: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(" (see husk --help)\n", stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

static _Noreturn void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("husk: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(code);
}

static void help(void)
{
	printf("Usage: husk run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	       "       husk policy show [OPTIONS]   print the effective policy as JSON\n"
	       "       husk writeback IMAGE DIR     retry a workdir write-back that could not complete\n"
	       "Run PROGRAM in a fresh hardware-isolated microVM and exit with its status.\n"
	       "PROGRAM is an image name (e.g. lua) or the path of a static x86-64 ELF executable.\n"
	       "\n"
	       "Options:\n"
	       "  -m, --memory SIZE     guest memory, e.g. 256M or 1G (default 256M; %lluM to %lluG)\n"
	       "  -t, --timeout SECS    stop the run after SECS seconds of wall time (exit 124)\n"
	       "      --cpu-time SECS   stop the run after SECS seconds of CPU time (exit 152)\n"
	       "      --output-limit SIZE  stdout and stderr together (default 64M); a write\n"
	       "                        beyond it ends the run (exit 153) with a marker on stderr\n"
	       "      --open-files N    files the program may have open at once, 3 to 1024\n"
	       "                        (default 1024; beyond it open fails with EMFILE)\n"
	       "  -e, --env KEY=VALUE   set a variable in the program's environment (repeatable;\n"
	       "                        otherwise it holds only the image's defaults and\n"
	       "                        PATH, HOME, LANG: nothing of the host's)\n"
	       "      --ro NAME=PATH    attach PATH (a directory or an ext2 image) read-only at\n"
	       "                        /data/NAME (repeatable)\n"
	       "  -w, --workdir DIR     attach DIR (created if missing) writable at /workdir, the\n"
	       "                        current directory; what the program changed there is\n"
	       "                        written back to DIR after the run, whatever its outcome\n"
	       "                        (where the host changed a path too, the program's version\n"
	       "                        goes beside the host's as NAME.husk-conflict)\n"
	       "      --disk SIZE       capacity of the workdir disk (default 1G)\n"
	       "      --policy FILE     settings from a JSON policy file (options given win)\n"
	       "      --audit FILE      append the run's record to FILE as JSON lines\n"
	       "      --stats           a short summary of the run on stderr\n"
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
	       "Images are looked up in $HUSK_IMAGES, else build/images beside the husk binary.\n",
	       (unsigned long long)(HUSK_RAM_MIN >> 20), (unsigned long long)(HUSK_RAM_MAX >> 30));
}

/* "256M", "1G", "1048576": bytes. */
static uint64_t parse_bytes(const char *what, const char *s, uint64_t min, uint64_t max)
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

static uint32_t parse_open_files(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < 3 || v > HUSK_OPEN_FILES_MAX)
		usage_error("bad open-files limit '%s' (a number from 3 to %d)", s, HUSK_OPEN_FILES_MAX);
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

static const struct option longopts[] = {
	{ "memory", required_argument, 0, 'm' },
	{ "timeout", required_argument, 0, 't' },
	{ "env", required_argument, 0, 'e' },
	{ "cpu-time", required_argument, 0, 'C' },
	{ "output-limit", required_argument, 0, 'O' },
	{ "ro", required_argument, 0, 'R' },
	{ "workdir", required_argument, 0, 'w' },
	{ "disk", required_argument, 0, 'D' },
	{ "policy", required_argument, 0, 'p' },
	{ "audit", required_argument, 0, 'A' },
	{ "stats", no_argument, 0, 's' },
	{ "open-files", required_argument, 0, 'F' },
	{ "no-pvm", no_argument, 0, 'P' },
	{ "no-namespaces", no_argument, 0, 'N' },
	{ "syscalls", no_argument, 0, 'S' },
	{ "kernel-selftest", no_argument, 0, 'K' },
	{ "help", no_argument, 0, 'h' },
	{ "version", no_argument, 0, 'V' },
	{ 0, 0, 0, 0 },
};

/* One pass of getopt over argv (argv[0] is skipped); returns optind.  With
 * policy set, only --policy is taken and everything else is checked only. */
static int apply_options(int argc, char **argv, struct options *o, const char **policy)
{
	struct options scratch = *o;
	struct options *t = policy ? &scratch : o;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:m:t:e:w:hV", longopts, NULL)) != -1) {
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
		case 'F': t->open_files = parse_open_files(optarg); break;
		case 'P': t->no_pvm = 1; break;
		case 'N': t->no_namespaces = 1; break;
		case 'S': t->syscalls = 1; break;
		case 'K': t->selftest = 1; break;
		case 'h': help(); exit(0);
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

/* Defaults, then the policy file's settings, then the command line's. */
static void parse_options(int argc, char **argv, struct options *o, int need_program)
{
	o->memory = 256ull << 20;
	o->disk_size = 1ull << 30;
	o->output_limit = 64ull << 20;
	o->open_files = HUSK_OPEN_FILES_MAX;
	const char *policy = NULL;
	char **pargs = NULL;
	int npargs = 0;
	size_t room = argc + 1;
	o->env = calloc(room, sizeof *o->env);
	o->ro = calloc(room, sizeof *o->ro);
	if (!o->env || !o->ro)
		die(EXIT_INTERNAL, "out of memory");
	apply_options(argc, argv, o, &policy);
	if (policy) {
		char err[512];
		if ((npargs = policy_to_args(policy, &pargs, err, sizeof err)) < 0)
			die(EXIT_USAGE, "%s", err);
		o->env = realloc(o->env, (room + npargs) * sizeof *o->env);
		o->ro = realloc(o->ro, (room + npargs) * sizeof *o->ro);
		if (!o->env || !o->ro)
			die(EXIT_INTERNAL, "out of memory");
		char **v = calloc(npargs + 2, sizeof *v);
		if (!v)
			die(EXIT_INTERNAL, "out of memory");
		v[0] = argv[0];
		memcpy(v + 1, pargs, npargs * sizeof *v);
		apply_options(npargs + 1, v, o, NULL);
	}
	int first = apply_options(argc, argv, o, NULL);
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

/* Is KEY (of KEY=VALUE) already set in the environment? */
static int env_has(const struct options *o, const char *kv)
{
	size_t n = strcspn(kv, "=");
	for (int i = 0; i < o->nenv; i++)
		if (!strncmp(o->env[i], kv, n) && o->env[i][n] == '=')
			return 1;
	return 0;
}

/* An image's default environment, NAME.env: KEY=VALUE lines.  Given -e
 * variables come later and win (the guest's libc takes the first match, so
 * they go in front). */
static void image_env(const char *path, struct options *o)
{
	char *file;
	if (asprintf(&file, "%s.env", path) < 0)
		die(EXIT_INTERNAL, "out of memory");
	FILE *f = fopen(file, "re");
	free(file);
	if (!f)
		return;
	char line[4096];
	int given = o->nenv;
	char **env = calloc(given + 64, sizeof *env);
	if (!env)
		die(EXIT_INTERNAL, "out of memory");
	memcpy(env, o->env, given * sizeof *env);
	int n = given;
	while (n < given + 64 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		o->nenv = n, o->env = env;
		if (strchr(line, '=') && line[0] != '=' && line[0] != '#' && !env_has(o, line) && !(env[n++] = strdup(line)))
			die(EXIT_INTERNAL, "out of memory");
	}
	fclose(f);
	o->env = env;
	o->nenv = n;
}

/* The guest's environment is what -e gives, then the image's NAME.env, then
 * this small default set, each only for names not set yet; nothing of the
 * host's. */
static void add_default_env(struct options *o)
{
	static char *defaults[] = { "PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8" };
	char **env = calloc(o->nenv + 3, sizeof *env);
	if (!env)
		die(EXIT_INTERNAL, "out of memory");
	memcpy(env, o->env, o->nenv * sizeof *env);
	o->env = env;
	for (int i = 0; i < 3; i++)
		if (!env_has(o, defaults[i]))
			env[o->nenv++] = defaults[i];
}

/* An image name (no slash) is looked up in the image directory; an image
 * may come with a system disk, NAME.disk, mounted on /usr. */
static char *resolve_program(const char *name, char **system_disk)
{
	*system_disk = NULL;
	if (strchr(name, '/'))
		return strdup(name);
	if (!*name || name[0] == '.')
		usage_error("bad image name '%s'", name);
	char dir[PATH_MAX];
	const char *env = getenv("HUSK_IMAGES");
	if (env && *env) {
		snprintf(dir, sizeof dir, "%s", env);
	} else {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
		if (n < 0)
			die(EXIT_INTERNAL, "cannot find my own binary: %s", strerror(errno));
		dir[n] = 0;
		char *slash = strrchr(dir, '/');
		snprintf(slash, sizeof dir - (slash - dir), "/build/images");
	}
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		die(EXIT_INTERNAL, "out of memory");
	if (access(path, F_OK))
		usage_error("unknown image '%s' (no %s; give a path like ./%s to run a file)", name, path, name);
	if (asprintf(system_disk, "%s.disk", path) < 0)
		die(EXIT_INTERNAL, "out of memory");
	if (access(*system_disk, F_OK)) {
		free(*system_disk);
		*system_disk = NULL;
	}
	return path;
}

static const uint8_t *map_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(EXIT_USAGE, "cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		die(EXIT_USAGE, "%s is not a regular file", path);
	if (st.st_size == 0)
		die(EXIT_USAGE, "%s: not an ELF file (empty)", path);
	void *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		die(EXIT_USAGE, "cannot read %s: %s", path, strerror(errno));
	close(fd);
	*size = st.st_size;
	return p;
}

static void host_terminal(struct boot_params *bp)
{
	bp->rows = 24, bp->cols = 80;
	for (int fd = 0; fd < 3; fd++) {
		bp->tty[fd] = isatty(fd);
		struct winsize ws;
		if (bp->tty[fd] && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
			bp->rows = ws.ws_row, bp->cols = ws.ws_col;
	}
}

/* Guest RAM the host actually backs: the memory the guest used at its peak
 * (pages are never given back during a run). */
static uint64_t resident_bytes(const struct guest_mem *m)
{
	static unsigned char vec[HUSK_RAM_MAX / 4096];
	if (mincore(m->host, m->size, vec) < 0)
		return 0;
	uint64_t n = 0;
	for (uint64_t i = 0; i < m->size / 4096; i++)
		n += vec[i] & 1;
	return n * 4096;
}

static double seconds_since(clockid_t clk, const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(clk, &t);
	double s = t.tv_sec + t.tv_nsec / 1e9;
	return t0 ? s - (t0->tv_sec + t0->tv_nsec / 1e9) : s;
}

static int run(struct options *o)
{
	char err[512];
	struct timespec started;
	clock_gettime(CLOCK_MONOTONIC, &started);
	const uint8_t *prog = NULL;
	size_t prog_size = 0;
	char *path = NULL, *system_disk = NULL;
	if (!o->selftest) {
		path = resolve_program(o->program, &system_disk);
		prog = map_file(path, &prog_size);
		if (system_disk)
			image_env(path, o);
	}
	static struct disks disks = { .workdir = -1, .workdir_fd = -1 };
	if (system_disk && disks_add_system(&disks, system_disk, err, sizeof err))
		die(EXIT_INTERNAL, "image %s: %s", o->program, err);
	for (int i = 0; i < o->nro; i++)
		if (disks_add_ro(&disks, o->ro[i], err, sizeof err))
			die(EXIT_USAGE, "%s", err);
	if (o->workdir && disks_add_workdir(&disks, o->workdir, o->disk_size, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	/* Before the VM exists: the helper must never hold guest memory. */
	struct writeback wb;
	if (writeback_start(&wb, &disks, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);
	struct isolation iso = { .mnt_fd = -1 };
	if (!o->no_namespaces && isolate_vmm(&iso, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);

	struct vm vm;
	int user_error;
	if (vm_create(&vm, o->memory, !o->no_pvm, err, sizeof err, &user_error))
		die(user_error ? EXIT_USAGE : EXIT_INTERNAL, "%s", err);

	/* Huge pages everywhere but the stack (see guest_mem_hugepages), before
	 * anything is written. */
	guest_mem_hugepages(&vm.mem, 0, o->memory - HUSK_STACK_SIZE);
	struct elf_image kernel, image = { 0 };
	struct elf_limits klim = { HUSK_KERNEL_BASE, HUSK_KERNEL_END, 0, 0 };
	const uint8_t *kernel_elf = husk_kernel_elf;
	size_t kernel_size = husk_kernel_elf_end - husk_kernel_elf;
#ifdef HUSK_TEST_HOOKS
	/* Test builds only: another guest kernel (tests/evil-kernel). */
	if (getenv("HUSK_TEST_KERNEL"))
		kernel_elf = map_file(getenv("HUSK_TEST_KERNEL"), &kernel_size);
#endif
	if (elf_load(&vm.mem, kernel_elf, kernel_size, &klim, &kernel, err, sizeof err))
		die(EXIT_INTERNAL, "guest kernel: %s", err);
	if (prog) {
		/* Leave at least 1 MiB above the image for its heap. */
		struct elf_limits plim = { HUSK_PROGRAM_MIN, o->memory - HUSK_STACK_SIZE - (1ull << 20), HUSK_PIE_BASE, 1 };
		if (elf_load(&vm.mem, prog, prog_size, &plim, &image, err, sizeof err))
			die(EXIT_USAGE, "%s: %s", path, err);
		munmap((void *)prog, prog_size);
	} else {
		image.hi = HUSK_PROGRAM_MIN;
	}

	add_default_env(o);
	struct boot_params bp = {
		.ram_size = o->memory, .argv = o->args, .argc = o->nargs, .envv = o->env, .envc = o->nenv,
		.entry = image.entry, .phdr = image.phdr, .phnum = image.phnum, .image_end = image.hi,
		.tsc_khz = vm.tsc_khz, .selftest = o->selftest, .open_files = o->open_files,
	};
	struct run_devices dev = { .n = 0 };
	/* One console per standard fd: stdin, stdout, stderr. */
	static struct console con[3];
	static struct output_limit out_limit;
	out_limit.limit = o->output_limit;
	for (int fd = 0; fd < 3; fd++) {
		uint64_t base = HUSK_MMIO_BASE + dev.n * HUSK_MMIO_SIZE;
		console_init(&con[fd], base, &vm.mem, fd == 0 ? fd : -1, fd ? fd : -1);
		con[fd].limit = &out_limit;
		bp.dev[bp.ndev++] = (struct boot_device){ base, fd, NULL, 0 };
		dev.mmio[dev.n++] = &con[fd].mmio;
	}
	static struct blk blks[MAX_DISKS];
	for (int i = 0; i < disks.n; i++) {
		const struct disk *d = &disks.d[i];
		uint64_t base = HUSK_MMIO_BASE + dev.n * HUSK_MMIO_SIZE;
		blk_init(&blks[i], base, &vm.mem, d->fd, d->size, d->read_only, d->mount);
		bp.dev[bp.ndev++] = (struct boot_device){ base, -1, d->mount, d->read_only };
		dev.mmio[dev.n++] = &blks[i].mmio;
	}
	host_terminal(&bp);
	if (getrandom(bp.seed, sizeof bp.seed, 0) != sizeof bp.seed)
		die(EXIT_INTERNAL, "getrandom: %s", strerror(errno));
	struct timespec wall, mono;
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	bp.tsc = __rdtsc();
	bp.wall_ns = wall.tv_sec * 1000000000ull + wall.tv_nsec;
	bp.mono_ns = mono.tv_sec * 1000000000ull + mono.tv_nsec;
	if (boot_fdt_build(gpa_ptr(&vm.mem, HUSK_FDT, HUSK_FDT_MAX), HUSK_FDT_MAX, &bp, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	if (vm_setup_cpu(&vm, kernel.entry, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);

	struct run_limits lim = { o->timeout, o->cpu_time };
	run_prepare(&lim);
	close(vm.kvm); /* the system fd: not needed to run */
	vm.kvm = -1;
	int audit = audit_open(o);
	if (audit == -2)
		die(EXIT_USAGE, "cannot open the audit file %s: %s", o->audit, strerror(errno));
	if (!o->no_namespaces)
		isolate_root(&iso); /* the last file was opened above */
	audit_start(audit, o, &iso);
	/* The fds the confined VMM reads and writes: the consoles', the audit
	 * file, the write-back helper's pipes, the disks (written: the workdir). */
	struct vmm_fds fds = { 0 };
	vmm_fds_allow(&fds, 0, FD_READ);
	vmm_fds_allow(&fds, 1, FD_WRITE);
	vmm_fds_allow(&fds, 2, FD_WRITE);
	vmm_fds_allow(&fds, audit, FD_WRITE);
	vmm_fds_allow(&fds, wb.go, FD_WRITE);
	vmm_fds_allow(&fds, wb.result, FD_READ);
	for (int i = 0; i < disks.n; i++)
		vmm_fds_allow(&fds, disks.d[i].fd, disks.d[i].read_only ? FD_PREAD : FD_PREAD | FD_PWRITE);
	if (confine_vmm(&fds, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);
#ifdef HUSK_TEST_HOOKS
	/* Test builds only: a call outside the allowlist must kill husk. */
	if (getenv("HUSK_TEST_SECCOMP_TRIGGER"))
		confine_test_trigger(getenv("HUSK_TEST_SECCOMP_TRIGGER"), &fds, vm.vcpu);
#endif
	int status = run_guest(&vm, &dev, &lim, o->syscalls);

	struct run_record rec = { .reason = run_end_reason(), .bytes_out = con[1].bytes_out,
				  .bytes_err = con[2].bytes_out, .output_cut = out_limit.cut };
	rec.timeout_hit = !strcmp(rec.reason, "timeout"), rec.cpu_hit = !strcmp(rec.reason, "cpu");
	for (int i = 0; i < disks.n; i++)
		rec.blk_denied_writes += blks[i].denied_writes;
	rec.peak_memory = resident_bytes(&vm.mem);
	static struct husk_report guest_report; /* a copy: guest memory goes away */
	memcpy(&guest_report, gpa_ptr(&vm.mem, HUSK_REPORT, sizeof guest_report), sizeof guest_report);
	/* A program that failed after memory ran out ended for lack of memory
	 * (the guest's count: for the record, not trusted for anything). */
	if (guest_report.denied_enomem && status && (!strcmp(rec.reason, "exit") || !strcmp(rec.reason, "crash")))
		rec.reason = "memory";
	vm_destroy(&vm);
	struct extract_stats wst = { 0 };
	status = writeback_finish(&wb, &disks, status, &wst);
	disks_release(&disks);
	rec.status = status;
	rec.workdir_bytes = wst.bytes, rec.workdir_files = wst.files + wst.removed;
	rec.workdir_conflicts = wst.conflicts, rec.workdir_failed = wst.failed;
	rec.conflict_paths = wst.conflict;
	rec.nconflict_paths = wst.conflicts < EXTRACT_NOTED ? (int)wst.conflicts : EXTRACT_NOTED;
	rec.wall_s = seconds_since(CLOCK_MONOTONIC, &started);
	rec.cpu_s = seconds_since(CLOCK_PROCESS_CPUTIME_ID, NULL);
	audit_end(audit, &rec, &guest_report);
	if (o->stats)
		stats_print(&rec);
	free(path);
	free(system_disk);
	return status;
}

/* With fd 0, 1 or 2 closed, /dev/kvm could land there and be handed to the
 * guest as its stdin or stdout: keep them taken. */
static void claim_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			die(EXIT_INTERNAL, "cannot open /dev/null for fd %d", fd);
}

int main(int argc, char **argv)
{
	close_range(3, ~0u, 0); /* nothing inherited beyond stdio reaches the VMM */
	claim_std_fds();
	if (argc < 2)
		usage_error("no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help();
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("husk %s\n", HUSK_VERSION);
		return 0;
	}
	struct options o = { 0 };
	if (!strcmp(argv[1], "policy")) {
		if (argc < 3 || strcmp(argv[2], "show"))
			usage_error("unknown policy command (expected: husk policy show [OPTIONS])");
		parse_options(argc - 2, argv + 2, &o, 0);
		json_t *p = policy_json(&o);
		char *text = json_dumps(p, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(text);
		free(text);
		json_decref(p);
		return 0;
	}
	if (!strcmp(argv[1], "writeback")) {
		if (argc != 4)
			usage_error("usage: husk writeback IMAGE DIR (an image kept by a write-back that failed)");
		return writeback_retry(argv[2], argv[3]);
	}
	if (strcmp(argv[1], "run"))
		usage_error("unknown command '%s'", argv[1]);
	parse_options(argc - 1, argv + 1, &o, 1);
	return run(&o);
}
