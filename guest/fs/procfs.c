/* SPDX-License-Identifier: GPL-2.0-only */
/* /proc: a read-only file system whose files the kernel makes at read time
 * from its own state (processes, address spaces, fds, mounts, memory, the
 * vCPU as CPUID shows it to the guest), in Linux's formats, for the programs
 * that read them (ps, df, psutil, CPython's subprocess and test suite).
 * There is nothing of the host to show: the guest knows nothing of it.
 *
 * An inode number says what it is: a pid (0: none; a tid under task/) above
 * PID_SHIFT and an entry below, so numbers are stable and distinct with no
 * table (for pids below 2^20).  Like the /bin link (vfs.c) the mount is
 * read-only: every change is refused with EROFS before an operation is asked
 * of it, so only lookup, stat, read, readlink and readdir are here.  Files
 * have size 0, as on Linux; a read makes the whole text and copies the part
 * asked for, so reads in any chunks see one text. */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include "arch/cpu.h"
#include "fs/file.h"
#include "fs/vfs.h"
#include "ipc/stream.h"
#include "kernel.h"
#include "linux_abi.h"
#include "mm/mm.h"
#include "proc/process.h"
#include "proc/sched.h"
#include "sys/sys_fs.h"
#include "sys/sys_info.h"

#define PID_SHIFT 12
#define INO(pid, sub) ((uint32_t)(pid) << PID_SHIFT | (sub))
#define SUB_DIR 0x001 /* /proc itself (pid 0), /proc/PID */
#define SUB_TID 0x100 /* /proc/PID/task/TID (its pid part: the TID) */
#define SUB_FD  0x800 /* + fd: the link /proc/PID/fd/N */
#define ROOT_INO INO(0, SUB_DIR)
#define NUMBER_MAX 99999999 /* the largest pid, fd or tid a name may give */

/* --- the text of a file ----------------------------------------------------- */

/* The bytes [off, off + len) of a text made from its start go to buf. */
struct seq {
	char *buf;
	uint64_t off;
	size_t len;
	uint64_t pos;   /* the text made so far */
	size_t done;    /* bytes put in buf */
};

static void put(struct seq *s, const void *p, size_t n)
{
	uint64_t end = s->off + s->len;
	if (s->pos + n > s->off && s->pos < end) {
		uint64_t from = s->pos > s->off ? s->pos : s->off, to = s->pos + n < end ? s->pos + n : end;
		memcpy(s->buf + (from - s->off), (const char *)p + (from - s->pos), to - from);
		s->done = to - s->off;
	}
	s->pos += n;
}

static void put_str(struct seq *s, const char *str)
{
	put(s, str, strlen(str));
}

