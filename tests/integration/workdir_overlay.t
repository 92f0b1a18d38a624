#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The workdir is a copy-on-write view of the host files (vmm/disks/mapped.c):
# nothing is copied at the start, the program reads the host files and its
# writes go to a sparse image; the write-back applies only what it changed,
# whatever it renamed or replaced meanwhile; a host file replaced during the
# run is never read in place of the one walked.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 23
export TMPDIR="$TMP/tmpdir"
mkdir -p "$TMPDIR"
W=$TMP/w
mkdir -p "$W/a" "$W/b"
# 1 GiB of real blocks (not a sparse file), and a few small files
dd if=/dev/urandom of="$W/a/big" bs=1M count=1024 status=none
seq 1 100000 > "$W/a/lines"
echo small > "$W/small"
big_sum=$(sha256sum < "$W/a/big" | cut -d' ' -f1)

# 1. The start copies nothing: while the program runs, the image holds
#    metadata only; the program reads the host file byte for byte.
"$HUSK" run --disk 4G -w "$W" python -c '
import hashlib, time
h = hashlib.sha256()
with open("/workdir/a/big", "rb") as f:
    while b := f.read(1 << 20):
        h.update(b)
print(h.hexdigest())
time.sleep(2)
' > "$TMP/out" 2> "$TMP/err" &
pid=$!
sleep 1.5
img_kib=$(du -k "$TMPDIR"/husk-workdir-* 2>/dev/null | awk '{s += $1} END {print s + 0}')
wait $pid
is "$?" 0 "a run with a 1 GiB file in a 4G workdir"
[ "$img_kib" -gt 0 ] && [ "$img_kib" -lt 65536 ]; ok $? "its image holds metadata only ($img_kib KiB on disk)"
is "$(cat "$TMP/out")" "$big_sum" "the program reads the host file byte for byte (sha256)"
ino=$(stat -c %i "$W/a/big")

# 2. Changes: a patch inside a block, an append, a rename to another
#    directory with a new file at the old name, a file deleted.
"$HUSK" run --stats --disk 4G -w "$W" python -c '
import os
with open("a/lines", "r+b") as f:
    f.seek(5000); f.write(b"PATCHED")
with open("small", "a") as f:
    f.write("more\n")
os.rename("a/big", "b/big")
open("a/big", "w").write("new file at the old name\n")
' 2> "$TMP/err"
is "$?" 0 "a run that patches, appends, renames and replaces"
python3 - "$W/a/lines" <<'EOF' > "$TMP/want"
import sys
b = bytearray(b"".join(b"%d\n" % i for i in range(1, 100001)))
b[5000:5007] = b"PATCHED"
sys.stdout.buffer.write(b)
EOF
cmp -s "$TMP/want" "$W/a/lines"; ok $? "a patch in the middle of a block: the rest of the file is the host's"
is "$(cat "$W/small")" "small
more" "an append"
is "$(sha256sum < "$W/b/big" | cut -d' ' -f1)" "$big_sum" "a file renamed to another directory keeps its data"
is "$(cat "$W/a/big")" "new file at the old name" "and the new file at its old name is the program's"
grep -q "conflict:" "$TMP/err"; is "$?" 1 "no conflict reported"

# 3. A run that changes nothing writes nothing back.
ino2=$(stat -c %i "$W/b/big")
mtime=$(stat -c %Y "$W/a/lines")
"$HUSK" run --stats --disk 4G -w "$W" python -c 'open("/workdir/a/lines").read()' 2> "$TMP/err"
is "$?" 0 "a run that only reads"
grep -q "workdir: 0 files / 0 bytes written back" "$TMP/err"; ok $? "writes nothing back"
is "$(stat -c %i "$W/b/big") $(stat -c %Y "$W/a/lines")" "$ino2 $mtime" "the host files are the same inodes, unmodified"

# 4. The host replaces a file during the run that the program has not read:
#    the program gets an error, never the new file's bytes in the old one's place.
printf 'old content\n' > "$W/swapped"
"$HUSK" run --audit "$TMP/audit" --disk 4G -w "$W" python -c '
import time
time.sleep(1.5)
try:
    print(open("/workdir/swapped").read(), end="")
except OSError as e:
    print("error", e.errno)
' > "$TMP/out" 2> "$TMP/err" &
pid=$!
sleep 0.5
printf 'host content\n' > "$TMP/new" && mv "$TMP/new" "$W/swapped"
wait $pid
is "$(cat "$TMP/out")" "error 5" "reading a host file replaced during the run is EIO"
grep -q "^husk: note: [0-9]* reads in /workdir failed (EIO): host files there were replaced or removed during the run$" "$TMP/err"
ok $? "husk says why, in one line"
grep -q '"event": *"host files changed"' "$TMP/audit"; ok $? "and the audit records it"
is "$(cat "$W/swapped")" "host content" "and the host's file stays"

# 5. The program changes part of a file, then the host replaces it: the
#    program's version cannot be rebuilt (its unchanged blocks were in the
#    old file): said in one conflict line, the host's file kept.
dd if=/dev/urandom of="$W/shared" bs=1M count=8 status=none
"$HUSK" run --disk 4G -w "$W" python -c '
import os, time
with open("/workdir/shared", "r+b") as f:
    f.write(b"program")
    os.fsync(f.fileno())
time.sleep(2)
' 2> "$TMP/err" &
pid=$!
sleep 1
printf 'host replaced it\n' > "$TMP/new" && mv "$TMP/new" "$W/shared"
wait $pid
is "$?" 0 "the run's status is the program's"
grep -q "conflict: shared was changed by the program, but the parts it left were in the host's file" "$TMP/err"
ok $? "one line says the program's version cannot be rebuilt"
is "$(cat "$W/shared")" "host replaced it" "the host's file is kept"
[ ! -e "$W/shared.husk-conflict" ]; ok $? "no half-rebuilt copy beside it"

# 6. A long write-back (a 1 GiB file changed) shows its progress on a
#    terminal, and nothing when stderr is not one.
script -qec "\"$HUSK\" run --disk 4G -w \"$W\" python -c 'open(\"b/big\", \"r+b\").write(b\"P\")'" /dev/null \
	> "$TMP/tty" 2>&1
grep -q "husk: writing the workdir back: [0-9]* entries, [0-9]* MB" "$TMP/tty"
ok $? "a long write-back shows its progress on a terminal"
"$HUSK" run --disk 4G -w "$W" python -c 'open("b/big", "r+b").write(b"Q")' 2> "$TMP/err"
is "$?:$(wc -c < "$TMP/err")" "0:0" "and nothing when stderr is not one"

# 7. Nothing of the image is left behind.
is "$(ls "$TMPDIR")" "" "no image left in TMPDIR"
done_testing
