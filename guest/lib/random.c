/* SPDX-License-Identifier: GPL-2.0-only */
/* getrandom(2): ChaCha20 keystream keyed with the VMM's 32-byte boot seed
 * (from the host's getrandom).  Each call re-keys from the stream, so earlier
 * output cannot be recomputed from the state left behind. */
#include <string.h>
#include "kernel.h"

static uint32_t key[8];
static uint64_t counter;

#define ROTL(a, b) (((a) << (b)) | ((a) >> (32 - (b))))
#define QR(a, b, c, d) (a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), \
			a += b, d ^= a, d = ROTL(d, 8), c += d, b ^= c, b = ROTL(b, 7))

static void chacha_block(uint32_t out[16])
{
	uint32_t in[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
	memcpy(in + 4, key, 32);
	in[12] = (uint32_t)counter, in[13] = (uint32_t)(counter >> 32);
	in[14] = in[15] = 0;
	counter++;
	uint32_t x[16];
	memcpy(x, in, sizeof x);
	for (int i = 0; i < 10; i++) {
		QR(x[0], x[4], x[8], x[12]), QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]), QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]), QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]), QR(x[3], x[4], x[9], x[14]);
	}
	for (int i = 0; i < 16; i++)
		out[i] = x[i] + in[i];
}

void random_init(const uint8_t seed[32])
{
	memcpy(key, seed, sizeof key);
	counter = 0;
}

void random_fill(void *buf, size_t n)
{
	uint32_t block[16];
	uint8_t *p = buf;
	while (n) {
		chacha_block(block);
		size_t k = n < sizeof block ? n : sizeof block;
		memcpy(p, block, k);
		p += k, n -= k;
	}
	chacha_block(block);
	memcpy(key, block, sizeof key); /* fast key erasure */
	memset(block, 0, sizeof block);
}
