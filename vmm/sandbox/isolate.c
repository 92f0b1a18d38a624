/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sandbox/confine.h"
#include "disks/copyin.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "sandbox/isolate.h"
#include "sandbox/stop.h"

#define KEPT_DIR "/run/husk/ns"

static const char *kept_dir(void)
{
#ifdef HUSK_TEST_HOOKS
	/* Test builds only: another place, to test what happens without it. */
	if (getenv("HUSK_TEST_KEPT_DIR"))
		return getenv("HUSK_TEST_KEPT_DIR");
#endif
	return KEPT_DIR;
}

static const struct {
	int flag;
	const char *name;
} kinds[] = {
	{ CLONE_NEWPID, "pid" }, { CLONE_NEWNS, "mnt" }, { CLONE_NEWNET, "net" },
	{ CLONE_NEWIPC, "ipc" }, { CLONE_NEWUTS, "uts" },
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])
#define ALL_BUT_PID (CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

/* ---- the kept namespaces ------------------------------------------------
 * Creating and tearing down mount, network and IPC namespaces costs ~1 ms
 * a run (measured; a network namespace is freed by a kernel worker that
 * competes with the next runs).  So husk makes one set once, with an empty
 * read-only tmpfs as the mount namespace's root, keeps it by bind mounts in
 * KEPT_DIR, and each VMM joins it: nothing in it can be used by a confined
 * VMM (no socket, IPC, mount or sethostname call is allowed), so sharing it
 * between runs gives nothing away.  The pid namespace is new each run. */

static void close_kept(int *fd)
{
	for (int i = 1; i < NKINDS; i++)
		if (fd[i] >= 0)
			close(fd[i]), fd[i] = -1;
}

/* The kept directory, with its parent (/run/husk) made first if missing
 * and `create`: both checked as husk's own (copyin_own_dir: not a symlink,
 * the user's or root's, writable by nobody else).  Its fd, or -1 with why. */
static int kept_dir_open(int create, char *why, size_t n)
{
	char parent[256];
	snprintf(parent, sizeof parent, "%s", kept_dir());
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = 0;
	if (create)
		mkdir(parent, 0755); /* checked below, once the kept one is there */
	int dir = copyin_own_dir(kept_dir(), create ? 0700 : 0, why, n);
	int up = dir < 0 ? -1 : copyin_own_dir(parent, 0, why, n);
	if (up < 0 && dir >= 0)
		close(dir), dir = -1;
	if (up >= 0)
		close(up);
	return dir;
}

static int open_kept(int *fd)
{
	char why[160];
	int dir = kept_dir_open(0, why, sizeof why);
	if (dir < 0)
		return -1;
	for (int i = 1; i < NKINDS; i++) {
		fd[i] = openat(dir, kinds[i].name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd[i] < 0 || ioctl(fd[i], NS_GET_NSTYPE) != kinds[i].flag) {
			close_kept(fd);
			close(dir);
			return -1;
		}
	}
	close(dir);
	return 0;
}

/* An empty read-only tmpfs on the first of a few directories that exists
 * (in a private mount namespace: nobody else sees it); where, or NULL. */
