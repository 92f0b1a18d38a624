/* The audit trail (--audit FILE): JSON lines appended to FILE, a start
 * record, the denials and limits the run met, and an end record; --stats
 * prints the end record's gist on stderr.  Counts the guest kernel reports
 * (denials it answered itself) are marked as such: the guest is untrusted. */
#ifndef HUSK_AUDIT_H
#define HUSK_AUDIT_H
#include <stdint.h>
#include "husk/abi.h"
#include "options.h"

struct run_record {
	const char *reason;
	int status;
	double wall_s, cpu_s;
	uint64_t peak_memory;          /* guest RAM the host had to back */
	uint64_t bytes_out, bytes_err;
	int output_cut, timeout_hit, cpu_hit;
	uint64_t blk_denied_writes;    /* host-counted, at the virtio-blk device */
	uint64_t workdir_bytes, workdir_files;
};

/* Opened and the start written before the VMM is confined; -1 without --audit. */
int audit_start(const struct options *o);
void audit_end(int fd, const struct run_record *r, const struct husk_report *guest);
void stats_print(const struct run_record *r);
#endif