__attribute__((format(printf, 2, 3))) static void say(struct seq *s, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = kvsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	put(s, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
}

/* Bytes [a, end) of m's memory (a program's arguments, its environment, its
 * program headers), up to the first page that is not backed. */
static void put_mem(struct seq *s, struct mm *m, uintptr_t a, uintptr_t end)
{
	while (a < end) {
		const char *k = mm_page(m, a);
		size_t in = a & (PAGE_SIZE - 1), n = PAGE_SIZE - in < end - a ? PAGE_SIZE - in : end - a;
		if (!k)
			return;
		put(s, k + in, n);
		a += n;
	}
}

/* A mount point as Linux's /proc/mounts writes it: space, tab, newline and
 * backslash in octal. */
static void put_escaped(struct seq *s, const char *str)
{
	for (; *str; str++) {
		unsigned char c = (unsigned char)*str;
		char esc[4] = { '\\', (char)('0' + (c >> 6)), (char)('0' + (c >> 3 & 7)), (char)('0' + (c & 7)) };
		if (c == ' ' || c == '\t' || c == '\n' || c == '\\')
			put(s, esc, sizeof esc);
		else
			put(s, str, 1);
	}
}

/* A size in kB: "Name:\t%8lu kB" (status), or the name padded to 16
 * columns (meminfo). */
static void put_kb(struct seq *s, const char *name, uint64_t bytes, int pad)
{
	put_str(s, name);
	put(s, ":", 1);
	for (int i = (int)strlen(name) + 1; i < pad; i++)
		put(s, " ", 1);
	say(s, "%s%8lu kB\n", pad ? "" : "\t", bytes >> 10);
}

static uint64_t ticks(uint64_t ns)
{
	return ns / (NSEC_PER_SEC / USER_HZ);
}

/* --- what the files show ------------------------------------------------------ */

/* Whose file it is: a process, and for task/TID a thread of it; an fd's
 * link, the fd. */
struct view {
	struct process *p;
	struct task *t;
	int fd;
};

struct entry;
/* The text of a file, or the target of a link: 0, or -errno when there is
 * none (a zombie's exe). */
typedef int show_fn(struct seq *s, const struct view *v, const struct entry *e);

enum dir_kind { D_NONE, D_ROOT, D_SYS, D_KERNEL, D_PID, D_FD, D_TASK, D_TID, D_COUNT };

struct entry {
	const char *name;
	uint8_t type;     /* DT_REG, DT_LNK, DT_DIR */
	uint8_t dir;      /* DT_DIR: the directory it is */
	show_fn *show;    /* NULL: text is shown */
	const char *text;
	int arg;          /* for show */
};

static struct file *fd_file(const struct process *p, long fd)
{
	return p->files && fd >= 0 && fd < MAX_FDS ? p->files->fd[fd] : 0;
}

/* Live tasks of p (NULL: all); *runnable of them can run. */
static int count_tasks(const struct process *p, int *runnable)
{
	int n = 0;
	struct task *t = current;
	*runnable = 0;
	do {
		if ((!p || t->proc == p) && t->state != TASK_DEAD) {
			n++;
			*runnable += t->state == TASK_RUNNABLE;
		}
		t = t->next;
	} while (t != current);
	return n;
}

static char state_of(const struct view *v)
{
	int runnable;
	if (v->p->zombie)
		return 'Z';
	if (v->t)
		return v->t->state == TASK_RUNNABLE ? 'R' : 'S';
	count_tasks(v->p, &runnable);
	return runnable ? 'R' : 'S';
}

static int ppid_of(const struct process *p)
{
	return p->parent ? p->parent->pid : 0;
}

static uint64_t cpu_of(const struct view *v)
{
	if (!v->t)
		return process_cpu_ns(v->p);
	return v->t == current ? task_cpu_ns() : v->t->cpu_ns;
}

/* Signal sets as Linux shows them (bit sig - 1): of the view's thread (the
 * leader for a process), and of the process. */
struct sigsets { uint64_t pending, shared, blocked, ignored, caught; };

static void sigsets_of(const struct view *v, struct sigsets *g)
{
	const struct task *t = v->t ? v->t : task_by_tid(v->p->pid);
	*g = (struct sigsets){ .shared = v->p->sig.pending };
	if (t)
		g->pending = t->sig.pending, g->blocked = t->sig.mask;
	for (int sig = 1; sig < _NSIG; sig++) {
		uint64_t h = v->p->sig.actions[sig].handler, bit = 1ull << (sig - 1);
		if (h == (uintptr_t)SIG_IGN)
			g->ignored |= bit;
		else if (h != (uintptr_t)SIG_DFL)
			g->caught |= bit;
	}
}

static struct mm_usage usage_of(const struct process *p)
{
	struct mm_usage u = { 0 };
	if (p->mm)
		mm_usage(p->mm, &u);
	return u;
}

static int show_text(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v;
	put_str(s, e->text);
	return 0;
}

static int show_uts(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v;
	say(s, "%s\n", uts_names[e->arg]);
	return 0;
}

static int show_self(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	say(s, "%d", current->proc->pid);
	return 0;
}

static int show_thread_self(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	say(s, "%d/task/%d", current->proc->pid, current->tid);
	return 0;
}

static int show_version(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	say(s, "%s version %s (husk) %s\n", uts_names[UTS_SYSNAME], uts_names[UTS_RELEASE], uts_names[UTS_VERSION]);
	return 0;
}

/* The CPUID flags Linux names (arch/x86/include/asm/cpufeatures.h), a word
 * per register, a name per bit ("-": none shown). */
static const struct {
	uint32_t leaf;
	uint8_t reg; /* eax ebx ecx edx */
	const char *names;
} cpu_flags[] = {
	{ 1, 3, "fpu vme de pse tsc msr pae mce cx8 apic - sep mtrr pge mca cmov pat pse36 pn clflush - dts acpi mmx "
		"fxsr sse sse2 ss ht tm ia64 pbe" },
	{ 1, 2, "pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 cid sdbg fma cx16 xtpr pdcm - pcid dca "
		"sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave - avx f16c rdrand hypervisor" },
	{ 0x80000001, 3, "- - - - - - - - - - - syscall - - - - - - - mp nx - mmxext - - fxsr_opt pdpe1gb rdtscp - lm "
			 "3dnowext 3dnow" },
	{ 0x80000001, 2, "lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs xop "
			 "skinit wdt - lwp fma4 tce - nodeid_msr - tbm topoext perfctr_core perfctr_nb - bpext ptsc "
			 "perfctr_llc mwaitx" },
	{ 7, 1, "fsgsbase tsc_adjust sgx bmi1 hle avx2 - smep bmi2 erms invpcid rtm cqm - mpx rdt_a avx512f avx512dq "
		"rdseed adx smap avx512ifma - clflushopt clwb intel_pt avx512pf avx512er avx512cd sha_ni avx512bw "
		"avx512vl" },
	{ 7, 2, "- avx512vbmi umip pku ospke waitpkg avx512_vbmi2 - gfni vaes vpclmulqdq avx512_vnni avx512_bitalg "
		"tme avx512_vpopcntdq - la57 - - - - - rdpid - bus_lock_detect cldemote - movdiri movdir64b enqcmd "
		"sgx_lc" },
	{ 7, 3, "- - avx512_4vnniw avx512_4fmaps fsrm - - - avx512_vp2intersect - md_clear - - - serialize - "
		"tsxldtrk - pconfig arch_lbr ibt - amx_bf16 avx512_fp16 amx_tile amx_int8 - - flush_l1d "
		"arch_capabilities" },
};

/* A feature whose registers live in the XSAVE area (AVX and what builds on
 * it): usable only once the kernel enables them (CR4.OSXSAVE, XCR0), which
 * husk's kernel does not, so not listed, as Linux hides what it disabled
 * (numpy compares these flags with what it finds usable). */
static int needs_xsave(const char *p, size_t n)
{
	static const char *const names[] = { "xsave", "fma", "vaes", "vpclmulqdq" };
	if (n >= 3 && (!memcmp(p, "avx", 3) || !memcmp(p, "amx", 3)))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && !memcmp(p, names[i], n))
			return 1;
	return 0;
}

