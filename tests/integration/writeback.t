#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The workdir write-back applies only what the program changed: the host's
# own changes during the run stay, conflicts go beside them, a swapped
# workdir is never followed, and a write-back the host cannot complete says
# which paths failed, exits 123 and keeps the program's files for a retry.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 46
export TMPDIR="$TMP/tmpdir"
mkdir -p "$TMPDIR"
[ "$(id -u)" = 0 ] || { echo "Bail out! these tests mount file systems: run them as root"; exit 1; }

# 1. A redirect of husk's own output into the workdir keeps what husk printed.
mkdir -p "$TMP/job"
(cd "$TMP/job" && "$HUSK" run -w . python -c 'print("hello from the job"); open("result.txt", "w").write("42")' > out.log 2>&1)
is "$?" 0 "a run with its output redirected into the workdir"
is "$(cat "$TMP/job/out.log")" "hello from the job" "out.log keeps exactly what husk printed"
is "$(cat "$TMP/job/result.txt")" "42" "and the program's file came back"

# 2. The host edits and creates during the run; the program changes others.
W=$TMP/w
mkdir -p "$W/d"
echo a > "$W/a.txt"; echo b > "$W/b.txt"; echo gone > "$W/gone.txt"; echo s > "$W/d/s.txt"
"$HUSK" run --stats --audit "$TMP/audit" -w "$W" python -c '
import os, time
time.sleep(2)
open("b.txt", "w").write("program b")
open("new.txt", "w").write("program new")
os.remove("gone.txt")
esc = "\x1b[31mred\nhusk: fake"
open(esc, "w").write("x")
' 2> "$TMP/err" &
pid=$!
sleep 1
holders=0 vmm=0
for p in $(pgrep -f "husk run --stats --audit $TMP/audit"); do
	ls -l /proc/$p/fd 2>/dev/null | grep -q " $W\$" || continue
	holders=$((holders + 1))
	ls -l /proc/$p/fd 2>/dev/null | grep -q "kvm" && vmm=$((vmm + 1))
done
is "$holders/$vmm" 2/0 "during the run DIR is open in the write-back helper and the file server, never in the VMM"
echo "host a" > "$W/a.txt"; echo "host b" > "$W/b.txt"; echo "host made" > "$W/hostnew.txt"; mkdir "$W/hostdir"
printf 'host' > "$W/_[31mred_husk: fake" # the name the program's file comes back under
wait $pid
is "$?" 0 "conflicts leave the program's exit status"
is "$(cat "$W/a.txt")" "host a" "a file the host edited and the program left alone keeps the host's edit"
[ -f "$W/hostnew.txt" ] && [ -d "$W/hostdir" ]; ok $? "files and directories the host created during the run stay"
is "$(cat "$W/b.txt")" "host b" "both changed b.txt: the host's version stays"
is "$(cat "$W/b.txt.husk-conflict")" "program b" "the program's version is beside it as b.txt.husk-conflict"
is "$(cat "$W/new.txt")" "program new" "a file the program created came back"
[ ! -e "$W/gone.txt" ]; ok $? "a file the program deleted is deleted"
is "$(cat "$W/d/s.txt")" "s" "untouched files stay"
grep -q 'conflict: b.txt' "$TMP/err"; ok $? "one stderr line names the conflict"
grep -q '"workdir conflict"' "$TMP/audit"; ok $? "the audit has a record for it"
grep -q ', 2 conflicts' "$TMP/err"; ok $? "--stats counts the conflicts"
! grep -q "$(printf '\033')" "$TMP/err"; ok $? "no escape byte from a guest-chosen name reaches stderr"
! grep -q '^husk: fake' "$TMP/err"; ok $? "a newline in a guest-chosen name cannot forge a husk line"

