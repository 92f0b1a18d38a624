/* SPDX-License-Identifier: GPL-2.0-only */
/* Why the run must stop early, set from signal handlers (timeout, CPU time)
 * or device code (the output limit; the host reader of stdout went away).
 * The first reason wins.  Device loops check it between requests and
 * between chunks of large I/O. */
#ifndef HUSK_STOP_H
#define HUSK_STOP_H

enum stop_reason { STOP_NONE, STOP_TIMEOUT, STOP_CPU, STOP_PIPE, STOP_OUTPUT };

void stop_request(enum stop_reason r);
enum stop_reason stop_requested(void);
/* The stop requested is one the guest may finish first (a time limit: it
 * writes its file systems' caches, run.c): until grace_ms from now the
 * devices go on serving it. */
void stop_finish(long long grace_ms);
/* Whether device work must end now: a stop was requested, and it is not
 * one being finished, or its grace is over.  (What the devices ask; the
 * run itself asks stop_requested.) */
int stop_now(void);
/* Forgets the request: for code that drives the devices over and over in
 * one process (the fuzz targets). */
void stop_reset(void);

/* For the handlers of husk's own stop signals (Ctrl-C, SIGTERM...): 1 when
 * SIG is a second request of its kind, which ends the run at once.  One
 * request often comes as two deliveries within microseconds (a terminal's
 * Ctrl-C reaches the whole process group; timeout(1) signals its child and
 * then its group): a repeat within STOP_REPEAT_MS of the first is the same
 * request.  Async-signal-safe. */
#define STOP_REPEAT_MS 150
int stop_signal_again(int sig);
#endif
