#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Static C programs: the stock musl `syscall` path, our libc's fast entry,
# faults mapped to signals, argv and environment.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 14

for libc in stock husk; do
	got=$(HUSK_TEST=leak "$HUSK" run "$PROGS/$libc/hello" a "b c")
	is "$got" "hello from static C, argc=3 [a] [b c] HUSK_TEST=(unset)" "$libc libc: argv arrives, host environment does not"
	got=$("$HUSK" run -e HUSK_TEST=given "$PROGS/$libc/hello")
	is "$got" "hello from static C, argc=1 HUSK_TEST=given" "$libc libc: -e sets a variable"
done

"$HUSK" run --syscalls "$PROGS/stock/hello" 2>"$TMP/calls" >/dev/null
grep -q ' writev ' "$TMP/calls"; ok $? "--syscalls lists the calls the run made (stock musl: syscall instruction)"

for libc in stock husk; do
	"$HUSK" run "$PROGS/$libc/segv" 2>"$TMP/err"
	is "$?" 139 "$libc: NULL write exits 139 (SIGSEGV)"
	grep -q 'SIGSEGV (page fault) at rip 0x[0-9a-f]*, address 0 (write)' "$TMP/err"; ok $? "$libc: one-line fault report names signal, rip and address"
	"$HUSK" run "$PROGS/$libc/sigill" 2>/dev/null
	is "$?" 132 "$libc: ud2 exits 132 (SIGILL)"
	"$HUSK" run "$PROGS/$libc/sigfpe" 2>/dev/null
	is "$?" 136 "$libc: division by zero exits 136 (SIGFPE)"
done

"$HUSK" run "$PROGS/husk/stack_overflow" 2>"$TMP/err"
is "$?" 139 "runaway recursion hits the stack guard page: SIGSEGV"
done_testing