static void put_flags(struct seq *s, uint32_t max, uint32_t ext)
{
	uint32_t r1[4];
	cpuid(1, &r1[0], &r1[1], &r1[2], &r1[3]);
	int osxsave = r1[2] >> 27 & 1;
	put_str(s, "flags\t\t:");
	for (size_t i = 0; i < ARRAY_SIZE(cpu_flags); i++) {
		uint32_t r[4], leaf = cpu_flags[i].leaf;
		if (leaf > (leaf & 0x80000000u ? ext : max))
			continue;
		cpuid(leaf, &r[0], &r[1], &r[2], &r[3]);
		const char *p = cpu_flags[i].names;
		for (int bit = 0; *p; bit++) {
			const char *e = strchr(p, ' ');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			if (r[cpu_flags[i].reg] >> bit & 1 && !(n == 1 && *p == '-') && (osxsave || !needs_xsave(p, n))) {
				put(s, " ", 1);
				put(s, p, n);
			}
			p += e ? n + 1 : n;
		}
	}
	put(s, "\n", 1);
}

/* One processor, as the guest's CPUID describes it. */
static int show_cpuinfo(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	uint32_t max, ext, a, b, c, d, r[13] = { 0 };
	cpuid(0, &max, &r[0], &r[2], &r[1]); /* the vendor: ebx edx ecx */
	char vendor[13];
	memcpy(vendor, r, 12);
	vendor[12] = 0;
	cpuid(0x80000000, &ext, &b, &c, &d);
	for (uint32_t i = 0; i < 3 && ext >= 0x80000004; i++)
		cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
	if (ext < 0x80000004)
		r[0] = 0;
	const char *model = (const char *)r;
	while (*model == ' ')
		model++;
	cpuid(1, &a, &b, &c, &d);
	unsigned family = a >> 8 & 0xf, number = a >> 4 & 0xf;
	if (family == 0xf)
		family += a >> 20 & 0xff;
	if (family >= 6)
		number += (a >> 16 & 0xf) << 4;
	uint64_t khz = boot.tsc_khz;
	say(s, "processor\t: 0\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\nmodel name\t: %s\nstepping\t: %u\n",
	    vendor, family, number, model, a & 0xf);
	say(s, "cpu MHz\t\t: %lu.%03lu\n", khz / 1000, khz % 1000);
	unsigned clflush = (b >> 8 & 0xff) * 8;
	if (ext >= 0x80000006) {
		cpuid(0x80000006, &a, &b, &c, &d);
		say(s, "cache size\t: %u KB\n", c >> 16);
	}
	say(s, "physical id\t: 0\nsiblings\t: 1\ncore id\t\t: 0\ncpu cores\t: 1\napicid\t\t: 0\ninitial apicid\t: 0\n"
	       "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: %u\nwp\t\t: yes\n", max);
	put_flags(s, max, ext);
	say(s, "bugs\t\t:\nbogomips\t: %lu.%02lu\nclflush size\t: %u\ncache_alignment\t: %u\n", khz / 500,
	    khz / 5 % 100, clflush, clflush);
	if (ext >= 0x80000008) {
		cpuid(0x80000008, &a, &b, &c, &d);
		say(s, "address sizes\t: %u bits physical, %u bits virtual\n", a & 0xff, a >> 8 & 0xff);
	}
	put_str(s, "power management:\n\n");
	return 0;
}

/* The guest's memory from its page allocator (the kernel's use included:
 * it comes from the same pages). */
static int show_meminfo(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	static const char *const names[] = { "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached",
					     "SwapCached", "SwapTotal", "SwapFree", "Shmem", "CommitLimit",
					     "Committed_AS" };
	uint64_t total = mem_total_bytes(), free = mem_free_bytes();
	uint64_t bytes[ARRAY_SIZE(names)] = { total, free, free, [9] = total, [10] = total - free };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		put_kb(s, names[i], bytes[i], 16);
	return 0;
}

/* CPU time the processes used: every process's and what it reaped of its
 * children's (the VM runs nothing else; the rest was idle). */
static uint64_t busy_ns(uint64_t uptime)
{
	uint64_t ns = 0;
	for (struct process *p = processes; p; p = p->next)
		ns += process_cpu_ns(p) + p->children_cpu_ns;
	return ns < uptime ? ns : uptime;
}

