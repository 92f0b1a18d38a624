/* Guest RAM and the one bounds-checked way to reach it from the host. */
#ifndef HUSK_GUEST_MEM_H
#define HUSK_GUEST_MEM_H
#include <stddef.h>
#include <stdint.h>

struct guest_mem {
	uint8_t *host; /* guest physical 0 */
	uint64_t size;
};

/* Anonymous, 2 MiB-aligned, MADV_HUGEPAGE.  Returns 0 or -errno. */
int guest_mem_alloc(struct guest_mem *m, uint64_t size);
void guest_mem_free(struct guest_mem *m);

/* Host pointer to [gpa, gpa+len) if all of it is guest RAM, else NULL.
 * Every address or length that comes from the guest goes through here. */
void *gpa_ptr(const struct guest_mem *m, uint64_t gpa, uint64_t len);
#endif
