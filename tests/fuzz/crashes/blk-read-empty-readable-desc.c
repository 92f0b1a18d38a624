/* Reproducer (not a crash): vmm/virtio_blk.c serve() answers a read whose
 * header is followed by an empty device-readable descriptor with S_OK and a
 * used length of 513, yet writes nothing into the 512-byte buffer: take()
 * stops at the empty readable segment, so do_io() gets no iovec but
 * len = data_in.  The guest sees stale memory as disk data (no host memory
 * is touched).  Same shape for GET_ID (claims 20 bytes).
 *   cc -std=c11 -D_GNU_SOURCE -Iinclude -Ivmm -o /tmp/blk-repro \
 *      tests/fuzz/crashes/blk-read-empty-readable-desc.c vmm/virtio_blk.c \
 *      vmm/virtio_mmio.c vmm/virtq.c vmm/guest_mem.c && /tmp/blk-repro
 * prints: status 0, used len 513, data[0] 0x11 (disk has 0xab), bytes_read 512 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "husk/virtio_regs.h"
#include "virtio_blk.h"
static struct guest_mem mem; static struct blk b;
static void wr(uint64_t off, uint32_t v){ const char *e=0; if (virtio_mmio_access(&b.mmio, off, (uint8_t*)&v, 4, 1, &e)) printf("err %s\n", e); }
static void desc(int i, uint64_t a, uint32_t l, uint16_t f, uint16_t n){ uint8_t *d = mem.host + 0x1000 + 16*i; memcpy(d,&a,8); memcpy(d+8,&l,4); memcpy(d+12,&f,2); memcpy(d+14,&n,2);}
int main(void){
  mem.size = 1<<16; mem.host = calloc(1, mem.size);
  int fd = memfd_create("d", 0); ftruncate(fd, 1<<20); uint8_t sec[512]; memset(sec, 0xAB, 512); pwrite(fd, sec, 512, 0);
  blk_init(&b, 0, &mem, fd, 1<<20, 0, "x");
  wr(VIRTIO_MMIO_STATUS, 0); wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1); wr(VIRTIO_MMIO_DRIVER_FEATURES, 1); wr(VIRTIO_MMIO_STATUS, 15);
  wr(VIRTIO_MMIO_QUEUE_SEL, 0); wr(VIRTIO_MMIO_QUEUE_NUM, 8); wr(VIRTIO_MMIO_QUEUE_DESC_LOW, 0x1000); wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, 0x2000); wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, 0x3000); wr(VIRTIO_MMIO_QUEUE_READY, 1);
  /* T_IN sector 0: header(16, R) -> empty readable (0, R) -> data 512 W -> status 1 W */
  desc(0, 0x4000, 16, 1, 1); desc(1, 0x4100, 0, 1, 2); desc(2, 0x5000, 512, 3, 3); desc(3, 0x6000, 1, 2, 0);
  memset(mem.host + 0x5000, 0x11, 512); mem.host[0x6000] = 0xff;
  uint16_t one = 1; memcpy(mem.host + 0x2002, &one, 2);
  wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
  uint32_t used_len; memcpy(&used_len, mem.host + 0x3008, 4);
  printf("status %u, used len %u, data[0] %#x (disk has 0xab), bytes_read %llu\n", mem.host[0x6000], used_len, mem.host[0x5000], (unsigned long long)b.bytes_read);
}
