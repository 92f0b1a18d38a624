#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "confine.h"
#include "errmsg.h"
#include "exit_codes.h"
#include "isolate.h"

static const struct {
	int flag;
	const char *name;
} kinds[] = {
	{ CLONE_NEWPID, "pid" }, { CLONE_NEWNS, "mnt" }, { CLONE_NEWNET, "net" },
	{ CLONE_NEWIPC, "ipc" }, { CLONE_NEWUTS, "uts" },
};

static pid_t vmm;
static volatile sig_atomic_t stop_signal;

/* A stop request for husk ends the VMM at once, as it did before there was a
 * supervisor: the VMM is pid 1 of its namespace and ignores everything else
 * sent from outside. */
static void forward(int sig)
{
	stop_signal = sig;
	kill(vmm, SIGKILL);
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
	char err[256];
	if (confine_supervisor(err, sizeof err)) {
		kill(vmm, SIGKILL);
		fprintf(stderr, "husk: %s\n", err);
		_exit(EXIT_INTERNAL);
	}
	int st = 0;
	while (waitpid(vmm, &st, 0) < 0 && errno == EINTR)
		;
	while (wait(NULL) > 0 || errno == EINTR)
		; /* the write-back helper: nothing outlives husk */
	if (WIFEXITED(st) && !stop_signal)
		_exit(WEXITSTATUS(st));
	int sig = stop_signal ? stop_signal : WTERMSIG(st);
	signal(sig, SIG_DFL);
	raise(sig); /* end as the VMM did (no core: RLIMIT_CORE is 0) */
	_exit(128 + sig);
}

int isolate_vmm(struct isolation *iso, char *err, size_t n)
{
	iso->namespaces = iso->empty_root = 0;
	iso->why[0] = 0;
	if (unshare(CLONE_NEWPID) < 0) {
		errmsg(iso->why, sizeof iso->why, "new namespaces: %s", strerror(errno));
		return 0;
	}
	fflush(NULL);
	vmm = fork();
	if (vmm < 0)
		return errmsg(err, n, "fork: %s", strerror(errno));
	if (vmm > 0)
		supervise();
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed supervisor takes the VMM along */
	iso->namespaces = CLONE_NEWPID;
	int rest = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
	if (unshare(rest) == 0) {
		iso->namespaces |= rest;
		return 0;
	}
	/* One at a time: a host may forbid only some. */
	for (size_t i = 1; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (unshare(kinds[i].flag) == 0)
			iso->namespaces |= kinds[i].flag;
		else if (!iso->why[0])
			errmsg(iso->why, sizeof iso->why, "no %s namespace: %s", kinds[i].name, strerror(errno));
	}
	return 0;
}

void isolate_root(struct isolation *iso)
{
	if (!(iso->namespaces & CLONE_NEWNS))
		return;
	/* An empty read-only tmpfs on any existing directory (the mount is in
	 * the VMM's namespace only), made the root.  chroot, not pivot_root:
	 * detaching the old root waits for an RCU grace period (measured: p99
	 * start-up +20 ms), and the confined VMM has no call that could walk
	 * out of a chroot (no open, chdir, fchdir or chroot) and no directory
	 * descriptor to start from. */
	static const char *const points[] = { "/tmp", "/run", "/mnt", "/proc" };
	const char *what = "mounting an empty tmpfs";
	int e = ENOENT;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		errmsg(iso->why, sizeof iso->why, "no empty root: making mounts private: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
		if (mount("husk-empty", points[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
			  "size=4k,nr_inodes=1,mode=0555") < 0) {
			e = errno;
			continue;
		}
		if (chroot(points[i]) == 0 && chdir("/") == 0) {
			iso->empty_root = 1;
			return;
		}
		what = "chroot", e = errno;
		break;
	}
	errmsg(iso->why, sizeof iso->why, "no empty root: %s: %s", what, strerror(e));
}

int isolation_names(const struct isolation *iso, const char **names)
{
	int n = 0;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (iso->namespaces & kinds[i].flag)
			names[n++] = kinds[i].name;
	return n;
}