static int show_sys_stat(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	uint64_t up = clock_since_boot_ns(), busy = busy_ns(up);
	int runnable;
	count_tasks(0, &runnable);
	for (int cpu = 0; cpu < 2; cpu++)
		say(s, "cpu%s %lu 0 0 %lu 0 0 0 0 0 0\n", cpu ? "0" : " ", ticks(busy), ticks(up - busy));
	say(s, "intr 0\nctxt 0\nbtime %lu\nprocesses %u\nprocs_running %d\nprocs_blocked 0\n"
	       "softirq 0 0 0 0 0 0 0 0 0 0 0\n",
	    boot.wall_ns / NSEC_PER_SEC, REPORT->tasks_created, runnable);
	return 0;
}

static int show_uptime(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	uint64_t up = clock_since_boot_ns(), idle = ticks(up - busy_ns(up));
	say(s, "%lu.%02lu %lu.%02lu\n", ticks(up) / USER_HZ, ticks(up) % USER_HZ, idle / USER_HZ, idle % USER_HZ);
	return 0;
}

/* Loads are 0, as sysinfo says; then running/all tasks, the last pid. */
static int show_loadavg(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	int runnable, all = count_tasks(0, &runnable);
	say(s, "0.00 0.00 0.00 %d/%d %u\n", runnable, all, REPORT->tasks_created);
	return 0;
}

/* Each mount: the disks as virtio's /dev/vdX, in their order. */
static int show_mounts(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)v, (void)e;
	const struct mount *m;
	for (int i = 0; (m = vfs_mount_at(i)); i++) {
		const char *type = vfs_fs_type(m)->name;
		if (m->ops == &ext2_fs_ops)
			say(s, "/dev/vd%c ", 'a' + i);
		else
			say(s, "%s ", type);
		put_escaped(s, m->path);
		say(s, " %s %s 0 0\n", type, m->read_only ? "ro" : "rw");
	}
	return 0;
}

static int show_exe(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	if (!v->p->mm || !v->p->mm->exe)
		return -ENOENT;
	put_str(s, v->p->mm->exe);
	return 0;
}

static int show_cwd(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	if (v->p->zombie)
		return -ENOENT;
	put_str(s, v->p->cwd);
	return 0;
}

/* cmdline (arg 0) or environ (arg 1): the strings in the program's memory,
 * as it may have changed them. */
static int show_strings(struct seq *s, const struct view *v, const struct entry *e)
{
	struct mm *m = v->p->mm;
	if (m)
		put_mem(s, m, e->arg ? m->layout.env_start : m->layout.arg_start,
			e->arg ? m->layout.env_end : m->layout.arg_end);
	return 0;
}

static int show_comm(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	say(s, "%s\n", v->p->comm);
	return 0;
}

/* Linux's do_task_stat, field by field. */
static int show_pid_stat(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	struct process *p = v->p;
	struct sigsets g;
	sigsets_of(v, &g);
	struct mm_usage u = usage_of(p);
	uint64_t size = u.image + u.arena + u.stack;
	struct mm_layout l = p->mm ? p->mm->layout : (struct mm_layout){ 0 };
	uintptr_t code = p->mm ? p->mm->image_lo : 0, end_code = p->mm ? p->mm->lo : 0;
	/* pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt */
	say(s, "%d (%s) %c %d %d %d 0 -1 0 0 0 0 0 ", v->t ? v->t->tid : p->pid, p->comm, state_of(v), ppid_of(p),
	    p->pgid, p->sid);
	/* utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss rsslim */
	say(s, "%lu 0 %lu 0 %d %d %d 0 %lu %lu %lu 18446744073709551615 ", ticks(cpu_of(v)), ticks(p->children_cpu_ns),
	    20 + p->nice, p->nice, p->threads, ticks(p->start_ns), size, size / PAGE_SIZE);
	/* startcode endcode startstack kstkesp kstkeip signal blocked sigignore sigcatch wchan nswap
	 * cnswap exit_signal processor rt_priority policy delayacct_blkio_ticks guest_time cguest_time */
	say(s, "%lu %lu %lu 0 0 %lu %lu %lu %lu 0 0 0 17 0 0 0 0 0 0 ", code, end_code, l.start_stack,
	    g.pending | g.shared, g.blocked, g.ignored, g.caught);
	/* start_data end_data start_brk arg_start arg_end env_start env_end exit_code */
	say(s, "0 0 %lu %lu %lu %lu %lu %d\n", end_code, l.arg_start, l.arg_end, l.env_start, l.env_end,
	    p->zombie ? p->status : 0);
	return 0;
}

/* size resident shared text lib data dt, in pages */
static int show_statm(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	struct mm_usage u = usage_of(v->p);
	uint64_t size = (u.image + u.arena + u.stack) / PAGE_SIZE;
	say(s, "%lu %lu %lu %lu 0 %lu 0\n", size, size, u.shared / PAGE_SIZE, u.image / PAGE_SIZE,
	    (u.arena + u.stack) / PAGE_SIZE);
	return 0;
}

