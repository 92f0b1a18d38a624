#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# glibc's `syscall` sites made fast entries on kvm_pvm
# (guest/arch/syscall_rewrite.c): a glibc program with sites of its own,
# run from a Debian image, prints what it prints natively: results, the red
# zone and every register kept, a blocking read restarted after a handler
# (SA_RESTART) or EINTR, a fork child running the rewritten code; and the
# site itself is a jump after its first run, its `syscall` still at +5.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 12
debian_image t-numpy python3-numpy
mkdir -p "$TMP/p"
if ! gcc -O2 -Wall -o "$TMP/p/sites" "$ROOT/tests/progs/glibc/syscall_sites.c"; then
	echo "Bail out! cannot build tests/progs/glibc/syscall_sites.c"
	exit 1
fi
"$TMP/p/sites" >"$TMP/native" 2>/dev/null
"$HUSK" run --syscalls --image t-numpy --ro p="$TMP/p" /data/p/sites >"$TMP/husk" 2>"$TMP/err"
is "$?" 0 "the program ran"
is "$(sed -n 1p "$TMP/husk")" "getppid right, the site's first byte after it ran: 0xe9, at +5: syscall" \
	"the site is a jump after its first run, the syscall instruction still at +5"
is "$(sed -n 1p "$TMP/native")" "getppid right, the site's first byte after it ran: 0xb8, at +5: syscall" \
	"natively the site is as the compiler made it"
is "$(sed -n 2p "$TMP/husk")" "short site: getppid right, getpid from the same site right, its bytes after: 0xeb" \
	"a site of glibc's read shape: its syscall a short jump to the padding after its ret; another number there still right"
is "$(sed -n 2p "$TMP/native")" "short site: getppid right, getpid from the same site right, its bytes after: 0x0f" \
	"natively the syscall instruction"
i=2
for what in "red zone" "a deep stack's new pages touched first by a stub" registers "read, SA_RESTART" "read, EINTR" "fork child"; do
	i=$((i + 1))
	is "$(sed -n ${i}p "$TMP/husk")" "$(sed -n ${i}p "$TMP/native")" "as natively: $what"
done
sites=$(sed -n 's/.*its sites made fast entries: \([0-9]*\)$/\1/p' "$TMP/err")
ok $([ "${sites:-0}" -ge 5 ] && echo 0 || echo 1) "--syscalls counts the sites made fast ($sites)"
sed -n 's/^rewritten site: /# rewritten site: /p' "$TMP/err"
done_testing
