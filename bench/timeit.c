/* timeit N CMD [ARGS...]: run CMD N times (stdout to /dev/null) and print
 * "p50_us p99_us" of the wall time from fork to exit.  Fails if any run
 * exits non-zero, so a broken command never looks fast. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: timeit N CMD [ARGS...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	if (n < 1) {
		fprintf(stderr, "timeit: bad count '%s'\n", argv[1]);
		return 2;
	}
	double *t = malloc(n * sizeof *t);
	int devnull = open("/dev/null", O_WRONLY);
	for (int i = 0; i < n; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(devnull, 1);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "timeit: %s failed (status %#x)\n", argv[2], st);
			return 1;
		}
		t[i] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, n, sizeof *t, cmp);
	printf("%.0f %.0f\n", t[n / 2], t[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
	return 0;
}
