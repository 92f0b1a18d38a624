/* SPDX-License-Identifier: GPL-2.0-only */
#include <signal.h>
#include "sandbox/stop.h"

static volatile sig_atomic_t reason;

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
}
