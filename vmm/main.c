/* SPDX-License-Identifier: GPL-2.0-only */
/* husk: run one program in a fresh microVM.  The command line (options.c),
 * then the run in four steps: prepare the host side, boot the VM, run it
 * confined, report. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include "audit.h"
#include "bench.h"
#include "cache.h"
#include "boot_fdt.h"
#include "sandbox/confine.h"
#include "disks/disks.h"
#include "disks/file_server.h"
#include "debian/debian.h"
#include "elf_load.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "disks/extract.h"
#include "husk/abi.h"
#include "image.h"
#include "sandbox/isolate.h"
#include "sandbox/stop.h"
#include "options.h"
#include "policy.h"
#include "run.h"
#include "snapshot/snapshot.h"
#include "script.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_console.h"
#include "devices/virtio_net_stream.h"
#include "net/net_config.h"
#include "vm.h"
#include "disks/writeback.h"
#include "review/review.h"

extern const uint8_t husk_kernel_elf[], husk_kernel_elf_end[];

/* Every device gets a window of the MMIO range and an entry in the boot
 * tree's and the VMM's tables, both HUSK_MMIO_MAX long: one console per
 * standard fd and the disks must fit. */
static_assert(3 + MAX_DISKS + 1 <= HUSK_MMIO_MAX, "the consoles, disks and network need more MMIO windows than there are");

/* What a run holds from set-up to report.  One per process, static: the
 * disks and devices are large. */
struct session {
	struct options *o;
	struct timespec started;
	double phase_s[PHASES];    /* when each phase of the run ended (audit.h) */
	char *path, *system_disk;  /* the program's file and its image's system disk (or NULL) */
	char *image_digest;        /* a Debian image's disk digest, for the record (or NULL) */
	const uint8_t *prog;       /* the program's file, mapped until it is loaded; NULL: self-test */
	size_t prog_size;
	struct script script;      /* a host script for the scratch /workdir */
	struct disks disks;
	struct writeback wb;
	struct isolation iso;
	struct vm vm;
	struct boot_params bp;
	struct run_devices dev;
	struct console con[3];     /* stdin, stdout, stderr */
	struct output_limit out_limit;
	struct blk blks[MAX_DISKS];
	struct net_stream net;     /* the network's device, when broker_fd >= 0 */
	int broker_fd;             /* the VMM's end of the network broker's socket, or -1 */
	int files_fd;              /* the VMM's end of the datasets' file server's socket, or -1 */
	struct run_limits lim;
	struct husk_report guest;  /* the guest's report, copied out by the run */
	int audit;                 /* the audit file, or -1 */
	struct boot_device devices[HUSK_MMIO_MAX]; /* the devices attached, as the boot tree lists them */
	int ndisks_attached;       /* of s->disks */
	struct elf_image image;    /* the program as loaded (or as the snapshot has it) */
	struct options image_env;  /* the environment of the image alone (a snapshot's boot) */
	void *script_data;         /* the script, for the boot tree (a run from a snapshot point) */
	struct snapshot_boot snap_boot;
	struct snapshot_run snap;
	enum snapshot_use snap_use;
	int snap_saved;            /* SNAPSHOT_BUILD: and it was saved */
	int build_only;            /* husk snapshot build: the VM ends at its snapshot point */
};

/* A script larger than this is not passed in the boot tree (HUSK_FDT_MAX
 * with room for argv and envp): its run boots afresh. */
#define SCRIPT_IN_TREE_MAX (512u << 10)

/* A program's file, mapped read-only (a bad one is the user's error). */
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

/* Which standard fds are terminals, and the size of the last one (80x24
 * where none says). */
