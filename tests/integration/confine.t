#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The VMM confines itself before the first KVM_RUN: no new privileges, a
# seccomp allowlist that kills on violation, no inherited file descriptors,
# new namespaces and an empty root; the supervisor left behind is confined
# too, and a stop request for husk ends the whole run.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 37

# The VMM is the supervisor's only child (no workdir: no write-back helper).
vmm_of() { tr -d ' ' < /proc/$1/task/$1/children; }

exec 9>"$TMP/inherited"
"$HUSK" run python -c 'pass' # python's snapshot made: the VMM below is in its run, confined
"$HUSK" run -t 20 python -c 'import time; time.sleep(3)' &
pid=$!
sleep 1.5
vmm=$(vmm_of $pid)
for p in $pid $vmm; do
	who=$([ $p = $pid ] && echo supervisor || echo VMM)
	grep -q '^Seccomp:[[:space:]]*2$' /proc/$p/status; ok $? "the running husk $who is in seccomp filter mode (Seccomp: 2)"
	grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$p/status; ok $? "the $who has NoNewPrivs: 1"
	[ ! -e /proc/$p/fd/9 ]; ok $? "the $who does not hold an fd inherited from the caller"
done
for ns in pid mnt net ipc uts; do
	[ -n "$(readlink /proc/$vmm/ns/$ns)" ] && [ "$(readlink /proc/$vmm/ns/$ns)" != "$(readlink /proc/self/ns/$ns)" ]
	ok $? "the VMM is in a new $ns namespace"
done
is "$(sed -n 's/^NSpid:[[:space:]]*[0-9]*[[:space:]]*//p' /proc/$vmm/status)" 1 "the VMM is pid 1 of its pid namespace"
is "$(ls -A /proc/$vmm/root/ | wc -l)" 0 "the VMM's root directory is empty"
grep -q '^Max open files *0 *0 ' /proc/$vmm/limits; ok $? "the VMM may not open any more files (RLIMIT_NOFILE 0)"
wait $pid
is "$?" 0 "the confined run ends normally"
exec 9>&-

# The trigger exists only in the test build of husk.
HUSK_TEST_SECCOMP_TRIGGER=1 HUSK_IMAGES=$ROOT/build/images "$ROOT/build/tests/husk-test" run lua -e 'print(1)' > /dev/null 2>&1
is "$?" 159 "a system call outside the allowlist kills husk with SIGSYS (test-only trigger, test build)"
HUSK_TEST_SECCOMP_TRIGGER=1 "$HUSK" run lua -e 'print(1)' > /dev/null 2>&1
is "$?" 0 "husk itself has no such trigger"
# Argument filters: each trigger makes an allowed call of a kind (said on
# stderr), then one the filter refuses: another fd than the VMM's own for
# read/write/pread/pwrite (the vCPU's; pwrite: a read-only disk), an
# executable mapping.
mkdir "$TMP/ro" && echo data >"$TMP/ro/f"
for t in "write:write to stderr" "read:read of stdin" "pread:pread of a disk" "pwrite:pread of a read-only disk" \
	"mmap-exec:mmap without PROT_EXEC" "mprotect:mmap without PROT_EXEC"; do
	HUSK_TEST_SECCOMP_TRIGGER=${t%%:*} HUSK_IMAGES=$ROOT/build/images "$ROOT/build/tests/husk-test" run --ro d="$TMP/ro" \
		lua -e 'print(1)' </dev/null >/dev/null 2>"$TMP/trigger.err"
	st=$?
	[ "$st" = 159 ] && grep -q "^husk-test: ${t#*:} allowed" "$TMP/trigger.err" && ! grep -q 'not refused' "$TMP/trigger.err"
	ok $? "${t%%:*}: the allowed call passes, the refused one kills husk with SIGSYS (status $st)"
done
# Everything a run uses passes the filters: stdin, a dataset, the workdir
# (read and written), stdout, stderr, the audit file, the write-back.
mkdir "$TMP/wd"
echo in | "$HUSK" run --ro d="$TMP/ro" -w "$TMP/wd" --audit "$TMP/all.json" python -c '
import sys
line = sys.stdin.readline().strip()
open("out", "w").write(open("/data/d/f").read().strip() + line)
print("ok"); print("err", file=sys.stderr)' >"$TMP/all.out" 2>"$TMP/all.err"
is "$?:$(cat "$TMP/all.out"):$(cat "$TMP/all.err"):$(cat "$TMP/wd/out")" "0:ok:err:datain" \
	"a run using every fd kind passes the argument filters"
is "$("$HUSK" run lua -e 'print(1+1)')" "2" "without the trigger the confined VMM runs normally"

