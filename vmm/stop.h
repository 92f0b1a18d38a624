/* Why the run must stop early, set from signal handlers (timeout) or device
 * code (the host reader of stdout went away). */
#ifndef HUSK_STOP_H
#define HUSK_STOP_H

enum stop_reason { STOP_NONE, STOP_TIMEOUT, STOP_CPU, STOP_PIPE };

void stop_request(enum stop_reason r);
enum stop_reason stop_requested(void);
#endif
