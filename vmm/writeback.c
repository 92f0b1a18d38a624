#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "errmsg.h"
#include "exit_codes.h"
#include "extract.h"
#include "writeback.h"

struct report {
	int failed;
	struct extract_stats st;
	char err[400];
};

static void full_write(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k <= 0 && errno != EINTR)
			return;
		if (k > 0)
			p = (const char *)p + k, n -= k;
	}
}

static _Noreturn void helper(int go, int result, struct disks *ds)
{
	/* A Ctrl-C reaches the whole process group: the helper still cleans
	 * up, learning of the end of the run from its pipe. */
	signal(SIGINT, SIG_IGN), signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGQUIT, SIG_IGN);
	char c;
	ssize_t k;
	while ((k = read(go, &c, 1)) < 0 && errno == EINTR)
		;
	struct disk *d = &ds->d[ds->workdir];
	struct report r = { 0 };
	if (k == 1) { /* the VMM ended the run (else it died: just clean up) */
		struct extract_limits lim = { 1000000, d->size };
		r.failed = workdir_extract(d->image, ds->workdir_path, &lim, &r.st, r.err, sizeof r.err) != 0;
		full_write(result, &r, sizeof r);
	}
	unlink(d->image);
	_exit(0);
}

int writeback_start(struct writeback *w, struct disks *ds, char *err, size_t n)
{
	int go[2], result[2];
	w->go = w->result = -1;
	if (ds->workdir < 0)
		return 0;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(result, O_CLOEXEC) < 0)
		return errmsg(err, n, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return errmsg(err, n, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(go[1]), close(result[0]);
		helper(go[0], result[1], ds);
	}
	close(go[0]), close(result[1]);
	w->go = go[1], w->result = result[0], w->pid = pid;
	ds->d[ds->workdir].temporary = 0; /* the helper deletes the image */
	return 0;
}

int writeback_finish(struct writeback *w, struct disks *ds, int status, struct extract_stats *st)
{
	if (w->go < 0)
		return status;
	struct disk *d = &ds->d[ds->workdir];
	fdatasync(d->fd);
	full_write(w->go, "g", 1);
	struct report r;
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t k = read(w->result, (char *)&r + got, sizeof r - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += k;
	}
	close(w->go);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		; /* husk leaves no process behind */
	if (got < sizeof r) {
		fprintf(stderr, "husk: workdir %s: the write-back helper died\n", ds->workdir_path);
		return EXIT_WORKDIR;
	}
	r.err[sizeof r.err - 1] = 0;
	if (st)
		*st = r.st;
	if (r.failed) {
		fprintf(stderr, "husk: workdir %s: %s\n", ds->workdir_path, r.err);
		return EXIT_WORKDIR;
	}
	if (status)
		fprintf(stderr, "husk: the run failed (status %d); the workdir was still written back to %s "
			"(%llu files written, %llu unchanged, %llu removed)\n", status, ds->workdir_path,
			(unsigned long long)r.st.files, (unsigned long long)r.st.unchanged, (unsigned long long)r.st.removed);
	return status;
}