# A stop request (SIGTERM) to husk ends the run: the VMM, pid 1 of its
# namespace, would ignore it; the supervisor kills it and ends by SIGTERM.
mkdir "$TMP/w"
TMPDIR=$TMP "$HUSK" run -w "$TMP/w" -t 60 lua -e 'while true do end' &
pid=$!
sleep 1
kids=$(cat /proc/$pid/task/$pid/children)
kill -TERM $pid
wait $pid
is "$?" 143 "SIGTERM to husk ends the run as killed by SIGTERM"
sleep 0.2
left=0
for k in $kids; do [ -d /proc/$k ] && ! grep -q '^State:.*Z' /proc/$k/status && left=$((left + 1)); done
is "$left" 0 "no process of the run is left (VMM and write-back helper)"
is "$(ls "$TMP" | grep -c husk-workdir)" 0 "the temporary workdir image is removed"

# Job control: a terminal stop (SIGTSTP) stops the VMM too, SIGCONT resumes
# it.  husk runs in a process group of its own whose parent (this shell) is
# in the same session, as under an interactive shell; in an orphaned group
# (a new session) the kernel discards the stop, and so must husk.
state() { sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$1/status; }
perl -e 'setpgrp(0, 0); exec @ARGV or die "exec: $!"' "$HUSK" run -t 60 lua -e 'while true do end' &
pid=$!
sleep 1
vmm=$(vmm_of $pid)
kill -TSTP $pid
sleep 0.5
stopped="$(state $pid)$(state $vmm)"
kill -CONT $pid
sleep 0.5
is "$stopped $(state $vmm)" "TT R" "SIGTSTP stops the supervisor and the VMM, SIGCONT resumes the VMM"
kill -TERM $pid
wait $pid
setsid "$HUSK" run -t 60 lua -e 'while true do end' &
pid=$!
sleep 1
vmm=$(vmm_of $pid)
kill -TSTP $pid
sleep 0.5
is "$(state $pid)$(state $vmm)" "SR" "in an orphaned process group the stop is discarded, for the VMM too"
kill -TERM $pid
wait $pid

# SIGKILL to the supervisor (nothing can forward it) takes the VMM along.
"$HUSK" run -t 60 lua -e 'while true do end' &
pid=$!
sleep 1
vmm=$(vmm_of $pid)
kill -KILL $pid
wait $pid
sleep 0.5
! grep -qs '^State:[[:space:]]*[RS]' /proc/$vmm/status; ok $? "SIGKILL to husk's supervisor ends the VMM too"

"$HUSK" run --audit "$TMP/a.json" lua -e '' && head -1 "$TMP/a.json" > "$TMP/start"
grep -q '"isolation":{"namespaces":\["pid","mnt","net","ipc","uts"\],"shared_by_runs":true,"empty_root":true}' "$TMP/start"
ok $? "the audit start record says what isolation the VMM got"
for ns in mnt net ipc uts; do stat -f -c %T /run/husk/ns/$ns; done | sort -u > "$TMP/fstypes"
is "$(cat "$TMP/fstypes")" "nsfs" "the kept mount, network, IPC and UTS namespaces are bound in /run/husk/ns"

# Where they cannot be kept, each run gets new ones of its own (test build:
# another place for them).
HUSK_TEST_KEPT_DIR=/dev/null/ns HUSK_IMAGES=$ROOT/build/images "$ROOT/build/tests/husk-test" run --audit "$TMP/c.json" \
	lua -e 'print(3)' > "$TMP/out"
grep -q '"isolation":{"namespaces":\["pid","mnt","net","ipc","uts"\],"shared_by_runs":false,"empty_root":true,"missing":"kept namespaces: /dev/null/ns: Not a directory"}' "$TMP/c.json" &&
	[ "$(cat "$TMP/out")" = 3 ]
ok $? "without kept namespaces: new ones for the run, an empty root, and the audit says why"

"$HUSK" run --no-namespaces -t 20 python -c 'import time; time.sleep(2)' &
pid=$!
sleep 1
is "$(readlink /proc/$pid/ns/net)" "$(readlink /proc/self/ns/net)" "--no-namespaces: the VMM stays in husk's namespaces"
grep -q '^Seccomp:[[:space:]]*2$' /proc/$pid/status; ok $? "--no-namespaces: still confined by seccomp"
wait $pid
"$HUSK" run --no-namespaces --audit "$TMP/b.json" lua -e ''
grep -q '"isolation":{"namespaces":\[\],"shared_by_runs":false,"empty_root":false}' "$TMP/b.json"; ok $? "--no-namespaces: the audit says so"
done_testing
