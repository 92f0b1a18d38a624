#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs from snapshots (vmm/snapshot/): the first run of a program builds its
# snapshot, the next ones restore it; the same output and status as a cold
# boot; fresh randomness and clocks in every run; bad snapshot files refused
# with one line and rebuilt; concurrent first runs build one; --cold and the
# policy key; husk snapshot build/ls/rm.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 86

export HUSK_CACHE=$TMP/cache
unset HUSK_COLD
mkdir -m 700 "$HUSK_CACHE"
SNAPS=$HUSK_CACHE/snapshots
start() { sed -n 's/^husk: start: \([^(]*\).*/\1/p' "$1" | sed 's/ *$//'; }
snapfile() { ls "$SNAPS"/"$1"-*.snap 2>/dev/null | head -n 1; }

# --- the first run builds, the next restores --------------------------------
got=$("$HUSK" run --stats --audit "$TMP/first.jsonl" python -c 'print(1+1)' 2>"$TMP/err")
is "$got" "2" "the first run of python prints 2"
is "$(start "$TMP/err")" "cold, snapshot saved" "the first run boots afresh and saves the snapshot"
# Its guest ran before the VMM confined itself; the run must still get the
# empty root (a VM that has run has a KVM worker sharing husk's fs context,
# and such a process cannot join a mount namespace: main.c, go_on_in_new_vm).
grep -q '"empty_root":true' "$TMP/first.jsonl" && ! grep -q '"missing"' "$TMP/first.jsonl"
ok $? "the run that built the snapshot is isolated as every run (mount namespace, empty root)"
f=$(snapfile python)
ok "$([ -f "$f" ]; echo $?)" "the snapshot is in the cache's snapshots/"
is "$(stat -c %a "$f")" "600" "it is readable by its owner only"
got=$("$HUSK" run --stats python -c 'print(1+1)' 2>"$TMP/err")
is "$got" "2" "the second run prints 2"
is "$(start "$TMP/err")" "snapshot" "the second run starts from the snapshot"
sum=$(sha256sum <"$f")
"$HUSK" run python -c 'import builtins, sys; builtins.LEFT = 1; sys.modules["json"].LEFT = 1; print("x" * 100000)' >/dev/null
got=$("$HUSK" run python -c 'import builtins, json; print(hasattr(builtins, "LEFT"), hasattr(json, "LEFT"))')
is "$got" "False False" "what a run changes does not reach the next run"
is "$(sha256sum <"$f")" "$sum" "nor the snapshot file"

# --- the same as a cold boot -------------------------------------------------
same() { # same DESCRIPTION ARGS...: output, stderr and status as --cold
	d=$1
	shift
	"$HUSK" run python "$@" >"$TMP/o1" 2>"$TMP/e1" </dev/null
	s1=$?
	"$HUSK" run --cold python "$@" >"$TMP/o2" 2>"$TMP/e2" </dev/null
	s2=$?
	is "$s1:$(cat "$TMP/o1")|$(cat "$TMP/e1")" "$s2:$(cat "$TMP/o2")|$(cat "$TMP/e2")" "as cold: $d"
}
same "-c with arguments" -c 'import sys; print(sys.argv, sys.orig_argv[1:], sys.flags)' a 'b c'
same "a traceback and status 1" -c '1/0'
same "SystemExit(3)" -c 'raise SystemExit(3)'
same "sys.path" -c 'import sys; print(sys.path, sys.executable, sys.prefix)'
same "-m json.tool" -m json.tool --help
same "-m a missing module" -m no_such_module
same "the environment" -c 'import os; print(sorted(os.environ.items()))'
same "stdout not a terminal: block-buffered" -c 'import sys; print(sys.stdout.line_buffering, sys.stdin.isatty())'
echo 'import sys; print("script", sys.argv)' >"$TMP/prog.py"
same "a script file with arguments" "$TMP/prog.py" one two
is "$("$HUSK" run python - x <"$TMP/prog.py")" "script ['-', 'x']" "a script on stdin (-)"
is "$("$HUSK" run python <"$TMP/prog.py")" "script ['']" "a script on stdin"
got=$("$HUSK" run -e FOO=bar -e HUSK_X=1 python -c 'import os; print(os.environ["FOO"], os.getenv("HUSK_X"), os.environb[b"FOO"])')
is "$got" "bar 1 b'bar'" "the run's -e variables in os.environ, getenv and environb"
got=$(script -qec "'$HUSK' run --stats python -c 'import sys; print(sys.stdout.line_buffering, sys.stdout.isatty())'" /dev/null 2>&1 | tr -d '\r')
is "$(echo "$got" | head -n 1)" "True True" "on a terminal stdout is line-buffered, as in a cold start"
echo "$got" | grep -q '^husk: start: snapshot' ; ok $? "... and that run was restored"

