/* SPDX-License-Identifier: GPL-2.0-only */
/* vector_state [THREADS SECONDS]: a program's AVX and AVX-512 registers
 * (YMM, ZMM and the mask registers) stay its own across task switches and
 * signal handlers.  Each thread fills every vector register with its own
 * value and spins with them live, long enough to be preempted by the others
 * and interrupted by SIGALRM, whose handler fills them with other values;
 * then it checks them.  With the kernel saving x87/SSE alone (fxsave) the
 * upper halves and masks came back changed.  Prints "ok ROUNDS", "no AVX"
 * (the CPU or the kernel does not enable it for programs), or what changed
 * (exit 1). */
#include <cpuid.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static int avx512;
static volatile long handled;
static double until;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t xcr0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

/* YMM0-15 hold v while the loop spins; their 64 doubles after it. */
__attribute__((target("avx"))) static void spin_ymm(double v, long n, double out[64])
{
	__asm__ volatile(
		"vbroadcastsd %[v], %%ymm0\n"
		"vbroadcastsd %[v], %%ymm1\n"
		"vbroadcastsd %[v], %%ymm2\n"
		"vbroadcastsd %[v], %%ymm3\n"
		"vbroadcastsd %[v], %%ymm4\n"
		"vbroadcastsd %[v], %%ymm5\n"
		"vbroadcastsd %[v], %%ymm6\n"
		"vbroadcastsd %[v], %%ymm7\n"
		"vbroadcastsd %[v], %%ymm8\n"
		"vbroadcastsd %[v], %%ymm9\n"
		"vbroadcastsd %[v], %%ymm10\n"
		"vbroadcastsd %[v], %%ymm11\n"
		"vbroadcastsd %[v], %%ymm12\n"
		"vbroadcastsd %[v], %%ymm13\n"
		"vbroadcastsd %[v], %%ymm14\n"
		"vbroadcastsd %[v], %%ymm15\n"
		"1: dec %[n]\n\tjnz 1b\n"
		"vmovupd %%ymm0, 0(%[o])\n"
		"vmovupd %%ymm1, 32(%[o])\n"
		"vmovupd %%ymm2, 64(%[o])\n"
		"vmovupd %%ymm3, 96(%[o])\n"
		"vmovupd %%ymm4, 128(%[o])\n"
		"vmovupd %%ymm5, 160(%[o])\n"
		"vmovupd %%ymm6, 192(%[o])\n"
		"vmovupd %%ymm7, 224(%[o])\n"
		"vmovupd %%ymm8, 256(%[o])\n"
		"vmovupd %%ymm9, 288(%[o])\n"
		"vmovupd %%ymm10, 320(%[o])\n"
		"vmovupd %%ymm11, 352(%[o])\n"
		"vmovupd %%ymm12, 384(%[o])\n"
		"vmovupd %%ymm13, 416(%[o])\n"
		"vmovupd %%ymm14, 448(%[o])\n"
		"vmovupd %%ymm15, 480(%[o])\n"
		: [n] "+r"(n) : [v] "m"(v), [o] "r"(out) : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

/* ZMM0-31 hold v and k1-k7 hold m; 256 doubles, then 7 masks. */
__attribute__((target("avx512f"))) static void spin_zmm(double v, uint16_t m, long n, double out[264])
{
	__asm__ volatile(
		"vbroadcastsd %[v], %%zmm0\n"
		"vbroadcastsd %[v], %%zmm1\n"
		"vbroadcastsd %[v], %%zmm2\n"
		"vbroadcastsd %[v], %%zmm3\n"
		"vbroadcastsd %[v], %%zmm4\n"
		"vbroadcastsd %[v], %%zmm5\n"
		"vbroadcastsd %[v], %%zmm6\n"
		"vbroadcastsd %[v], %%zmm7\n"
		"vbroadcastsd %[v], %%zmm8\n"
		"vbroadcastsd %[v], %%zmm9\n"
		"vbroadcastsd %[v], %%zmm10\n"
		"vbroadcastsd %[v], %%zmm11\n"
		"vbroadcastsd %[v], %%zmm12\n"
		"vbroadcastsd %[v], %%zmm13\n"
		"vbroadcastsd %[v], %%zmm14\n"
		"vbroadcastsd %[v], %%zmm15\n"
		"vbroadcastsd %[v], %%zmm16\n"
		"vbroadcastsd %[v], %%zmm17\n"
		"vbroadcastsd %[v], %%zmm18\n"
		"vbroadcastsd %[v], %%zmm19\n"
		"vbroadcastsd %[v], %%zmm20\n"
		"vbroadcastsd %[v], %%zmm21\n"
		"vbroadcastsd %[v], %%zmm22\n"
		"vbroadcastsd %[v], %%zmm23\n"
		"vbroadcastsd %[v], %%zmm24\n"
		"vbroadcastsd %[v], %%zmm25\n"
		"vbroadcastsd %[v], %%zmm26\n"
		"vbroadcastsd %[v], %%zmm27\n"
		"vbroadcastsd %[v], %%zmm28\n"
		"vbroadcastsd %[v], %%zmm29\n"
		"vbroadcastsd %[v], %%zmm30\n"
		"vbroadcastsd %[v], %%zmm31\n"
		"kmovw %k[m], %%k1\n"
		"kmovw %k[m], %%k2\n"
		"kmovw %k[m], %%k3\n"
		"kmovw %k[m], %%k4\n"
		"kmovw %k[m], %%k5\n"
		"kmovw %k[m], %%k6\n"
		"kmovw %k[m], %%k7\n"
		"1: dec %[n]\n\tjnz 1b\n"
		"vmovupd %%zmm0, 0(%[o])\n"
		"vmovupd %%zmm1, 64(%[o])\n"
		"vmovupd %%zmm2, 128(%[o])\n"
		"vmovupd %%zmm3, 192(%[o])\n"
		"vmovupd %%zmm4, 256(%[o])\n"
		"vmovupd %%zmm5, 320(%[o])\n"
		"vmovupd %%zmm6, 384(%[o])\n"
		"vmovupd %%zmm7, 448(%[o])\n"
		"vmovupd %%zmm8, 512(%[o])\n"
		"vmovupd %%zmm9, 576(%[o])\n"
		"vmovupd %%zmm10, 640(%[o])\n"
		"vmovupd %%zmm11, 704(%[o])\n"
		"vmovupd %%zmm12, 768(%[o])\n"
		"vmovupd %%zmm13, 832(%[o])\n"
		"vmovupd %%zmm14, 896(%[o])\n"
		"vmovupd %%zmm15, 960(%[o])\n"
		"vmovupd %%zmm16, 1024(%[o])\n"
		"vmovupd %%zmm17, 1088(%[o])\n"
		"vmovupd %%zmm18, 1152(%[o])\n"
		"vmovupd %%zmm19, 1216(%[o])\n"
		"vmovupd %%zmm20, 1280(%[o])\n"
		"vmovupd %%zmm21, 1344(%[o])\n"
		"vmovupd %%zmm22, 1408(%[o])\n"
		"vmovupd %%zmm23, 1472(%[o])\n"
		"vmovupd %%zmm24, 1536(%[o])\n"
		"vmovupd %%zmm25, 1600(%[o])\n"
		"vmovupd %%zmm26, 1664(%[o])\n"
		"vmovupd %%zmm27, 1728(%[o])\n"
		"vmovupd %%zmm28, 1792(%[o])\n"
		"vmovupd %%zmm29, 1856(%[o])\n"
		"vmovupd %%zmm30, 1920(%[o])\n"
		"vmovupd %%zmm31, 1984(%[o])\n"
		"kmovw %%k1, %%eax\n\tmovw %%ax, 2048(%[o])\n"
		"kmovw %%k2, %%eax\n\tmovw %%ax, 2050(%[o])\n"
		"kmovw %%k3, %%eax\n\tmovw %%ax, 2052(%[o])\n"
		"kmovw %%k4, %%eax\n\tmovw %%ax, 2054(%[o])\n"
		"kmovw %%k5, %%eax\n\tmovw %%ax, 2056(%[o])\n"
		"kmovw %%k6, %%eax\n\tmovw %%ax, 2058(%[o])\n"
		"kmovw %%k7, %%eax\n\tmovw %%ax, 2060(%[o])\n"
		: [n] "+r"(n) : [v] "m"(v), [m] "r"((uint32_t)m), [o] "r"(out) : "memory", "rax", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7");
}

static void handler(int sig)
{
	(void)sig;
	double junk[264];
	if (avx512)
		spin_zmm(-1.0, 0xdead, 1, junk);
	else
		spin_ymm(-1.0, 1, junk);
	handled++;
}

static void *run(void *arg)
{
	long id = (long)arg, rounds = 0;
	double out[264];
	while (now() < until) {
		double v = id * 1000.0 + rounds + 0.5;
		uint16_t m = (uint16_t)(0x1111 * (id + 1) + rounds);
		int n = 64;
		if (avx512) {
			spin_zmm(v, m, 2000000, out);
			n = 256;
			uint16_t k[7];
			memcpy(k, out + 256, sizeof k);
			for (int i = 0; i < 7; i++)
				if (k[i] != m) {
					printf("thread %ld round %ld: k%d is %#x, not %#x\n", id, rounds, i + 1, k[i], m);
					exit(1);
				}
		} else {
			spin_ymm(v, 2000000, out);
		}
		for (int i = 0; i < n; i++)
			if (out[i] != v) {
				printf("thread %ld round %ld: %s%d lane %d is %g, not %g\n", id, rounds, avx512 ? "zmm" : "ymm",
				       i / (avx512 ? 8 : 4), i % (avx512 ? 8 : 4), out[i], v);
				exit(1);
			}
		rounds++;
	}
	return (void *)rounds;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	double seconds = argc > 2 ? atof(argv[2]) : 2;
	unsigned a, b, c, d;
	__cpuid(1, a, b, c, d);
	if (!(c >> 27 & 1) || !(c >> 28 & 1) || (xcr0() & 6) != 6) {
		puts("no AVX");
		return 0;
	}
	__cpuid_count(7, 0, a, b, c, d);
	avx512 = (b >> 16 & 1) && (xcr0() & 0xe0) == 0xe0;
	signal(SIGALRM, handler);
	struct itimerval it = { { 0, 3000 }, { 0, 3000 } };
	setitimer(ITIMER_REAL, &it, 0);
	until = now() + seconds;
	pthread_t t[64];
	long total = 0;
	for (long i = 0; i < threads && i < 64; i++)
		pthread_create(&t[i], 0, run, (void *)i);
	for (long i = 0; i < threads && i < 64; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("ok %ld rounds of %s, %ld signals handled\n", total, avx512 ? "AVX-512" : "AVX", handled);
	return 0;
}