# 3. The workdir renamed and replaced by a symlink during the run.
mkdir -p "$TMP/rv/victim" "$TMP/rv/job"
echo keep > "$TMP/rv/victim/k"
"$HUSK" run -w "$TMP/rv/job" python -c 'import time; time.sleep(2); open("x", "w").write("guest")' 2>"$TMP/err" &
pid=$!
sleep 1
mv "$TMP/rv/job" "$TMP/rv/job.real"; ln -s "$TMP/rv/victim" "$TMP/rv/job"
wait $pid
is "$?" 0 "the run ends normally"
[ -f "$TMP/rv/victim/k" ] && [ ! -e "$TMP/rv/victim/x" ]; ok $? "the symlink's target is untouched"
is "$(cat "$TMP/rv/job.real/x")" "guest" "the change went to the directory copied in"
"$HUSK" run -w "$TMP/rv/job" lua -e '' 2>"$TMP/err"
is "$?" 125 "a workdir path through a symlink is refused"

# 4. A full host file system: which paths failed, 123, the image kept, a retry.
F=$TMP/full
mkdir -p "$F"
mount -t tmpfs -o size=5m tmpfs "$F" || echo "Bail out! cannot mount a tmpfs"
"$HUSK" run -w "$F" python -c '
open("big.bin", "wb").write(b"x" * 20000000)
open("small.txt", "w").write("ok")' 2>"$TMP/err"
is "$?" 123 "a write-back into a full file system exits 123"
grep -q 'cannot write back big.bin: No space left on device' "$TMP/err"; ok $? "it names the path that failed and why"
is "$(cat "$F/small.txt")" "ok" "what fitted was written"
[ ! -e "$F/big.bin" ] && [ -z "$(ls -A "$F" | grep husk-tmp)" ]; ok $? "no partial file under its final name, no temporary left"
retry=$(sed -n 's/.*retry with \(husk writeback .*\)$/\1/p' "$TMP/err")
img=$(echo "$retry" | awk '{print $3}')
[ -f "$img" ] && [ -f "$img.record" ]; ok $? "the program's files are kept where husk says ($img)"
mount -o remount,size=64m "$F"
(set -- $retry; shift; "$HUSK" "$@") 2>"$TMP/err2"
is "$?" 0 "the retry command given succeeds once there is room"
is "$(wc -c < "$F/big.bin")" 20000000 "and writes the file that failed"
[ ! -e "$img" ] && [ ! -e "$img.record" ]; ok $? "and removes the kept image"

# 5. A read-only host file system: EROFS.
"$HUSK" run -w "$F" python -c 'import time; time.sleep(2); open("late.txt", "w").write("late")' 2>"$TMP/err" &
pid=$!
sleep 1
mount -o remount,ro "$F"
wait $pid
is "$?" 123 "a write-back into a read-only file system exits 123"
grep -q 'cannot write back late.txt: Read-only file system' "$TMP/err"; ok $? "it says so, naming the path"
mount -o remount,rw "$F"
retry=$(sed -n 's/.*retry with \(husk writeback .*\)$/\1/p' "$TMP/err")
(set -- $retry; shift; "$HUSK" "$@") 2>/dev/null
is "$(cat "$F/late.txt")" "late" "the retry writes it"
umount "$F"

# 6. Permission denied: husk without CAP_DAC_OVERRIDE, a directory it may not write.
P=$TMP/perm
mkdir -p "$P/locked"
chown 65534 "$P/locked"; chmod 755 "$P/locked"
setpriv --bounding-set=-dac_override,-dac_read_search -- "$HUSK" run -w "$P" python -c '
open("locked/x.txt", "w").write("x"); open("free.txt", "w").write("y")' 2>"$TMP/err"
is "$?" 123 "a write-back refused by permissions exits 123"
grep -q 'cannot write back locked/x.txt: Permission denied' "$TMP/err"; ok $? "it names the path (EACCES)"
is "$(cat "$P/free.txt")" "y" "the rest is written"