static const char *mount_empty(void)
{
	static const char *const points[] = { "/tmp", "/run", "/mnt", "/proc" };
	for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
		if (mount("husk-empty", points[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
			  "size=4k,nr_inodes=1,mode=0555") == 0)
			return points[i];
	return NULL;
}

/* The creator's child: new namespaces, an empty root pivoted in (paid once
 * here), then it waits for its parent to bind them. */
static _Noreturn void kept_holder(int ready, int done)
{
	char c = 1;
	if (unshare(ALL_BUT_PID) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(1);
	const char *at = mount_empty();
	if (!at || chdir(at) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    write(ready, &c, 1) != 1)
		_exit(1);
	while (read(done, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* A kept namespace bound on the file `name` in dir (made with O_NOFOLLOW,
 * mounted on through its fd: no path is resolved again). */
static int keep_one(int dir, const char *name, pid_t holder, char *why, size_t n)
{
	char src[64], target[64];
	snprintf(src, sizeof src, "/proc/%d/ns/%s", (int)holder, name);
	int stale = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (stale >= 0) { /* a stale one, if any, is unmounted */
		snprintf(target, sizeof target, "/proc/self/fd/%d", stale);
		umount2(target, MNT_DETACH);
		close(stale);
	}
	int f = openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	snprintf(target, sizeof target, "/proc/self/fd/%d", f);
	if (f < 0 || mount(src, target, NULL, MS_BIND, NULL) < 0) {
		int e = errno;
		if (f >= 0)
			close(f);
		return errmsg(why, n, "keeping %s/%s: %s", kept_dir(), name, strerror(e));
	}
	close(f);
	return 0;
}

/* Under the lock, with the kept directory checked: new namespaces bound
 * there, unless another husk made them meanwhile. */
static int make_kept_locked(int dir, char *why, size_t n)
{
	int fd[NKINDS] = { -1, -1, -1, -1, -1 };
	if (open_kept(fd) == 0) { /* another husk made them meanwhile */
		close_kept(fd);
		return 0;
	}
	int ready[2], done[2];
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0)
		return errmsg(why, n, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t holder = fork();
	if (holder == 0) {
		close(ready[0]), close(done[1]), close(dir); /* so that the parent's close reaches it */
		kept_holder(ready[1], done[0]);
	}
	close(ready[1]), close(done[0]);
	char c = 0;
	int r = holder < 0 || read(ready[0], &c, 1) != 1 ? errmsg(why, n, "cannot make namespaces to keep") : 0;
	for (int i = 1; !r && i < NKINDS; i++)
		r = keep_one(dir, kinds[i].name, holder, why, n);
	close(done[1]), close(ready[0]);
	if (holder > 0)
		while (waitpid(holder, NULL, 0) < 0 && errno == EINTR)
			;
	return r;
}

static int make_kept(char *why, size_t n)
{
	int dir = kept_dir_open(1, why, n);
	if (dir < 0)
		return -1;
	int lock = openat(dir, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r = lock < 0 || flock(lock, LOCK_EX) < 0 ? errmsg(why, n, "%s/.lock: %s", kept_dir(), strerror(errno))
						      : make_kept_locked(dir, why, n);
	if (lock >= 0)
		close(lock);
	close(dir);
	return r;
}

/* ---- the supervisor ------------------------------------------------------ */

static pid_t vmm;
static volatile sig_atomic_t stop_signal;

/* A stop request for husk goes to the VMM, which passes it to the program
 * (run.c): it may clean up, and what it finished is written back.  A second
 * request, or GRACE_S seconds without the run ending, kills the VMM as a
 * stop request did before (it is pid 1 of its namespace: only SIGKILL and
 * the signals it handles reach it). */
#define GRACE_S 2

static void forward(int sig)
{
	int again = stop_signal_again(sig);
	if (stop_signal && (again || sig != stop_signal)) {
		kill(vmm, SIGKILL);
		return;
	}
	if (stop_signal)
		return; /* the same request delivered twice */
	stop_signal = sig;
	kill(vmm, sig);
	alarm(GRACE_S);
}

static void grace_over(int sig)
{
	(void)sig;
	kill(vmm, SIGKILL);
}

/* Job control (Ctrl-Z, fg): the VMM, as pid 1, would ignore a terminal
 * stop, so the supervisor stops it, then takes the same signal's default
 * action itself: a stop (the shell sees an ordinary one) until continued,
 * or nothing in an orphaned process group, where the kernel discards it.
 * Either way the VMM goes on when the supervisor does. */
static const int pauses[] = { SIGTSTP, SIGTTIN, SIGTTOU };

static void pause_run(int sig)
{
	kill(vmm, SIGSTOP);
	struct sigaction dfl = { .sa_handler = SIG_DFL }, mine;
	sigaction(sig, &dfl, &mine);
	sigset_t only;
	sigemptyset(&only);
	sigaddset(&only, sig);
	raise(sig); /* pending: blocked while its handler runs */
	sigprocmask(SIG_UNBLOCK, &only, NULL); /* taken here */
	sigprocmask(SIG_BLOCK, &only, NULL);
	sigaction(sig, &mine, NULL);
	kill(vmm, SIGCONT);
}

static void resume_run(int sig)
{
	(void)sig;
	kill(vmm, SIGCONT);
}

static _Noreturn void supervise(void)
{
	/* Nothing the VMM or the write-back helper hold may be kept open here:
	 * the helper learns of the VMM's death by its pipe closing. */
	close_range(3, ~0u, 0);
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = forward };
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++)
		sigaction(stops[i], &sa, NULL);
	sa.sa_handler = pause_run;
	for (size_t i = 0; i < sizeof pauses / sizeof pauses[0]; i++)
		sigaction(pauses[i], &sa, NULL);
	sa.sa_handler = resume_run;
	sigaction(SIGCONT, &sa, NULL);
	sa.sa_handler = grace_over;
	sigaction(SIGALRM, &sa, NULL);
	char err[256];
	if (confine_supervisor(vmm, err, sizeof err)) {
		kill(vmm, SIGKILL);
		fprintf(stderr, "husk: %s\n", err);
		_exit(EXIT_INTERNAL);
	}
	int st = 0;
	while (waitpid(vmm, &st, 0) < 0 && errno == EINTR)
		;
	while (wait(NULL) > 0 || errno == EINTR)
		; /* the write-back helper: nothing outlives husk */
	if (WIFEXITED(st)) /* the program's status, also after a stop request it handled */
		_exit(WEXITSTATUS(st));
	int sig = stop_signal ? stop_signal : WTERMSIG(st);
	signal(sig, SIG_DFL);
	raise(sig); /* end as the VMM did (no core: RLIMIT_CORE is 0) */
	_exit(128 + sig);
}

/* ---- the VMM's side --------------------------------------------------------- */

static void unshare_each(struct isolation *iso)
{
	if (unshare(ALL_BUT_PID) == 0) {
		iso->namespaces |= ALL_BUT_PID;
		return;
	}
	for (int i = 1; i < NKINDS; i++) { /* a host may forbid only some */
		if (unshare(kinds[i].flag) == 0)
			iso->namespaces |= kinds[i].flag;
		else if (!iso->why[0])
			errmsg(iso->why, sizeof iso->why, "no %s namespace: %s", kinds[i].name, strerror(errno));
	}
}

int isolate_vmm(struct isolation *iso, char *err, size_t n)
{
	iso->namespaces = iso->empty_root = iso->shared = 0;
	iso->mnt_fd = -1;
	iso->why[0] = 0;
	int fd[NKINDS] = { -1, -1, -1, -1, -1 };
	char why[160] = "";
	int kept = open_kept(fd) == 0 || (make_kept(why, sizeof why) == 0 && open_kept(fd) == 0);
	if (unshare(CLONE_NEWPID) < 0) {
		errmsg(iso->why, sizeof iso->why, "new namespaces: %s", strerror(errno));
		close_kept(fd);
		return 0;
	}
	int parent = (int)syscall(SYS_pidfd_open, getpid(), 0);
	fflush(NULL);
	vmm = fork();
	if (vmm < 0)
		return errmsg(err, n, "fork: %s", strerror(errno));
	if (vmm > 0)
		supervise();
	/* A killed supervisor takes the VMM along, even one killed before this
	 * (its pidfd is readable once it has exited). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (parent >= 0) {
		struct pollfd gone = { parent, POLLIN, 0 };
		if (poll(&gone, 1, 0) == 1)
			_exit(EXIT_INTERNAL);
		close(parent);
	}
	iso->namespaces = CLONE_NEWPID;
	/* All but the mount namespace now; that one is joined last, after the
	 * last open (isolate_root). */
	int joined = kept;
	for (int i = 2; joined && i < NKINDS; i++) /* kinds[]: pid, mnt, then these */
		joined = setns(fd[i], kinds[i].flag) == 0;
	if (joined) {
		iso->namespaces |= ALL_BUT_PID & ~CLONE_NEWNS;
		iso->mnt_fd = fd[1], fd[1] = -1;
		iso->shared = 1;
	} else {
		if (kept || why[0])
			errmsg(iso->why, sizeof iso->why, "kept namespaces: %s", why[0] ? why : strerror(errno));
		unshare_each(iso);
	}
	close_kept(fd);
	return 0;
}

void isolate_root(struct isolation *iso)
{
	if (iso->mnt_fd >= 0) {
		/* Joining the kept mount namespace makes its root, an empty
		 * read-only tmpfs, our root and current directory. */
		if (setns(iso->mnt_fd, CLONE_NEWNS) == 0 && chdir("/") == 0)
			iso->namespaces |= CLONE_NEWNS, iso->empty_root = 1;
		else
			errmsg(iso->why, sizeof iso->why, "joining the kept mount namespace: %s", strerror(errno));
		close(iso->mnt_fd);
		iso->mnt_fd = -1;
		return;
	}
	if (!(iso->namespaces & CLONE_NEWNS))
		return;
	/* A new mount namespace of its own: an empty tmpfs becomes the root.
	 * chroot, not pivot_root: detaching the old root waits for an RCU grace
	 * period (measured: p99 start-up +20 ms), and the confined VMM has no
	 * call that could walk out of a chroot (no open, chdir, fchdir or
	 * chroot) and no directory descriptor to start from. */
	const char *what, *at;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		what = "making mounts private";
	else if (!(at = mount_empty()))
		what = "mounting an empty tmpfs";
	else if (chroot(at) < 0 || chdir("/") < 0)
		what = "chroot";
	else {
		iso->empty_root = 1;
		return;
	}
	errmsg(iso->why, sizeof iso->why, "no empty root: %s: %s", what, strerror(errno));
}

int isolation_names(const struct isolation *iso, const char **names)
{
	int n = 0;
	for (int i = 0; i < NKINDS; i++)
		if (iso->namespaces & kinds[i].flag)
			names[n++] = kinds[i].name;
	return n;
}