static void host_terminal(struct boot_params *bp)
{
	bp->rows = 24;
	bp->cols = 80;
	for (int fd = 0; fd < 3; fd++) {
		bp->tty[fd] = isatty(fd);
		struct winsize ws;
		if (bp->tty[fd] && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
			bp->rows = ws.ws_row;
			bp->cols = ws.ws_col;
		}
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

static double seconds_since(clockid_t clk, const struct timespec *t0);

static void phase_done(struct session *s, enum run_phase p)
{
	s->phase_s[p] = seconds_since(CLOCK_MONOTONIC, &s->started);
}

static double seconds_since(clockid_t clk, const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(clk, &t);
	double s = t.tv_sec + t.tv_nsec / 1e9;
	return t0 ? s - (t0->tv_sec + t0->tv_nsec / 1e9) : s;
}

/* The disks, in the order the guest sees them: the image's system disk,
 * the --ro datasets, the workdir. */
static void add_disks(struct session *s)
{
	char err[512];
	const struct options *o = s->o;
	struct disks *ds = &s->disks;
	ds->workdir = ds->workdir_fd = -1;
	if (s->system_disk && disks_add_system(ds, s->system_disk, o->image ? "/" : "/usr", err, sizeof err))
		die(EXIT_INTERNAL, "image %s: %s", o->program, err);
	for (int i = 0; i < o->nro; i++)
		if (disks_add_ro(ds, o->ro[i], err, sizeof err))
			die(EXIT_USAGE, "%s", err);
	if (o->workdir && disks_add_workdir(ds, o->workdir, o->disk_size, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
}

/* The network broker, when the run has a network: forked now, in husk's
 * own network namespace and before anything is confined; its records go to
 * the audit file. */
static void start_network(struct session *s)
{
	char err[512];
	s->broker_fd = -1;
	if (!net_attached(s->o))
		return;
	static struct broker_config c; /* the broker's copy is its own after the fork */
	if (net_config_build(s->o, &c, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	c.record_fd = s->audit;
	if (broker_start(&c, &s->broker_fd, err, sizeof err) < 0)
		die(EXIT_INTERNAL, "%s", err);
	net_config_free(&c);
}

/* The interpreter a Debian image's command is, for its script argument
 * (script.h): python3.11 is "python", lua5.4 "lua"; NULL: none we know. */
static const char *interpreter_of(const char *command)
{
	const char *slash = strrchr(command, '/'), *base = slash ? slash + 1 : command;
	return !strncmp(base, "python", 6) ? "python" : !strncmp(base, "lua", 3) ? "lua" : NULL;
}

/* The host side, before the VM exists: the program, the disks, the
 * audit file, the write-back helper (which must never hold guest memory),
 * the network broker, the VMM's namespaces (from here on husk may be the
 * supervisor's child). */
static void prepare(struct session *s)
{
	char err[512];
	struct options *o = s->o;
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	s->script.fd = -1;
	if (o->image) {
		char *env_base;
		if (debian_image_find(o->image, &s->system_disk, &env_base, &s->image_digest, err, sizeof err))
			die(EXIT_USAGE, "%s", err);
		image_env(env_base, o);
		image_env(env_base, &s->image_env);
		free(env_base);
		if (script_find(interpreter_of(o->program), o, &s->script, err, sizeof err))
			die(EXIT_USAGE, "%s", err);
	} else if (!o->selftest) {
		s->path = resolve_program(o->program, &s->system_disk);
		s->prog = map_file(s->path, &s->prog_size);
		if (s->system_disk) {
			image_env(s->path, o);
			image_env(s->path, &s->image_env);
		}
		const char *image = strchr(o->program, '/') ? NULL : strrchr(s->path, '/') + 1;
		if (script_find(image, o, &s->script, err, sizeof err))
			die(EXIT_USAGE, "%s", err);
	}
	add_default_env(&s->image_env);
	add_disks(s);
	if (file_server_start(&s->disks, &s->files_fd, err, sizeof err) < 0)
		die(EXIT_INTERNAL, "%s", err);
	if (audit_open(o, &s->audit, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	if (o->review) /* jansson seeds its hashes at first use, from /dev/urandom: now, before the confinement */
		json_object_seed(0);
	s->wb.review = o->review;
	s->wb.files = &o->files;
	s->wb.audit = s->audit;
	if (writeback_start(&s->wb, &s->disks, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);
	start_network(s);
	s->iso.mnt_fd = -1;
	if (!o->no_namespaces && isolate_vmm(&s->iso, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);
	phase_done(s, PHASE_PREPARED);
}

/* The guest kernel, built into husk; returns its entry point. */
static uint64_t load_kernel(struct session *s)
{
	char err[512];
	struct elf_image kernel;
	struct elf_limits lim = { HUSK_KERNEL_BASE, HUSK_KERNEL_END, 0, 0, 0 };
	const uint8_t *elf = husk_kernel_elf;
	size_t size = husk_kernel_elf_end - husk_kernel_elf;
#ifdef HUSK_TEST_HOOKS
	/* Test builds only: another guest kernel (tests/evil-kernel). */
	if (getenv("HUSK_TEST_KERNEL"))
		elf = map_file(getenv("HUSK_TEST_KERNEL"), &size);
#endif
	if (elf_load(&s->vm.mem, elf, size, &lim, &kernel, err, sizeof err))
		die(EXIT_INTERNAL, "guest kernel: %s", err);
	return kernel.entry;
}

/* The program, copied into guest memory.  The self-test has none, nor has
 * a Debian image's run (the guest kernel execs its command from the root):
 * the image ends where a program's would start, and the entry is 0. */
static struct elf_image load_program(struct session *s)
{
	struct elf_image image = { 0 };
	if (!s->prog) {
		image.hi = HUSK_PROGRAM_MIN;
		return image;
	}
	char err[512];
	/* Leave at least 1 MiB above the image for its heap. */
	struct elf_limits lim = { HUSK_PROGRAM_MIN, HUSK_IMAGE_LIMIT(s->o->memory), HUSK_PIE_BASE, 1, 0 };
	if (elf_load(&s->vm.mem, s->prog, s->prog_size, &lim, &image, err, sizeof err))
		die(EXIT_USAGE, "%s: %s", s->path, err);
	return image;
}

/* The device takes the next window of the MMIO range and goes in both
 * tables: the boot tree's, for the guest to find it, and the VMM's, for its
 * exits to reach it.  Returns the window's base. */
static uint64_t attach(struct session *s, struct virtio_mmio *mmio, struct boot_device bd)
{
	bd.mmio = HUSK_MMIO_BASE + s->dev.n * HUSK_MMIO_SIZE;
	s->devices[s->dev.n] = bd;
	s->dev.mmio[s->dev.n++] = mmio;
	return bd.mmio;
}

/* The disk s->disks.d[i], in the next window. */
static void attach_disk(struct session *s, int i)
{
	const struct disk *d = &s->disks.d[i];
	struct boot_device bd = { .fd = -1, .mount = d->mount, .read_only = d->read_only };
	uint64_t base = attach(s, &s->blks[i].mmio, bd);
	blk_init(&s->blks[i], base, &s->vm.mem, d->fd, d->size, d->read_only, d->mount);
	if (d->mapped)
		blk_map_files(&s->blks[i], &d->map, d->dirty, s->files_fd, (uint32_t)i);
}

/* The devices a snapshot holds, in its windows: one console per standard
 * fd (stdin is only read, stdout and stderr only written, under one output
 * limit), then the image's system disk.  Returns how many. */
static int attach_base_devices(struct session *s)
{
	s->out_limit.limit = s->o->output_limit;
	for (int fd = 0; fd < 3; fd++) {
		struct console *c = &s->con[fd];
		uint64_t base = attach(s, &c->mmio, (struct boot_device){ .fd = fd });
		console_init(c, base, &s->vm.mem, fd == 0 ? fd : -1, fd ? fd : -1);
		c->limit = &s->out_limit;
	}
	s->dev.input = &s->con[0];
	s->ndisks_attached = 0;
	if (s->system_disk)
		attach_disk(s, s->ndisks_attached++);
	return s->dev.n;
}

/* The run's own: the datasets, the workdir, the network. */
static void attach_run_devices(struct session *s)
{
	while (s->ndisks_attached < s->disks.n)
		attach_disk(s, s->ndisks_attached++);
	if (s->broker_fd >= 0) {
		uint64_t base = attach(s, &s->net.mmio, (struct boot_device){ .fd = -1, .network = 1 });
		net_stream_init(&s->net, base, &s->vm.mem, s->broker_fd);
		s->dev.net = &s->net;
	}
}

/* What the guest learns of the host: its terminal, a random seed, the time
 * (with the TSC read at the same moment). */
static void host_facts(struct boot_params *bp)
{
	host_terminal(bp);
	if (getrandom(bp->seed, sizeof bp->seed, 0) != sizeof bp->seed)
		die(EXIT_INTERNAL, "getrandom: %s", strerror(errno));
	struct timespec wall, mono;
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	bp->tsc = __rdtsc();
	bp->wall_ns = wall.tv_sec * 1000000000ull + wall.tv_nsec;
	bp->mono_ns = mono.tv_sec * 1000000000ull + mono.tv_nsec;
}

/* The boot tree at HUSK_FDT: the machine, its devices attached so far, and
 * the run's parameters, or, for a boot that builds a snapshot (level), the
 * image's own only (argv[0] and the image's environment: nothing of this
 * run may be in the snapshot). */
static void describe_machine(struct session *s, int level)
{
	char err[512];
	const struct options *o = s->o;
	s->bp = (struct boot_params){
		.ram_size = o->memory, .argv = o->args, .argc = o->nargs, .envv = o->env, .envc = o->nenv,
		.entry = s->image.entry, .phdr = s->image.phdr, .phnum = s->image.phnum, .image_end = s->image.hi,
		.tsc_khz = s->vm.tsc_khz, .selftest = o->selftest, .open_files = o->open_files,
		.pids = o->pids, .loopback = o->net_loopback || net_attached(o), .snapshot = level,
	};
	memcpy(s->bp.dev, s->devices, sizeof s->bp.dev);
	s->bp.ndev = s->dev.n;
	if (level) {
		s->bp.argc = 1;
		s->bp.envv = s->image_env.env, s->bp.envc = s->image_env.nenv;
	} else if (s->script.name[0] && (s->script.gpa || s->script_data)) {
		s->bp.script_name = s->script.name;
		s->bp.script_gpa = s->script.gpa, s->bp.script_size = s->script.size;
		s->bp.script_data = s->script_data;
	}
	host_facts(&s->bp);
	if (level) { /* the snapshot is the same whatever the first run's terminal */
		memset(s->bp.tty, 0, sizeof s->bp.tty);
		s->bp.rows = 24, s->bp.cols = 80;
	}
	if (boot_fdt_build(gpa_fixed(&s->vm.mem, HUSK_FDT, HUSK_FDT_MAX), HUSK_FDT_MAX, &s->bp, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
}

static void create_vm(struct session *s)
{
	char err[512];
	int user_error;
	if (vm_create(&s->vm, s->o->memory, !s->o->no_pvm, err, sizeof err, &user_error))
		die(user_error ? EXIT_USAGE : EXIT_INTERNAL, "%s", err);
	s->dev.n = 0;
	s->dev.net = NULL;
}

/* A boot from nothing: the kernel, the program (and its script, in RAM
 * when not for a snapshot), the devices, the vCPU at the kernel's entry. */
static void cold_boot(struct session *s, int level)
{
	char err[512];
	/* Huge pages everywhere but the stack (see guest_mem_hugepages), before
	 * anything is written. */
	guest_mem_hugepages(&s->vm.mem, 0, s->o->memory - HUSK_STACK_SIZE);
	uint64_t kernel_entry = load_kernel(s);
	s->image = load_program(s);
	if (!level && s->script.fd >= 0 &&
	    script_load(&s->script, &s->vm.mem, s->image.hi, s->o->memory, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	attach_base_devices(s);
	if (!level)
		attach_run_devices(s);
	describe_machine(s, level);
	if (vm_setup_cpu(&s->vm, kernel_entry, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);
}

/* A fresh VM for a cold boot after a snapshot could not be used. */
static void cold_boot_again(struct session *s)
{
	vm_destroy(&s->vm);
	create_vm(s);
	cold_boot(s, 0);
}

/* The boot that builds the snapshot runs to its snapshot point (nothing of
 * the run's is in the VM yet: no user code, no limits but a time limit),
 * and the VM there is saved.  Returns 0 when the VM is at the point (saved
 * or not: the run goes on from it), -1 when it is not (booted again). */
static int build_snapshot(struct session *s, int level)
{
	char err[512];
	struct run_limits lim = { .timeout_s = 60, .until_ready = 1 };
	run_prepare(&lim);
	struct husk_report rep;
	run_guest(&s->vm, &s->dev, &lim, 0, &rep);
	if (run_end_reason() != RUN_END_READY) {
		rep.msg[sizeof rep.msg - 1] = 0;
		fprintf(stderr, "husk: note: no snapshot of %s: %s\n", s->snap_boot.label,
			run_end_reason() == RUN_END_DECLINED ? rep.msg : "its boot did not reach the snapshot point");
		stop_reset(); /* the build's time limit is not the run's */
		return -1;
	}
	if (run_host_signals_seen()) /* the run goes on with it; no snapshot carries it */
		return 0;
	static struct snapshot_state st;
	memset(&st, 0, sizeof st);
	st.level = (uint32_t)level;
	st.ndev = (uint32_t)s->dev.n;
	for (int i = 0; i < s->dev.n; i++)
		if (i < 3)
			console_save(&s->con[i], &st.dev[i]);
		else
			virtio_mmio_save(s->dev.mmio[i], &st.dev[i]);
	st.entry = s->image.entry, st.phdr = s->image.phdr, st.phnum = s->image.phnum, st.image_end = s->image.hi;
	if (snapshot_save(&s->snap, &s->vm, &st, err, sizeof err)) {
		fprintf(stderr, "husk: note: the snapshot of %s was not saved: %s\n", s->snap_boot.label, err);
		snapshot_discard(&s->snap);
	} else {
		s->snap_saved = 1;
	}
	return 0;
}

/* The VM from the snapshot: its memory and vCPU, its devices in their
 * windows with their queues.  0, or -1 (a cold boot follows). */
static int restore(struct session *s)
{
	char err[512];
	const struct snapshot_state *st = &s->snap.snap.state;
	if (snapshot_restore(&s->snap, &s->vm, err, sizeof err) == 0) {
		int n = attach_base_devices(s);
		const char *why = n == (int)st->ndev ? NULL : "its devices are not the run's";
		for (int i = 0; i < n && !why; i++)
			if (virtio_mmio_restore(s->dev.mmio[i], &st->dev[i], &why))
				break;
		if (!why) {
			s->image = (struct elf_image){ .entry = st->entry, .phdr = st->phdr, .phnum = st->phnum,
						       .hi = st->image_end };
			return 0;
		}
		snprintf(err, sizeof err, "%s", why);
	}
	fprintf(stderr, "husk: snapshot %s: cannot restore it (%s); booting afresh\n", s->snap.name, err);
	snapshot_discard(&s->snap);
	return -1;
}

static void add_image_env(struct session *s, char *var)
{
	s->image_env.env = realloc(s->image_env.env, (s->image_env.nenv + 1) * sizeof *s->image_env.env);
	if (!s->image_env.env)
		die(EXIT_INTERNAL, "out of memory");
	s->image_env.env[s->image_env.nenv++] = var;
}

/* Where the snapshot's program and image come from (its key). */
static enum snapshot_use choose_snapshot(struct session *s)
{
	struct options *o = s->o;
	s->snap_boot = (struct snapshot_boot){
		.label = o->image ? o->image : o->program, .program = s->path, .system_disk = s->system_disk,
		.image_digest = s->image_digest, .argv0 = o->args[0],
		.level = s->path ? image_snapshot_level(s->path) : HUSK_SNAPSHOT_KERNEL,
	};
	/* The script goes in the run's boot tree, which has room for so much. */
	if (s->script.fd >= 0 && s->script.size > SCRIPT_IN_TREE_MAX)
		return SNAPSHOT_NONE;
#ifdef HUSK_TEST_HOOKS
	if (getenv("HUSK_TEST_KERNEL")) /* another guest kernel: not the one the snapshots hold */
		return SNAPSHOT_NONE;
#endif
	if (s->snap_boot.level == HUSK_SNAPSHOT_PROGRAM && !s->build_only && !snapshot_program_run_ok(o, &s->image_env))
		return SNAPSHOT_NONE;
	s->snap_boot.rebuild = s->build_only;
	enum snapshot_use use = snapshot_begin(&s->snap, o, &s->snap_boot, &s->vm);
	/* For the program's ready point: the modules to import, and (husk
	 * snapshot build) a word on those that cannot be. */
	if (use == SNAPSHOT_BUILD && s->snap.preload[0]) {
		static char var[sizeof s->snap.preload + 16];
		snprintf(var, sizeof var, "HUSK_PRELOAD=%s", s->snap.preload);
		add_image_env(s, var);
	}
	if (use == SNAPSHOT_BUILD && s->build_only)
		add_image_env(s, "HUSK_PRELOAD_VERBOSE=1");
	return use;
}

/* The VM at its snapshot point goes on as this run: its devices, and the
 * run's boot tree (the guest reads it again there). */
static void go_on_from_ready(struct session *s)
{
	char err[512];
	if (s->script.fd >= 0) {
		s->script_data = malloc(s->script.size ? s->script.size : 1);
		if (!s->script_data || script_read(&s->script, s->script_data, err, sizeof err))
			die(EXIT_USAGE, "%s", s->script_data ? err : "out of memory");
	}
	attach_run_devices(s);
	describe_machine(s, 0);
}

/* After a snapshot's build the guest has run, and KVM has started a worker
 * that shares this process's file-system context (the NX huge page recovery
 * task, made at the first KVM_RUN): while it lives the VMM cannot join the
 * kept mount namespace (setns: EINVAL; isolate_root) and would run in the
 * host's root.  So the run goes on in a new VM, as every later run does:
 * restored from the snapshot just saved, or booted afresh. */
static void go_on_in_new_vm(struct session *s)
{
	char err[512] = "";
	if (s->snap_saved) {
		vm_destroy(&s->vm);
		create_vm(s);
		if (snapshot_reopen(&s->snap, err, sizeof err) == 0) {
			if (restore(s) == 0) { /* else restore said why */
				s->snap_use = SNAPSHOT_RESTORE;
				return;
			}
		} else {
			fprintf(stderr, "husk: snapshot %s: %s; booting afresh\n", s->snap.name, err);
		}
	}
	cold_boot_again(s);
	s->snap_use = SNAPSHOT_NONE;
}

/* The VM, ready to run: from a snapshot when there is one for this boot,
 * else booted afresh (and saved at its snapshot point when it is the first
 * of its kind). */
static void boot(struct session *s)
{
	create_vm(s);
	phase_done(s, PHASE_VM);
	add_default_env(s->o);
	s->snap_use = choose_snapshot(s);
	if (s->build_only) {
		if (s->snap_use == SNAPSHOT_BUILD) {
			cold_boot(s, s->snap_boot.level);
			build_snapshot(s, s->snap_boot.level);
		}
		snapshot_end(&s->snap);
		return;
	}
	if (s->snap_use == SNAPSHOT_RESTORE && restore(s)) {
		cold_boot_again(s);
		s->snap_use = SNAPSHOT_NONE;
	} else if (s->snap_use == SNAPSHOT_BUILD) {
		cold_boot(s, s->snap_boot.level);
		build_snapshot(s, s->snap_boot.level);
		go_on_in_new_vm(s);
	} else if (s->snap_use == SNAPSHOT_NONE) {
		cold_boot(s, 0);
	}
	if (s->snap_use != SNAPSHOT_NONE)
		go_on_from_ready(s);
	snapshot_end(&s->snap); /* its working set's fds stay, for the report */
	if (s->prog)
		munmap((void *)s->prog, s->prog_size);
	s->prog = NULL;
	phase_done(s, PHASE_LOADED);
}

/* The seccomp allowlist, with the fds the confined VMM reads and writes:
 * the consoles', the audit file, the write-back helper's pipes, the disks
 * (written: the workdir), the network broker's socket. */
static void confine_run(struct session *s)
{
	char err[512];
	struct vmm_fds fds = { 0 };
	vmm_fds_allow(&fds, 0, FD_READ);
	vmm_fds_allow(&fds, 1, FD_WRITE);
	vmm_fds_allow(&fds, 2, FD_WRITE);
	vmm_fds_allow(&fds, s->audit, FD_WRITE);
	vmm_fds_allow(&fds, s->wb.go, FD_WRITE);
	vmm_fds_allow(&fds, s->wb.result, FD_READ);
	if (s->broker_fd >= 0)
		vmm_fds_allow(&fds, s->broker_fd, FD_READ | FD_WRITE);
	if (s->snap.ws_out >= 0 && s->snap.pagemap >= 0) {
		vmm_fds_allow(&fds, s->snap.ws_out, FD_WRITE);
		vmm_fds_allow(&fds, s->snap.pagemap, FD_PREAD);
	}
	if (s->files_fd >= 0) {
		vmm_fds_allow(&fds, s->files_fd, FD_WRITE | FD_RECVMSG);
		fds.file_slots = 1;
	}
	for (int i = 0; i < s->disks.n; i++)
		vmm_fds_allow(&fds, s->disks.d[i].fd, s->disks.d[i].read_only ? FD_PREAD : FD_PREAD | FD_PWRITE);
	if (confine_vmm(&fds, err, sizeof err))
		die(EXIT_INTERNAL, "%s", err);
#ifdef HUSK_TEST_HOOKS
	/* Test builds only: a call outside the allowlist must kill husk. */
	if (getenv("HUSK_TEST_SECCOMP_TRIGGER"))
		confine_test_trigger(getenv("HUSK_TEST_SECCOMP_TRIGGER"), &fds, s->vm.vcpu);
#endif
}

/* The run itself: the limits' timers, the network's signal, the empty
 * root, the confinement, the vCPU.  Returns the run's status. */
static int run_vm(struct session *s)
{
	const struct options *o = s->o;
	s->lim = (struct run_limits){ o->timeout, o->cpu_time, !o->no_namespaces, 0 };
	run_prepare(&s->lim);
	if (s->broker_fd >= 0)
		run_watch_net(s->broker_fd);
	close(s->vm.kvm); /* the system fd: not needed to run */
	s->vm.kvm = -1;
	if (!o->no_namespaces)
		isolate_root(&s->iso);
	audit_start(s->audit, o, &s->iso, s->image_digest);
	confine_run(s);
	int status = run_guest(&s->vm, &s->dev, &s->lim, o->syscalls, &s->guest);
	phase_done(s, PHASE_RAN);
	return status;
}

/* The program's own time in the run phase, from the guest's TSC at its
 * first instruction and at its exit (the guest's word: shown, checked to
 * fit in the phase, used for nothing else); -1 when not known. */
static double program_seconds(const struct session *s)
{
	uint64_t a = s->guest.tsc_program, b = s->guest.tsc_exit;
	double ran = s->phase_s[PHASE_RAN] - s->phase_s[PHASE_LOADED];
	if (!a || b <= a || !s->vm.tsc_khz)
		return -1;
	double t = (double)(b - a) / ((double)s->vm.tsc_khz * 1000.0);
	return t <= ran ? t : -1;
}

/* What the write-back did, for the record. */
static void record_writeback(struct run_record *rec, const struct extract_stats *w)
{
	rec->workdir_bytes = w->bytes;
	rec->workdir_files = w->files + w->removed;
	rec->workdir_conflicts = w->conflicts;
	rec->workdir_failed = w->failed;
	rec->conflict_paths = w->conflict;
	rec->workdir_denied = w->denied;
	rec->workdir_staged = w->staged;
	rec->workdir_stage = w->stage[0] ? w->stage : NULL;
	rec->nconflict_paths = w->conflicts < EXTRACT_NOTED ? (int)w->conflicts : EXTRACT_NOTED;
}

/* One line for reads of a disk's host files that failed (the program got EIO). */
static void failed_reads(uint64_t count, const char *mount, const char *why)
{
	if (count)
		fprintf(stderr, "husk: note: %llu reads in %s failed (EIO): host files there %s\n",
			(unsigned long long)count, mount, why);
}

/* After the run: what the host counted and the guest reported (run_guest's
 * copy: guest memory goes here), the write-back (which can change husk's
 * status), the audit's end record, --stats.  Returns husk's status. */
static int report(struct session *s, int status)
{
	struct run_record rec = { .reason = run_end_reason(), .bytes_out = s->con[1].bytes_out,
				  .bytes_err = s->con[2].bytes_out, .output_cut = s->out_limit.cut,
				  .scratch = !s->o->workdir, .scratch_bytes = s->guest.scratch_bytes,
				  .tasks_created = s->guest.tasks_created, .tasks_peak = s->guest.tasks_peak,
				  .network = s->broker_fd >= 0 };
	for (int i = 0; i < s->disks.n; i++) {
		rec.blk_denied_writes += s->blks[i].denied_writes;
		rec.blk_changed_reads += s->blks[i].changed_reads;
		failed_reads(s->blks[i].changed_reads, s->disks.d[i].mount, "were replaced or removed during the run");
		failed_reads(s->blks[i].unreadable_reads, s->disks.d[i].mount, "are not readable by the user running husk");
	}
	rec.peak_memory = resident_bytes(&s->vm.mem);
	snapshot_record_working_set(&s->snap, &s->vm.mem);
	/* A program that failed after memory ran out ended for lack of memory
	 * (the guest's count: for the record, not trusted for anything). */
	if (s->guest.denied_enomem && status && (rec.reason == RUN_END_EXIT || rec.reason == RUN_END_CRASH)) {
		rec.reason = RUN_END_MEMORY;
		fprintf(stderr, "husk: note: the program failed after the guest's memory ran out (%u allocations refused); "
			"raise -m (it is %lluM)\n", s->guest.denied_enomem, (unsigned long long)(s->o->memory >> 20));
	}
	vm_destroy(&s->vm);
	phase_done(s, PHASE_DESTROYED);
	struct extract_stats wst = { 0 };
	char *run = NULL;
	if (s->o->review) { /* how the run ended, for the review */
		char ended[64];
		snprintf(ended, sizeof ended, "%s, status %d", run_end_name(rec.reason), status);
		json_t *j = json_pack("{s:s, s:o}", "ended", ended, "findings", audit_findings(&rec, &s->guest));
		run = json_dumps(j, JSON_COMPACT);
		json_decref(j);
	}
	rec.status = status = writeback_finish(&s->wb, &s->disks, status, run, &wst);
	free(run);
	phase_done(s, PHASE_WRITTEN_BACK);
	memcpy(rec.phase_s, s->phase_s, sizeof rec.phase_s);
	rec.program_s = program_seconds(s);
	rec.start = s->snap_saved ? "cold, snapshot saved" : s->snap_use == SNAPSHOT_RESTORE ? "snapshot" : "cold";
	rec.snapshot = s->snap_use == SNAPSHOT_RESTORE || s->snap_saved ? s->snap.name : NULL;
	disks_release(&s->disks);
	record_writeback(&rec, &wst);
	rec.wall_s = seconds_since(CLOCK_MONOTONIC, &s->started);
	rec.cpu_s = seconds_since(CLOCK_PROCESS_CPUTIME_ID, NULL);
	audit_end(s->audit, &rec, &s->guest);
	if (s->o->stats)
		stats_print(&rec);
	free(s->path);
	free(s->system_disk);
	free(s->image_digest);
	return status;
}

/* husk snapshot build: the result of boot's build. */
static int snapshot_built(struct session *s)
{
	vm_destroy(&s->vm);
	if (!s->snap_saved) {
		fprintf(stderr, "husk: snapshot build: no snapshot of %s was made%s\n", s->snap_boot.label,
			s->snap_use == SNAPSHOT_BUILD ? "" : " (--cold, or another husk is building it)");
		return EXIT_INTERNAL;
	}
	printf("husk: snapshot %s saved\n", s->snap.name);
	return 0;
}

static int run(struct options *o, int build_only)
{
	static struct session s;
	s.o = o;
	s.build_only = build_only;
	prepare(&s);
	boot(&s);
	if (build_only)
		return snapshot_built(&s);
	int status = run_vm(&s);
	return report(&s, status);
}

/* Nothing inherited beyond stdio reaches the VMM, but the descriptor an
 * audit path names (keep >= 3; -1: none), until audit_open opens it. */
static void close_inherited(int keep)
{
	if (keep < 3) {
		close_range(3, ~0u, 0);
		return;
	}
	if (keep > 3)
		close_range(3, (unsigned)keep - 1, 0);
	close_range((unsigned)keep + 1, ~0u, 0);
}

/* With fd 0, 1 or 2 closed, /dev/kvm could land there and be handed to the
 * guest as its stdin or stdout: keep them taken. */
static void claim_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			die(EXIT_INTERNAL, "cannot open /dev/null for fd %d", fd);
}

/* husk policy show [OPTIONS]: the effective policy as JSON. */
static int policy_show(int argc, char **argv)
{
	struct options o = { 0 };
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

/* husk snapshot build [--preload MODULES] [RUN OPTIONS] PROGRAM: the
 * program's snapshot made anew (and the modules its ready point imports
 * kept for its later runs). */
static int snapshot_build(int argc, char **argv)
{
	char err[512];
	struct options o = { 0 };
	const char *preload = NULL;
	if (argc >= 5 && !strcmp(argv[3], "--preload")) {
		preload = argv[4];
		argv[4] = argv[2];
		argc -= 2, argv += 2;
	} else if (argc >= 4 && !strncmp(argv[3], "--preload=", 10)) {
		preload = argv[3] + 10;
		argv[3] = argv[2];
		argc -= 1, argv += 1;
	}
	parse_options(argc - 2, argv + 2, &o, 1);
	if (o.nargs > 1)
		usage_error("husk snapshot build takes the program only, no arguments for it");
	if (preload && snapshot_set_preload(o.program, preload, err, sizeof err))
		die(EXIT_USAGE, "%s", err);
	return run(&o, 1);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "run")) /* husk run keeps an audit descriptor it names: below */
		close_inherited(-1);
	claim_std_fds();
	if (argc < 2)
		usage_error("no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		options_help();
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("husk %s\n", HUSK_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "policy"))
		return policy_show(argc, argv);
	if (!strcmp(argv[1], "image"))
		return debian_image_command(argc, argv);
	if (!strcmp(argv[1], "images"))
		return images_command(argc, argv);
	if (!strcmp(argv[1], "cache"))
		return cache_command(argc, argv);
	if (!strcmp(argv[1], "audit"))
		return audit_show_command(argc, argv);
	if (!strcmp(argv[1], "bench"))
		return bench_command(argc, argv);
	if (!strcmp(argv[1], "review") || !strcmp(argv[1], "apply") || !strcmp(argv[1], "discard"))
		return review_command(argc, argv);
	if (!strcmp(argv[1], "writeback")) {
		if (argc != 4)
			usage_error("usage: husk writeback IMAGE DIR (an image kept by a write-back that failed)");
		return writeback_retry(argv[2], argv[3]);
	}
	if (!strcmp(argv[1], "snapshot") && argc >= 3 && !strcmp(argv[2], "build"))
		return snapshot_build(argc, argv);
	if (!strcmp(argv[1], "snapshot"))
		return snapshot_command(argc, argv);
	if (strcmp(argv[1], "run"))
		usage_error("unknown command '%s'", argv[1]);
	struct options o = { 0 };
	parse_options(argc - 1, argv + 1, &o, 1);
	close_inherited(audit_inherited_fd(o.audit));
	if ((o.review || file_policy_set(&o.files)) && !o.workdir)
		usage_error("--review and the file policy (--files-*) are about a workdir's changes: give one with -w DIR");
	return run(&o, 0);
}
