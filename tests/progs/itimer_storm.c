// SPDX-License-Identifier: GPL-2.0-only
/* A 1-microsecond interval timer with a handler (or ignored, with an
 * argument): the program must still make progress ("alive" lines), and the
 * run's wall-clock limit must still end it. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile long ticks;
static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

int main(int argc, char **argv)
{
	(void)argv;
	signal(SIGALRM, argc > 1 ? SIG_IGN : on_tick);
	struct itimerval it = { { 0, 1 }, { 0, 1 } };
	setitimer(ITIMER_REAL, &it, NULL);
	for (volatile unsigned long i = 1;; i++)
		if (i % 20000000 == 0) {
			printf("alive %ld\n", ticks);
			fflush(stdout);
		}
}