# What a snapshot cannot honour boots afresh.
cold() { # cold DESCRIPTION RUN-ARGS...
	d=$1
	shift
	"$HUSK" run --stats "$@" >"$TMP/o" 2>"$TMP/err"
	is "$(start "$TMP/err")" "cold" "boots afresh: $d"
}
cold "PYTHONHASHSEED set" -e PYTHONHASHSEED=0 python -c 'print(hash("a"))'
is "$(cat "$TMP/o")" "$("$HUSK" run --cold -e PYTHONHASHSEED=0 python -c 'print(hash("a"))')" "PYTHONHASHSEED=0 gives its fixed hash"
cold "an interpreter option (-I)" python -I -c 'print(1)'
cold "-B before -c" python -B -c 'print(1)'
cold "LANG changed" -e LANG=C python -c 'print(1)'
cold "--cold" --cold python -c 'print(1)'
echo '{"cold": true}' >"$TMP/policy.json"
cold "the policy key cold" --policy "$TMP/policy.json" python -c 'print(1)'
HUSK_COLD=1 "$HUSK" run --stats python -c 'print(1)' >/dev/null 2>"$TMP/err"
is "$(start "$TMP/err")" "cold" "boots afresh: HUSK_COLD=1"

# --- randomness and clocks ----------------------------------------------------
prog='import os, random, uuid, tempfile, secrets, time
print(os.urandom(8).hex(), random.random(), uuid.uuid4(), tempfile.mktemp(), secrets.token_hex(8), hash("x"))'
i=0
: >"$TMP/rand"
while [ $i -lt 50 ]; do
	"$HUSK" run python -c "$prog" >>"$TMP/rand"
	i=$((i + 1))
done
is "$(wc -l <"$TMP/rand" | tr -d ' ')" "50" "50 restored runs"
col=1
for what in os.urandom random.random uuid4 tempfile.mktemp secrets.token_hex; do
	is "$(cut -d' ' -f$col "$TMP/rand" | sort -u | wc -l | tr -d ' ')" "50" "50 restores give 50 different $what"
	col=$((col + 1))
done
is "$(cut -d' ' -f6 "$TMP/rand" | sort -u | wc -l | tr -d ' ')" "1" "the string-hash key is the snapshot's (documented)"
before=$(/usr/bin/python3 -c 'import time; print(time.time_ns(), time.monotonic_ns())')
got=$("$HUSK" run python -c 'import time; print(time.time_ns(), time.monotonic_ns())')
after=$(/usr/bin/python3 -c 'import time; print(time.time_ns(), time.monotonic_ns())')
/usr/bin/python3 -c '
import sys
b, g, a = (list(map(int, s.split())) for s in sys.argv[1:4])
sys.exit(0 if b[0] - 1000000 <= g[0] <= a[0] + 1000000 else 1)' "$before" "$got" "$after"
ok $? "a restored run's wall clock is the host's, within 1 ms ($got)"
/usr/bin/python3 -c '
import sys
b, g, a = (list(map(int, s.split())) for s in sys.argv[1:4])
sys.exit(0 if b[1] <= g[1] <= a[1] else 1)' "$before" "$got" "$after"
ok $? "its monotonic clock follows the host's: it never goes back"
got=$("$HUSK" run python -c 'import time; a = time.monotonic(); time.sleep(0.05); b = time.monotonic(); print(0.05 <= b - a < 1)')
is "$got" "True" "time.sleep and the monotonic clock agree after a restore"

