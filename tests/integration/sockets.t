#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Unix sockets with names (guest/ipc/unix_socket.c) and named pipes
# (guest/ipc/fifo.c): tests/python/unix_sockets.py runs in husk and with
# Debian's python3 natively, and each of its lines (streams, datagrams,
# seqpackets, names in the file system and the abstract namespace, errors,
# descriptors and credentials passed, multiprocessing's Listener and
# Manager, asyncio's Unix server, mkfifo) must read the same.  Then the same
# with the sockets in /workdir (ext2), and what the write-back does with
# them.
. "$(dirname "$0")/../lib.sh"
need_kvm
CHECKS=15
plan $((CHECKS + 4))
W=$TMP/w
mkdir -p "$W" "$TMP/native"
cp "$ROOT/tests/python/unix_sockets.py" "$W/"
python3 "$W/unix_sockets.py" "$TMP/native" > "$TMP/native.out" 2>&1
"$HUSK" run -t 120 -w "$W" python /workdir/unix_sockets.py /tmp > "$TMP/husk.out" 2> "$TMP/err"; st=$?
is "$st:$(wc -l < "$TMP/native.out")" "0:$CHECKS" "the script runs in husk (status 0) and natively ($CHECKS checks)"
tail -n 5 "$TMP/err" | sed 's/^/#   stderr: /'
same_lines "$TMP/native.out" "$TMP/husk.out" $CHECKS

# The same in the workdir's ext2 file system; the nodes stay in the guest.
mkdir -p "$W/socks"
"$HUSK" run -t 120 -w "$W" python /workdir/unix_sockets.py /workdir/socks > "$TMP/husk-w.out" 2> "$TMP/err-w"; st=$?
is "$st:$(diff "$TMP/native.out" "$TMP/husk-w.out" | head -5 | tr '\n' '|')" "0:" \
	"in /workdir (ext2): every line as natively"
left=$(find "$W/socks" \( -type s -o -type p \) | wc -l)
is "$left" "0" "no socket or FIFO node the script left in /workdir comes back to the host"
"$HUSK" run -t 30 -w "$W" python -c '
import os, socket
os.mkfifo("/workdir/socks/ff")
socket.socket(socket.AF_UNIX).bind("/workdir/socks/ss")' 2> "$TMP/err-k"; st=$?
is "$st:$(grep -c 'skipped' "$TMP/err-k"):$(find "$W/socks" -name ff -o -name ss | wc -l)" "0:2:0" \
	"a FIFO and a bound socket in the workdir: both skipped by the write-back with a note, neither made on the host"