# 6b. A disk quota: EDQUOT (this kernel has no quotas: a FUSE file system
# that answers EDQUOT past 1 MB, tests/fs/quota_fs.py).
Q=$TMP/quota
mkdir -p "$Q.backing" "$Q"
/usr/bin/python3 "$ROOT/tests/fs/quota_fs.py" "$Q.backing" "$Q" 1000000 2>"$TMP/fuse.err" &
i=0
while [ $i -lt 100 ] && ! mountpoint -q "$Q"; do sleep 0.1; i=$((i + 1)); done
mountpoint -q "$Q" || echo "Bail out! cannot mount the quota file system: $(cat "$TMP/fuse.err")"
"$HUSK" run -w "$Q" python -c '
open("big.bin", "wb").write(b"x" * 3000000); open("small.txt", "w").write("ok")' 2>"$TMP/err"
is "$?" 123 "a write-back over a disk quota exits 123"
grep -q 'cannot write back big.bin: Disk quota exceeded' "$TMP/err"; ok $? "it names the path (EDQUOT)"
is "$(cat "$Q/small.txt")" "ok" "the rest is written"
umount "$Q"

# 7. Ctrl-C during a large write-back: the helper finishes and leaves no image.
C=$TMP/ctrlc
mkdir -p "$C"
rm -f "$TMPDIR"/husk-workdir-* # kept by the failed write-back above
setsid "$HUSK" run -w "$C" python -c '
f = open("big.bin", "wb")
for i in range(600): f.write(b"y" * 1048576)' 2>/dev/null &
pid=$!
i=0
while [ $i -lt 600 ] && [ -z "$(ls -A "$C" 2>/dev/null | grep husk-tmp)" ]; do sleep 0.1; i=$((i + 1)); done
kill -INT -$pid 2>/dev/null
i=0
while [ $i -lt 600 ] && pgrep -f "husk run -w $C" >/dev/null; do sleep 0.1; i=$((i + 1)); done
! pgrep -f "husk run -w $C" >/dev/null; ok $? "no husk process is left after Ctrl-C during the write-back"
[ -z "$(ls -A "$TMPDIR" | grep husk-workdir)" ]; ok $? "no workdir image is left in TMPDIR"
is "$(wc -c < "$C/big.bin")" 629145600 "the write-back under way was finished"
# A limit ends the program as SIGKILL would, inside the guest: what it wrote
# and closed before comes back (the guest kernel writes its cache first; a
# killed VM would lose it).  Then the run's status is the limit's.
L=$TMP/limit-wd
mkdir "$L"
"$HUSK" run -w "$L" --timeout 1 python -c '
with open("done.csv", "w") as f: f.write("a,b\n1,2\n")
import os; os.mkdir("sub"); open("sub/x", "w").close()
while True: pass' >/dev/null 2>"$TMP/limit.err"
is "$?:$(cat "$L/done.csv" 2>/dev/null | tr '\n' '|')" "124:a,b|1,2|" "a file closed before a timeout comes back; the status is the timeout's"
[ -f "$L/sub/x" ]; ok $? "... and a directory and an empty file made before it"
grep -q 'timed out after 1 s' "$TMP/limit.err"; ok $? "... and husk says it timed out"
"$HUSK" run -w "$L" --cpu-time 1 lua -e 'local f = io.open("cpu.txt", "w"); f:write("before the limit"); f:close(); while true do end' >/dev/null 2>&1
is "$?:$(cat "$L/cpu.txt" 2>/dev/null)" "152:before the limit" "the same at the CPU-time limit (152)"
t0=$(date +%s%N)
"$HUSK" run -w "$L" --timeout 0.5 --cold python -c 'import time; time.sleep(100)' >/dev/null 2>&1
t=$((($(date +%s%N) - t0) / 1000000))
[ "$t" -lt 1500 ]; ok $? "a timeout while the program sleeps still ends the run at once ($t ms for 0.5 s)"
done_testing