static int show_status(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	struct process *p = v->p;
	char state = state_of(v);
	say(s, "Name:\t%s\nState:\t%c (%s)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n", p->comm, state,
	    state == 'R' ? "running" : state == 'Z' ? "zombie" : "sleeping", p->pid, v->t ? v->t->tid : p->pid,
	    ppid_of(p));
	const struct creds *c = &p->creds; /* the file system ids are the effective ones */
	say(s, "Umask:\t%04o\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nFDSize:\t%d\nGroups:\t", p->umask, c->uid[0],
	    c->uid[1], c->uid[2], c->uid[1], c->gid[0], c->gid[1], c->gid[2], c->gid[1], p->files ? MAX_FDS : 0);
	for (int i = 0; i < c->ngroups; i++)
		say(s, "%u ", c->groups[i]);
	say(s, "\nNStgid:\t%d\nNSpid:\t%d\nNSpgid:\t%d\nNSsid:\t%d\n", p->pid, v->t ? v->t->tid : p->pid, p->pgid, p->sid);
	if (p->mm) { /* a zombie has none */
		struct mm_usage u = usage_of(p);
		uint64_t size = u.image + u.arena + u.stack;
		const char *names[] = { "VmSize", "VmLck", "VmRSS", "RssAnon", "RssFile", "RssShmem", "VmData",
					"VmStk", "VmExe", "VmLib", "VmSwap" };
		uint64_t bytes[] = { size, 0, size, u.arena - u.shared + u.stack, u.image, u.shared, u.arena, u.stack,
				     u.image, 0, 0 };
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			put_kb(s, names[i], bytes[i], 0);
	}
	struct sigsets g;
	sigsets_of(v, &g);
	say(s, "Threads:\t%d\nSigPnd:\t%016lx\nShdPnd:\t%016lx\nSigBlk:\t%016lx\nSigIgn:\t%016lx\nSigCgt:\t%016lx\n",
	    p->threads, g.pending, g.shared, g.blocked, g.ignored, g.caught);
	put_str(s, "Cpus_allowed:\t1\nCpus_allowed_list:\t0\nvoluntary_ctxt_switches:\t0\n"
		   "nonvoluntary_ctxt_switches:\t0\n");
	return 0;
}

/* A line of maps: Linux pads the name to column 73. */
static void map_line(struct seq *s, const struct mm_area *a, const char *perms, uint64_t off, const struct mm *m,
		     const char *name)
{
	char line[128];
	int n = ksnprintf(line, sizeof line, "%08lx-%08lx %s %08lx 00:%02x %u ", a->start, a->end, perms, off,
			  m && name ? m->exe_dev : 0, m && name ? m->exe_ino : 0);
	put(s, line, (size_t)n);
	if (name) {
		for (; n < 72; n++)
			put(s, " ", 1);
		put(s, " ", 1);
		put_str(s, name);
	}
	put(s, "\n", 1);
}

/* The image's lines: one per PT_LOAD of the program headers it was given
 * (AT_PHDR), read from its memory, else one for all of it. */
static void map_image(struct seq *s, struct mm *m, const struct mm_area *image)
{
	const struct mm_layout *l = &m->layout;
	uint64_t bias = 0;
	int lines = 0;
	struct mm_area a = { image->start, image->start, AREA_IMAGE };
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < l->phnum && i < 64; i++) {
			Elf64_Phdr ph;
			struct seq mem = { .buf = (char *)&ph, .len = sizeof ph };
			put_mem(&mem, m, l->phdr + i * sizeof ph, l->phdr + (i + 1) * sizeof ph);
			if (mem.done != sizeof ph)
				break;
			if (!pass && ph.p_type == PT_PHDR)
				bias = l->phdr - ph.p_vaddr; /* a static-pie's load address */
			if (!pass || ph.p_type != PT_LOAD)
				continue;
			uintptr_t start = (ph.p_vaddr + bias) & ~(PAGE_SIZE - 1);
			a.start = start > a.end ? start : a.end;
			a.end = ALIGN_UP(ph.p_vaddr + bias + ph.p_memsz, PAGE_SIZE);
			if (a.end > image->end)
				a.end = image->end;
			if (a.start >= a.end)
				continue;
			char perms[5] = { ph.p_flags & PF_R ? 'r' : '-', ph.p_flags & PF_W ? 'w' : '-',
					  ph.p_flags & PF_X ? 'x' : '-', 'p', 0 };
			map_line(s, &a, perms, ph.p_offset & ~(PAGE_SIZE - 1), m, m->exe);
			lines++;
		}
	}
	if (!lines)
		map_line(s, image, "r-xp", 0, m, m->exe);
}

static int show_maps(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	static const char *const perms[] = { [AREA_HEAP] = "rw-p", [AREA_PRIVATE] = "rw-p", [AREA_SHARED] = "rw-s",
					     [AREA_NONE] = "---p", [AREA_STACK] = "rw-p" };
	struct mm *m = v->p->mm;
	struct mm_area a;
	for (uintptr_t at = 0; m && mm_area(m, at, &a); at = a.end) {
		if (a.kind == AREA_IMAGE && a.start < a.end)
			map_image(s, m, &a);
		else if (a.kind != AREA_IMAGE)
			map_line(s, &a, perms[a.kind], 0, 0,
				 a.kind == AREA_HEAP ? "[heap]" : a.kind == AREA_STACK ? "[stack]" : 0);
	}
	return 0;
}

/* An fd's link: the path it was opened by, or what Linux names a file
 * that has none: pipe:[INO], socket:[INO], anon_inode:[eventfd]. */