# --- a bad snapshot file is refused with one line and built again ------------
bad() { # bad DESCRIPTION EXPECTED-REASON: after the file was spoilt
	"$HUSK" run --stats python -c 'print(7)' >"$TMP/o" 2>"$TMP/err"
	is "$(cat "$TMP/o")" "7" "$1: the run still prints 7"
	is "$(grep -c "^husk: snapshot python-.*: $2; building it again\$" "$TMP/err")" "1" "$1: one line says so"
	is "$(start "$TMP/err")" "cold, snapshot saved" "$1: the snapshot is built again"
}
f=$(snapfile python)
truncate -s 100000 "$f"
bad "truncated" "truncated or garbled"
f=$(snapfile python)
/usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
at = os.fstat(fd).st_size - 5000
os.pwrite(fd, bytes([os.pread(fd, 1, at)[0] ^ 1]), at)' "$f"
bad "one byte of its memory changed" "modified since husk wrote it (its digest does not match)"
f=$(snapfile python)
chmod 644 "$f"
bad "readable by others" "not husk's own (its owner or mode changed)"
f=$(snapfile python)
echo secret >"$TMP/target"
rm "$f" && ln -s "$TMP/target" "$f"
bad "a symlink in its place" "cannot open it: .*"
is "$(cat "$TMP/target")" "secret" "the symlink's target is left alone"
f=$(snapfile python)
printf 'HUSKSNAP\001\000\000\000' | dd of="$f" bs=1 seek=0 conv=notrunc 2>/dev/null
printf '\377\377\377\377' | dd of="$f" bs=1 seek=16 conv=notrunc 2>/dev/null
bad "its build ID changed" "made by another husk build"
: >"$(snapfile python)"
bad "empty" "not a snapshot of this husk's format (truncated or garbled)"

# --- concurrent first runs build one snapshot, never a torn one ---------------
rm -rf "$SNAPS"
i=0
while [ $i -lt 8 ]; do
	"$HUSK" run python -c 'print(8)' >"$TMP/c$i" 2>&1 &
	i=$((i + 1))
done
wait
is "$(cat "$TMP"/c? | sort | uniq -c | tr -s ' ')" " 8 8" "8 concurrent first runs all print 8, nothing else"
is "$(ls "$SNAPS" | grep -c '^python-.*\.snap$')" "1" "they built one snapshot"
is "$(ls "$SNAPS" | grep -c 'tmp')" "0" "and left no temporary file"
"$HUSK" run --stats python -c 'print(1)' >/dev/null 2>"$TMP/err"
is "$(start "$TMP/err")" "snapshot" "the next run restores it"

# --- husk snapshot build, ls, rm; other programs -------------------------------
out=$("$HUSK" snapshot build --preload json,csv python)
ok "$(echo "$out" | grep -q '^husk: snapshot python-.*\.snap saved$'; echo $?)" "husk snapshot build --preload: one line"
is "$("$HUSK" run python -c 'import sys; print("csv" in sys.modules)')" "True" "its preloaded modules are imported"
"$HUSK" snapshot build --preload no_such_mod python >/dev/null 2>"$TMP/err"
ok "$(grep -q 'cannot preload no_such_mod' "$TMP/err"; echo $?)" "a module that cannot be preloaded is named"
"$HUSK" snapshot build --preload 'x;y' python >/dev/null 2>"$TMP/err"
is "$?" "125" "a bad --preload is a usage error"
is "$("$HUSK" run lua -e 'print(3)')" "3" "lua builds its snapshot"
got=$("$HUSK" run --stats lua -e 'print(3)' 2>"$TMP/err")
is "$got:$(start "$TMP/err")" "3:snapshot" "lua starts from its snapshot"
"$HUSK" run "$PROGS/husk/hello" a b >"$TMP/h1"
got=$("$HUSK" run --stats "$PROGS/husk/hello" a b 2>"$TMP/err")
is "$got:$(start "$TMP/err")" "$(cat "$TMP/h1"):snapshot" "a static C program: the same output from its snapshot"
is "$("$HUSK" snapshot ls | grep -c '^python-')" "1" "husk snapshot ls lists python's"
"$HUSK" snapshot rm python
is "$("$HUSK" snapshot ls | grep -c '^python-')" "0" "husk snapshot rm python removes it"
"$HUSK" snapshot rm python 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: snapshot rm: no snapshot of python" "rm of none: one line, status 125"
"$HUSK" snapshot rm
is "$(ls "$SNAPS" | grep -c '\.snap$')" "0" "husk snapshot rm removes them all"

