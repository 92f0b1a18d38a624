#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# syscheck.sh ELF: check that a static program uses our musl's fast entry.
# Every function holding a `syscall` instruction must also read __sysinfo and
# call through it, except the ones musl-fastcall.patch deliberately leaves
# alone (__clone, __restore_rt, vfork, __unmapself).  Needs the symbol table
# (run it before strip).  Prints nothing and exits 0 when the check passes.
set -eu
die() { echo "syscheck.sh: $*" >&2; exit 1; }
elf=${1:?usage: syscheck.sh ELF}
[ -f "$elf" ] || die "$elf: no such file"
sysinfo=$(nm "$elf" | awk '$3 == "__sysinfo" { print $1 }')
[ -n "$sysinfo" ] || die "$elf does not contain musl's __sysinfo (not linked against our musl, or stripped?)"
raw=$(objdump -d --no-show-raw-insn "$elf" | awk -v a="$(printf %x "0x$sysinfo")" '
	function done() { if (sc && !(ld && ic)) print f }
	/^[0-9a-f]+ <.*>:$/ { done(); f = $2; sc = ld = ic = 0; next }
	/\tsyscall/ { sc++ }
	index($0, "# " a " <__sysinfo>") { ld++ }
	/(call|jmp) +\*%/ { ic++ }
	END { done() }')
bad=$(echo "$raw" | grep -Ev '^(<(__clone|__restore_rt|vfork|__unmapself)>:)?$' || true)
[ -z "$bad" ] || die "$elf: syscall instructions without the fast entry in:" $bad