static int show_fd(struct seq *s, const struct view *v, const struct entry *e)
{
	(void)e;
	struct file *f = fd_file(v->p, v->fd);
	struct fs_stat st;
	int dev;
	if (!f)
		return -ENOENT;
	if (f->path && f->kind != FILE_STREAM) {
		put_str(s, f->path);
	} else if (f->kind == FILE_CONSOLE && boot.tty[f->dev]) {
		put_str(s, "/dev/console");
	} else if (f->kind == FILE_STREAM && strchr(f->ops->name, '[')) {
		put_str(s, f->ops->name);
	} else { /* a pipe, a socket; a console that is not a terminal is a pipe to husk */
		file_stat(f, &st, &dev);
		say(s, "%s:[%u]", f->kind == FILE_STREAM ? f->ops->name : "pipe", st.ino);
	}
	return 0;
}

/* --- the directories ------------------------------------------------------------ */

static const struct entry root_entries[] = {
	{ "self", DT_LNK, 0, show_self, 0, 0 },
	{ "thread-self", DT_LNK, 0, show_thread_self, 0, 0 },
	{ "mounts", DT_LNK, 0, show_text, "self/mounts", 0 },
	{ "cpuinfo", DT_REG, 0, show_cpuinfo, 0, 0 },
	{ "meminfo", DT_REG, 0, show_meminfo, 0, 0 },
	{ "stat", DT_REG, 0, show_sys_stat, 0, 0 },
	{ "uptime", DT_REG, 0, show_uptime, 0, 0 },
	{ "loadavg", DT_REG, 0, show_loadavg, 0, 0 },
	{ "version", DT_REG, 0, show_version, 0, 0 },
	{ "filesystems", DT_REG, 0, show_text, "nodev\tproc\nnodev\ttmpfs\n\text2\n", 0 },
	{ "sys", DT_DIR, D_SYS, 0, 0, 0 },
};
static const struct entry sys_entries[] = {
	{ "kernel", DT_DIR, D_KERNEL, 0, 0, 0 },
};
static const struct entry kernel_entries[] = {
	{ "hostname", DT_REG, 0, show_uts, 0, UTS_NODENAME },
	{ "osrelease", DT_REG, 0, show_uts, 0, UTS_RELEASE },
	{ "ostype", DT_REG, 0, show_uts, 0, UTS_SYSNAME },
	{ "version", DT_REG, 0, show_uts, 0, UTS_VERSION },
	{ "pid_max", DT_REG, 0, show_text, "4194304\n", 0 }, /* Linux's largest: tids here are never reused */
};
static const struct entry pid_entries[] = {
	{ "cmdline", DT_REG, 0, show_strings, 0, 0 },
	{ "comm", DT_REG, 0, show_comm, 0, 0 },
	{ "cwd", DT_LNK, 0, show_cwd, 0, 0 },
	{ "environ", DT_REG, 0, show_strings, 0, 1 },
	{ "exe", DT_LNK, 0, show_exe, 0, 0 },
	{ "fd", DT_DIR, D_FD, 0, 0, 0 },
	{ "maps", DT_REG, 0, show_maps, 0, 0 },
	{ "mounts", DT_REG, 0, show_mounts, 0, 0 },
	{ "stat", DT_REG, 0, show_pid_stat, 0, 0 },
	{ "statm", DT_REG, 0, show_statm, 0, 0 },
	{ "status", DT_REG, 0, show_status, 0, 0 },
	{ "task", DT_DIR, D_TASK, 0, 0, 0 },
};
static const struct entry tid_entries[] = { /* a thread's view */
	{ "comm", DT_REG, 0, show_comm, 0, 0 },
	{ "stat", DT_REG, 0, show_pid_stat, 0, 0 },
	{ "status", DT_REG, 0, show_status, 0, 0 },
};

/* Each directory's named entries: their inodes are base + index (with the
 * pid for a process's and a thread's). */
static const struct table {
	const struct entry *e;
	size_t n;
	unsigned base;
} tables[D_COUNT] = {
	[D_ROOT] = { root_entries, ARRAY_SIZE(root_entries), 0x010 },
	[D_SYS] = { sys_entries, ARRAY_SIZE(sys_entries), 0x200 },
	[D_KERNEL] = { kernel_entries, ARRAY_SIZE(kernel_entries), 0x300 },
	[D_PID] = { pid_entries, ARRAY_SIZE(pid_entries), 0x010 },
	[D_TID] = { tid_entries, ARRAY_SIZE(tid_entries), SUB_TID + 0x010 },
};

static int per_pid(int d)
{
	return d == D_PID || d == D_TID;
}

/* What an inode is. */
struct where {
	int pid;                 /* its pid part */
	int dir;                 /* a directory: D_*; else D_NONE */
	int in;                  /* the table of its entry */
	const struct entry *e;   /* a named entry, or NULL */
	struct view v;
};

static int find_view(struct where *w)
{
	struct view *v = &w->v;
	if (w->dir == D_TID || w->in == D_TID) {
		v->t = task_by_tid(w->pid);
		if (!v->t || v->t->state == TASK_DEAD)
			return -ENOENT;
		v->p = v->t->proc;
	} else if (!(v->p = process_by_pid(w->pid))) {
		return -ENOENT;
	}
	return v->fd >= 0 && !fd_file(v->p, v->fd) ? -ENOENT : 0;
}

