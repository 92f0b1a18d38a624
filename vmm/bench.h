/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HUSK_BENCH_H
#define HUSK_BENCH_H
/* husk bench [OPTIONS]: runs bench/husk_bench.py; returns only on error. */
int bench_command(int argc, char **argv);
#endif
