#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Command-line errors: one line, exit 125.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 26

check() { # check DESCRIPTION PATTERN ARGS...
	desc=$1 pattern=$2
	shift 2
	"$HUSK" "$@" >/dev/null 2>"$TMP/err"
	is "$?" 125 "$desc: exit 125"
	[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "$pattern" "$TMP/err"
	ok $? "$desc: one line naming the problem"
}

printf 'not an elf' > "$TMP/text"
{ printf '\177ELF\001\001\001'; head -c 57 /dev/zero; } > "$TMP/elf32"
check "unknown option" "unknown option" run --bogus lua
check "unknown image" "unknown image 'nosuch'" run nosuch
check "not an ELF" "not an ELF" run "$TMP/text"
check "32-bit ELF" "not a 64-bit ELF" run "$TMP/elf32"
check "dynamically linked program" "dynamically linked" run /bin/true
check "missing file" "cannot open" run "$TMP/missing"
check "memory too small" "memory size '1M'" run -m 1M lua -e ''
check "nonsense memory size" "bad memory size" run -m lots lua -e ''
check "no program" "no program" run
check "pids limit of 0" "bad pids limit '0' (a number from 1 to 4096)" run --pids 0 lua -e ''
check "pids limit beyond 4096" "bad pids limit '5000' (a number from 1 to 4096)" run --pids 5000 lua -e ''
check "nonsense pids limit" "bad pids limit 'x' (a number from 1 to 4096)" run --pids x lua -e ''

# No /dev/kvm: a private /dev without it.
unshare --mount sh -c "mount -t tmpfs none /dev && exec '$HUSK' run lua -e ''" >/dev/null 2>"$TMP/err"
is "$?" 125 "no /dev/kvm: exit 125"
grep -q 'cannot open /dev/kvm' "$TMP/err"; ok $? "no /dev/kvm: says so"
done_testing