static int resolve(uint32_t ino, struct where *w)
{
	int pid = (int)(ino >> PID_SHIFT);
	unsigned sub = ino & ((1u << PID_SHIFT) - 1);
	*w = (struct where){ .pid = pid, .v.fd = -1 };
	if (sub == SUB_DIR) {
		w->dir = pid ? D_PID : D_ROOT;
	} else if (pid && sub == SUB_TID) {
		w->dir = D_TID;
	} else if (pid && sub >= SUB_FD && sub < SUB_FD + MAX_FDS) {
		w->v.fd = (int)(sub - SUB_FD);
	} else {
		for (int d = 0; d < D_COUNT && !w->e; d++) {
			const struct table *t = &tables[d];
			if (t->e && per_pid(d) == (pid != 0) && sub >= t->base && sub < t->base + t->n)
				w->in = d, w->e = &t->e[sub - t->base], w->dir = w->e->dir;
		}
		if (!w->e)
			return -ENOENT;
	}
	return pid ? find_view(w) : 0;
}

/* The inode of directory d (pid: its process's, or for D_TID its tid). */
static uint32_t dir_ino(int d, int pid)
{
	if (d == D_ROOT)
		return ROOT_INO;
	if (d == D_PID || d == D_TID)
		return INO(pid, d == D_PID ? SUB_DIR : SUB_TID);
	for (int t = 0; t < D_COUNT; t++)
		for (size_t i = 0; i < tables[t].n; i++)
			if (tables[t].e[i].dir == d)
				return INO(per_pid(t) ? pid : 0, tables[t].base + i);
	return ROOT_INO;
}

static uint32_t parent_ino(const struct where *w)
{
	static const uint8_t parent[D_COUNT] = { [D_ROOT] = D_ROOT, [D_SYS] = D_ROOT, [D_KERNEL] = D_SYS,
						 [D_PID] = D_ROOT, [D_FD] = D_PID, [D_TASK] = D_PID, [D_TID] = D_TASK };
	return dir_ino(parent[w->dir], w->pid ? w->v.p->pid : 0);
}

/* The smallest number at or above from that names an entry of w's
 * directory: a process (zombies too) in /proc, an open fd in fd/, a live
 * thread in task/; -1 when there is none. */
static long next_number(const struct where *w, long from)
{
	long best = -1;
	if (w->dir == D_ROOT) {
		for (const struct process *p = processes; p; p = p->next)
			if (p->pid >= from && (best < 0 || p->pid < best))
				best = p->pid;
	} else if (w->dir == D_FD) {
		for (long fd = from; fd < MAX_FDS && best < 0; fd++)
			if (fd_file(w->v.p, fd))
				best = fd;
	} else if (w->dir == D_TASK) {
		const struct task *t = current;
		do {
			if (t->proc == w->v.p && t->state != TASK_DEAD && t->tid >= from && (best < 0 || t->tid < best))
				best = t->tid;
			t = t->next;
		} while (t != current);
	}
	return best;
}

static uint32_t number_ino(const struct where *w, long n)
{
	if (w->dir == D_FD)
		return INO(w->pid, SUB_FD + (uint32_t)n);
	return INO(n, w->dir == D_ROOT ? SUB_DIR : SUB_TID);
}

/* A name of digits only, without a leading 0 (as Linux's name_to_int). */
static long parse_number(const char *name, size_t len)
{
	long n = 0;
	if (!len || len > 8 || (name[0] == '0' && len > 1))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		n = n * 10 + (name[i] - '0');
	}
	return n;
}

/* --- the operations ----------------------------------------------------------- */

static int resolve_dir(uint32_t ino, struct where *w)
{
	int r = resolve(ino, w);
	return r ? r : w->dir ? 0 : -ENOTDIR;
}

static int p_lookup(void *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	(void)fs;
	struct where w;
	int r = resolve_dir(dir, &w);
	if (r)
		return r;
	const struct table *t = &tables[w.dir];
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->e[i].name) == len && !memcmp(t->e[i].name, name, len)) {
			*ino = INO(per_pid(w.dir) ? w.pid : 0, t->base + i);
			return 0;
		}
	long n = parse_number(name, len);
	if (n < 0 || next_number(&w, n) != n)
		return -ENOENT;
	*ino = number_ino(&w, n);
	return 0;
}

static int p_stat(void *fs, uint32_t ino, struct fs_stat *st)
{
	(void)fs;
	struct where w;
	int r = resolve(ino, &w);
	if (r)
		return r;
	int type = w.dir ? DT_DIR : w.v.fd >= 0 ? DT_LNK : w.e->type;
	*st = (struct fs_stat){ .ino = ino, .nlink = type == DT_DIR ? 2 : 1 };
	st->mode = type == DT_DIR ? S_IFDIR | 0555 : type == DT_LNK ? S_IFLNK | 0777 : S_IFREG | 0444;
	if (w.v.fd >= 0) { /* as Linux: r-x for reading, -wx for writing */
		int acc = fd_file(w.v.p, w.v.fd)->flags & O_ACCMODE;
		st->mode = S_IFLNK | (acc != O_WRONLY ? 0500 : 0) | (acc != O_RDONLY ? 0300 : 0);
	}
	st->atime = st->mtime = st->ctime = (int64_t)((boot.wall_ns + (w.v.p ? w.v.p->start_ns : 0)) / NSEC_PER_SEC);
	return 0;
}

