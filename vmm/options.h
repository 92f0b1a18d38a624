/* A run's settings, from the command line and the policy file. */
#ifndef HUSK_OPTIONS_H
#define HUSK_OPTIONS_H
#include <stdint.h>

struct options {
	uint64_t memory;
	double timeout, cpu_time;
	uint64_t output_limit;
	uint32_t open_files;
	char **env;
	int nenv;
	int no_pvm, no_namespaces, syscalls, selftest, stats;
	const char *audit;  /* --audit FILE */
	char **ro;       /* --ro NAME=PATH */
	int nro;
	const char *workdir;
	uint64_t disk_size;
	const char *program;
	char **args; /* argv of the program, args[0] = program as given */
	int nargs;
};
#endif
