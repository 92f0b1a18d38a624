/* SPDX-License-Identifier: GPL-2.0-only */
#include <signal.h>
#include <time.h>
#include "sandbox/stop.h"

static volatile sig_atomic_t reason;
static long long finish_by_ms; /* a stop the guest is given until then to finish (stop_finish) */
static long long monotonic_ms(void);

void stop_request(enum stop_reason r)
{
	if (!reason)
		reason = r;
}

enum stop_reason stop_requested(void)
{
	return reason;
}

void stop_reset(void)
{
	reason = STOP_NONE;
	finish_by_ms = 0;
}

static long long monotonic_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int stop_signal_again(int sig)
{
	static volatile sig_atomic_t seen; /* a bit per signal */
	static long long first_ms[NSIG];
	int bit = 1 << (sig - 1);
	if (!(seen & bit)) {
		first_ms[sig] = monotonic_ms();
		seen |= bit;
		return 0;
	}
	return monotonic_ms() - first_ms[sig] >= STOP_REPEAT_MS;
}

void stop_finish(long long grace_ms)
{
	finish_by_ms = monotonic_ms() + grace_ms;
}

int stop_now(void)
{
	return reason != STOP_NONE && (!finish_by_ms || monotonic_ms() >= finish_by_ms);
}