# --- a workdir, datasets and a script after the restore ------------------------
"$HUSK" run python -c 'pass'
"$HUSK" run python -c 'pass' # records the working set
ws=$(ls "$SNAPS"/python-*.snap.ws)
truncate -s 100 "$ws"
is "$("$HUSK" run python -c 'print(9)'):$(ls "$SNAPS" | grep -c '\.ws$')" "9:0" "a torn working set is not used, and goes"
"$HUSK" run python -c 'pass'
is "$(stat -c %s "$ws")" "65552" "the next run records it again (a 16-byte header, a byte per page of 256 MiB)"
mkdir "$TMP/wd" "$TMP/ds"
echo data >"$TMP/ds/f"
got=$("$HUSK" run --stats -w "$TMP/wd" --ro ds="$TMP/ds" python -c '
import os
print(open("/data/ds/f").read().strip(), os.getcwd())
open("out.txt", "w").write("from the snapshot\n")' 2>"$TMP/err")
is "$got" "data /workdir" "a dataset and the workdir attached after the restore"
is "$(start "$TMP/err")" "snapshot" "... in a restored run"
is "$(cat "$TMP/wd/out.txt")" "from the snapshot" "the workdir is written back"
# --- the run's exit, as a cold run's -------------------------------------------
# A restored run tears down only the modules it imported and __main__ (the
# snapshot's are left: images/python-snapshot.patch); what a program can see
# of its exit is the same: threads joined, atexit, finalizers, __del__ of its
# objects (a cycle's too, and one in a module of its own), a replaced
# sys.stdout released, an unclosed file flushed.
mkdir "$TMP/fin"
cat >"$TMP/fin/finmod.py" <<'PY'
class B:
    def __del__(self): print("del module object")
b = B()
PY
cat >"$TMP/fin/fin.py" <<'PY'
import atexit, sys, tempfile, threading, time, weakref
sys.path.insert(0, "/workdir")
import finmod
class A:
    def __init__(self, n): self.n = n
    def __del__(self): print("del", self.n)
a = A("main")
c = A("cycle"); c.me = c
f = open("/workdir/unclosed.txt", "w"); f.write("written, never closed")
atexit.register(print, "atexit")
weakref.finalize(a, print, "finalize")
class Out:
    def __init__(self, s): self.s = s
    def write(self, x): return self.s.write(x)
    def flush(self): self.s.flush()
    def __del__(self): sys.__stdout__.write("stdout wrapper del\n")
sys.stdout = Out(sys.stdout)
t = tempfile.TemporaryDirectory()
threading.Thread(target=lambda: (time.sleep(0.05), print("thread done"))).start()
print("end")
PY
"$HUSK" run --cold -w "$TMP/fin" python fin.py >"$TMP/fin1" 2>&1
s1=$?
mv "$TMP/fin/unclosed.txt" "$TMP/unclosed1"
"$HUSK" run --stats -w "$TMP/fin" python fin.py >"$TMP/fin2" 2>"$TMP/err"
s2=$?
is "$(start "$TMP/err")" "snapshot" "the exit test runs from the snapshot"
# (the order in which gc meets two modules' objects is CPython's to choose)
is "$s2:$(sort "$TMP/fin2")" "$s1:$(sort "$TMP/fin1")" "its exit prints what a cold run's does"
is "$(head -n 5 "$TMP/fin2" | tr '\n' ' ')" "$(head -n 5 "$TMP/fin1" | tr '\n' ' ')" "... in the same order up to the modules' teardown"
is "$(sort "$TMP/fin2" | tr '\n' ' ')" "atexit del cycle del main del module object end finalize stdout wrapper del thread done " "... every finalizer ran"
is "$(cat "$TMP/fin/unclosed.txt"):$(cat "$TMP/unclosed1")" "written, never closed:written, never closed" "an unclosed file is flushed at exit"
echo 'print("the script", __file__)' >"$TMP/s.py"
is "$("$HUSK" run python "$TMP/s.py")" "the script /workdir/s.py" "a script copied into the scratch /workdir"

done_testing