/* A file's text or a link's target, the part [off, off + len) of it in buf. */
static long show(uint32_t ino, uint64_t off, void *buf, size_t len, int type)
{
	static const struct entry fd_link = { "", DT_LNK, 0, show_fd, 0, 0 };
	struct where w;
	int r = resolve(ino, &w);
	if (r)
		return r;
	const struct entry *e = w.v.fd >= 0 ? &fd_link : w.e;
	if (!e || e->type != type)
		return w.dir ? -EISDIR : -EINVAL;
	struct seq s = { .buf = buf, .off = off, .len = len };
	r = e->show(&s, &w.v, e);
	return r ? r : (long)s.done;
}

static long p_read(void *fs, uint32_t ino, uint64_t off, void *buf, size_t len)
{
	(void)fs;
	return show(ino, off, buf, len, DT_REG);
}

static long p_readlink(void *fs, uint32_t ino, char *buf, size_t len)
{
	(void)fs;
	return show(ino, 0, buf, len, DT_LNK);
}

static int p_readdir(void *fs, uint32_t dir, uint64_t *pos, struct fs_dirent *out)
{
	(void)fs;
	struct where w;
	int r = resolve_dir(dir, &w);
	if (r)
		return r;
	const struct table *t = &tables[w.dir];
	const char *name = "";
	if (*pos < 2) { /* . and .. */
		name = *pos ? ".." : ".";
		out->ino = *pos ? parent_ino(&w) : dir, out->type = DT_DIR;
	} else if (*pos - 2 < t->n) {
		const struct entry *e = &t->e[*pos - 2];
		name = e->name;
		out->ino = INO(per_pid(w.dir) ? w.pid : 0, t->base + (*pos - 2)), out->type = e->type;
	} else {
		uint64_t from = *pos - 2 - t->n;
		long n = from <= NUMBER_MAX ? next_number(&w, (long)from) : -1;
		if (n < 0)
			return 0;
		out->ino = number_ino(&w, n), out->type = w.dir == D_FD ? DT_LNK : DT_DIR;
		out->name_len = (uint16_t)ksnprintf(out->name, sizeof out->name, "%ld", n);
		*pos = 2 + t->n + (uint64_t)n + 1;
		return 1;
	}
	out->name_len = (uint16_t)strlen(name);
	memcpy(out->name, name, out->name_len + 1);
	(*pos)++;
	return 1;
}

static uint64_t p_free_bytes(void *fs)
{
	(void)fs;
	return 0;
}

const struct fs_ops procfs_ops = {
	.lookup = p_lookup, .stat = p_stat, .read = p_read, .readlink = p_readlink, .readdir = p_readdir,
	.free_bytes = p_free_bytes, .root = ROOT_INO,
};

void procfs_init(struct mount *m)
{
	m->fs = m; /* nothing to mount: vfs_mount_fs sees it mounted */
}

/* --- pid 1's exe ------------------------------------------------------------------ */

static const char *boot_env(const char *key)
{
	size_t kl = strlen(key);
	const char *e = boot.envp;
	for (int i = 0; i < boot.envc; i++, e += strlen(e) + 1)
		if (strnlen(e, kl + 1) > kl && !memcmp(e, key, kl) && e[kl] == '=')
			return e + kl + 1;
	return 0;
}

/* Where the guest finds the first program, which the VMM loaded from the
 * host: argv[0] from /workdir (where it starts) when it has a '/', else in
 * PATH as execvp looks, the first regular file.  0 when there is none. */
static int find_first(const char *name, char *path, struct node *n)
{
	const char *dirs = strchr(name, '/') ? "" : boot_env("PATH");
	size_t nl = strlen(name);
	for (const char *d = dirs ? dirs : "/usr/local/bin:/bin:/usr/bin";; d++) {
		const char *e = strchr(d, ':');
		size_t dl = e ? (size_t)(e - d) : strlen(d);
		struct fs_stat st;
		if (dl + nl + 2 <= PATH_MAX) {
			memcpy(path, d, dl);
			path[dl] = '/';
			memcpy(path + (dl ? dl + 1 : 0), name, nl + 1);
			if (!vfs_lookup("/workdir", path, LOOKUP_FOLLOW, n) && n->kind == NODE_FS && n->ino &&
			    !vfs_stat(n, &st) && (st.mode & S_IFMT) == S_IFREG)
				return 1;
		}
		if (!(d = e))
			return 0;
	}
}

void procfs_find_first_exe(void)
{
	struct node *n = kalloc(sizeof *n);
	char *path = kalloc(PATH_MAX);
	if (n && path && boot.argc && find_first(boot.argv, path, n))
		mm_set_exe(processes->mm, n->path, n->m->index, n->ino);
	kfree(path, PATH_MAX);
	kfree(n, sizeof *n);
}
