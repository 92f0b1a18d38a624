#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Hostile programs (tests/hostile/NN-name.{py,lua,c}): each must get the
# outcome written on its first line, husk must exit with the expected status
# (120-122 only where stated), and the host must be untouched.
. "$(dirname "$0")/../lib.sh"
need_kvm
H=$ROOT/tests/hostile
BIN=$TMP/bin
CC_HUSK=$ROOT/build/musl/bin/musl-gcc   # our libc: the fast syscall entry
CC_STOCK=musl-gcc                       # Debian's musl: the `syscall` instruction
TOK=husk-hostile-$$                     # in the names the programs try to create
SECRET=hostile-secret-7c1f9a2e REV_SECRET=e2a9f1c7-terces-elitsoh
for cc in "$CC_HUSK" "$CC_STOCK"; do
	command -v "$cc" >/dev/null || { echo "Bail out! $cc is missing"; exit 1; }
done

# A TODO test: husk's behaviour today is believed wrong (reported, not encoded).
todo_is() { # GOT EXPECTED DESCRIPTION REASON
	n=$((n + 1))
	if [ "$1" = "$2" ]; then r=ok; else r="not ok"; fi
	echo "$r $n - $3 # TODO $4"
	[ "$1" = "$2" ] || printf '#   got:      %s\n#   expected: %s\n' "$1" "$2"
}
# hrun NAME HUSK-RUN-ARGS...: $TMP/NAME.out, $TMP/NAME.err, status in $st
hrun() {
	name=$1
	shift
	"$HUSK" run "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	st=$?
}
out() { cat "$TMP/$1.out"; }
err_has() { grep -q -- "$2" "$TMP/$1.err"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The host before: a canary beside everything, the top of / and /tmp.
head -c 4096 /dev/urandom >"$TMP/canary"
canary=$(sha256sum <"$TMP/canary") canary_mtime=$(stat -c %Y "$TMP/canary")
passwd=$(sha256sum </etc/passwd)
ls -A / >"$TMP/root.before"

# The C programs, built with both libcs.
mkdir "$BIN"
cc_ok=0
for src in "$H"/*.c; do # (glibc/: Debian's gcc, below)
	b=$(basename "$src" .c)
	TMPDIR=$TMP "$CC_HUSK" -static -O2 -o "$BIN/$b.husk" "$src" 2>>"$TMP/cc.log" || cc_ok=1
	TMPDIR=$TMP "$CC_STOCK" -static -O2 -o "$BIN/$b.stock" "$src" 2>>"$TMP/cc.log" || cc_ok=1
done
ok $cc_ok "the C programs build with husk's libc and with stock musl-gcc"

# --- time and CPU -------------------------------------------------------
t0=$(now_ms)
hrun 01 -t 1 lua - <"$H/01-infinite-loop.lua"
is "$st" 124 "01 infinite loop: -t 1 stops it with 124"
[ $(($(now_ms) - t0)) -lt 5000 ] && err_has 01 'timed out after 1 s'
ok $? "01 infinite loop: promptly, with a message"

t0=$(now_ms)
hrun 02 --cpu-time 1 lua - <"$H/02-cpu-burn.lua"
is "$st" 152 "02 CPU burn: --cpu-time 1 stops it with 152"
[ $(($(now_ms) - t0)) -lt 5000 ] && err_has 02 'CPU time limit of 1 s'
ok $? "02 CPU burn: promptly, with a message"

# husk's own CPU time (user + sys of the child, from `times`) over the sleep
cpu_ms=$( (
	"$HUSK" run -t 1 python - <"$H/03-sleep-forever.py" >"$TMP/03.out" 2>"$TMP/03.err"
	echo $? >"$TMP/03.st"
	times
) | awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print int((u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000) }')
is "$(cat "$TMP/03.st")" 124 "03 sleep forever: -t 1 ends it with 124"
[ "$cpu_ms" -lt 500 ]; ok $? "03 sleep forever: husk sleeps too (${cpu_ms} ms of CPU over the 1 s)"

# --- processes and threads -------------------------------------------------
hrun 04 python - <"$H/04-fork-bomb.py"
out 04 | grep -Eq '^contained: some children, then (EAGAIN|ENOMEM); all reaped$'
is "$st:$?" "0:0" "04 Python fork bomb: the process limit or guest memory stops it (EAGAIN or ENOMEM), all reaped, exit 0 ($(out 04))"
for libc in husk stock; do
	hrun 05 "$BIN/05-fork-bomb.$libc" </dev/null
	is "$st:$(out 05 | tr '\n' '|')" "0:fork: 255 children, then EAGAIN; all reaped|system: failed|" \
		"05 C fork bomb ($libc libc): 255 children beside it (--pids 256), then EAGAIN; all reaped; system() finds no shell"
done
hrun 06 python - <"$H/06-threads.py"
is "$st:$(out 06 | cut -d: -f1,2)" "0:bomb: RuntimeError after 255 threads" \
	"06 thread bomb: start() fails at the task limit (256 with the first), exit 0"

# --- memory and stack --------------------------------------------------------
hrun 07 -m 64M python - <"$H/07-memory-bomb.py"
mib=$(out 07 | sed -n 's/^MemoryError after \([0-9]*\) MiB$/\1/p')
is "$st" 0 "07 Python memory bomb (-m 64M): caught MemoryError, exit 0"
[ -n "$mib" ] && [ "$mib" -gt 8 ] && [ "$mib" -lt 64 ]; ok $? "07 Python memory bomb: $(out 07)"
for libc in husk stock; do
	hrun 08 -m 64M "$BIN/08-malloc-until-null.$libc" </dev/null
	mib=$(out 08 | sed -n 's/^malloc returned NULL after \([0-9]*\) MiB$/\1/p')
	[ "$st" = 0 ] && [ -n "$mib" ] && [ "$mib" -gt 8 ] && [ "$mib" -lt 64 ] && out 08 | grep -qx '1 TiB: NULL'
	ok $? "08 C malloc loop ($libc libc, -m 64M): NULL after ${mib:-?} MiB, 1 TiB refused, exit 0 (status $st)"
done
hrun 09 python - <"$H/09-recursion.py"
is "$st:$(out 09)" "0:RecursionError: maximum recursion depth exceeded" "09 Python recursion: RecursionError, exit 0"
for libc in husk stock; do
	hrun 10 "$BIN/10-stack-overflow.$libc" </dev/null
	is "$st" 139 "10 C unbounded recursion ($libc libc): SIGSEGV on the stack guard page, 139"
	err_has 10 '^husk: program killed by SIGSEGV (page fault) at rip 0x[0-9a-f]*, address 0x[0-9a-f]* (write)$'
	ok $? "10 ($libc libc): husk reports the fault, it did not crash itself"
done

# --- output, disk, files ------------------------------------------------------
hrun 11 --output-limit 1M lua - <"$H/11-output-flood.lua"
is "$st:$(wc -c <"$TMP/11.out")" "153:1048576" "11 output flood: stdout has exactly 1 MiB, then the run ends with 153"
# (the marker starts with a newline, to end a cut line on a shared terminal)
is "$(grep . "$TMP/11.err")" "husk: output limit of 1048576 bytes reached; run stopped" "11 output flood: one marker line on stderr"

hrun 12 --disk 32M -w "$TMP/fill" --audit "$TMP/12.audit" python - <"$H/12-disk-fill.py"
fit=$(out 12 | sed -n 's/^ENOSPC after \([0-9]*\) bytes$/\1/p')
is "$st" 0 "12 disk fill (--disk 32M): exit 0"
[ -n "$fit" ] && [ "$fit" -gt $((16 << 20)) ] && [ "$fit" -le $((32 << 20)) ]; ok $? "12 disk fill: the program saw ENOSPC ($(out 12))"
is "$(stat -c %s "$TMP/fill/fill.bin" 2>&1)" "$fit" "12 disk fill: the data that fit comes back"
grep -q '"event":"limit","kind":"disk full","count":[1-9]' "$TMP/12.audit"; ok $? "12 disk fill: the audit records the full disk"

hrun 13 -w "$TMP/many" "$BIN/13-many-files.husk" </dev/null
is "$st:$(out 13)" "0:made 100000 files" "13 100k files: exit 0"
is "$(ls "$TMP/many/many" | wc -l):$(cat "$TMP/many/many/f099999"):$(ls -A "$TMP/many")" "100000:99999:many" \
	"13 100k files: all come back, nothing else"

mkdir "$TMP/esc"
hrun 14 -w "$TMP/esc/work" "$BIN/14-escape-workdir.husk" "$TOK" </dev/null
is "$st:$(out 14 | tail -1)" "0:0 climbing attempts succeeded" "14 escape the workdir: every climbing name fails in the guest"
[ "$(readlink "$TMP/esc/work/passwd-link")" = /etc/passwd ] && [ "$(readlink "$TMP/esc/work/up")" = ../../.. ] &&
	[ "$(readlink "$TMP/esc/work/target")" = "../../../../../../tmp/$TOK" ]
ok $? "14 symlinks to /etc/passwd, ../../.. and /tmp come back as symlinks"
[ "$(ls -A "$TMP/esc")" = work ] && [ ! -e "/tmp/$TOK" ] && [ ! -L "/tmp/$TOK" ] && [ ! -e "/tmp/$TOK-up" ] &&
	[ -f "$TMP/esc/work/dir/..%2f..%2fowned" ] && [ "$(sha256sum </etc/passwd)" = "$passwd" ]
ok $? "14 nothing written outside the workdir (beside it, in /tmp, /etc/passwd)"

hrun 39 -w "$TMP/deep" "$BIN/39-deep-nesting.husk" </dev/null
is "$st:$(out 39)" "123:depth 150" "39 150 nested directories: the write-back stops at its cap, 123"
err_has 39 'nested deeper than 128 levels'; ok $? "39 with a message ($(cat "$TMP/39.err"))"
d=$TMP/deep i=0
while [ -d "$d/d" ] && [ ! -L "$d/d" ]; do d=$d/d i=$((i + 1)); done
is "$i" 128 "39 the first 128 levels come back"

hrun 40 -w "$TMP/names" "$BIN/40-odd-names.husk" </dev/null
is "$st:$(out 40)" "0:made 14, 256-byte name: ENAMETOOLONG" "40 odd names (newline, escapes, non-UTF-8, 255 bytes): created"
bad=0 count=0
for f in "$TMP/names"/* "$TMP/names"/.??*; do
	count=$((count + 1))
	# control characters in a name come back as _ (README: the write-back rules)
	[ ! -s "$f" ] || [ "$(tr '\001-\037\177' '_' < "$f")" = "${f##*/}" ] || bad=$((bad + 1))
done
is "$count:$bad" "14:0" "40 all 14 come back, byte for byte but control characters, which become _"
[ ! -e "$TMP/owned" ] && [ ! -e "$TMP/names/owned" ] && [ ! -e owned ] && [ ! -e owned2 ]
ok $? "40 names with shell syntax ran nothing"

hrun 41 -w "$TMP/loops" "$BIN/41-symlink-loops.husk" </dev/null
is "$st:$(out 41 | tr '\n' '|')" "0:a: ELOOP|self: ELOOP|loopdir/x: ELOOP|c099: ELOOP|c030: opened|" \
	"41 symlink loops: ELOOP in the guest, no hang"
[ "$(readlink "$TMP/loops/a")" = b ] && [ "$(readlink "$TMP/loops/self")" = self ] &&
	[ "$(readlink "$TMP/loops/loopdir")" = loopdir/loopdir/loopdir ] && [ "$(readlink "$TMP/loops/c099")" = c098 ]
ok $? "41 the loops come back as symlinks"

# --- what the guest can see ---------------------------------------------------
hrun 15 python - <"$H/15-read-host-files.py"
is "$st:$(grep -c ' FileNotFoundError$' "$TMP/15.out")" "0:9" "15 host files (/etc/shadow, ssh keys, /dev/kvm, ...): FileNotFoundError"
is "$(grep '^passwd:\|^hostname:' "$TMP/15.out" | tr '\n' '|')" "passwd: ['root', 'nobody']|hostname: husk|" \
	"15 /etc/passwd and /etc/hostname are the guest's own, not the host's"
AWS_SECRET_ACCESS_KEY=$SECRET hrun 16 python - "$REV_SECRET" "$(uname -r | rev)" "$(echo "$ROOT" | rev)" <"$H/16-proc-sys.py"
is "$st:$(out 16 | sed -n 1,2p | tr '\n' '|')" "0:True False|['1', 'cpuinfo', 'filesystems', 'loadavg', 'meminfo', 'mounts', 'self', 'stat', 'sys', 'thread-self', 'uptime', 'version']|" \
	"16 /proc exists, with only the guest's one process and the fixed files; /sys is absent"
is "$(out 16 | sed -n 3,4p | tr '\n' '|'):$(grep -c ' FileNotFoundError$' "$TMP/16.out")" "maps: True True []|environ: ['HOME', 'LANG', 'PATH', 'PYTHONHOME']|:6" \
	"16 /proc/self/maps names only the guest's python, [stack] and [heap]; /proc/1/environ only the guest's variables; no mem, kcore, root, sysrq-trigger, /sys"
is "$(out 16 | sed -n 11,12p | tr '\n' '|')" "changes: ['EROFS']|host strings: 0 in over 20 files and links; control: True|" \
	"16 /proc is read-only (EROFS for every change); no file or link in it holds the host's secret, kernel release or checkout path"
is "$(out 16 | tail -1)" "['bin', 'dev', 'etc', 'proc', 'tmp', 'usr', 'workdir'] ['null', 'shm', 'urandom', 'zero']" "16 / and /dev hold only the documented entries (/bin: a symlink to usr/bin; /dev/shm: a tmpfs for POSIX semaphores and shared memory; /proc)"
AWS_SECRET_ACCESS_KEY=$SECRET hrun 17 python - <"$H/17-env-probe.py"
is "$st:$(out 17 | tr '\n' '|')" "0:['HOME', 'LANG', 'PATH', 'PYTHONHOME']|secret: None|" \
	"17 environment: only PATH, HOME, LANG, PYTHONHOME; the host's AWS_SECRET_ACCESS_KEY is invisible"
AWS_SECRET_ACCESS_KEY=$SECRET hrun 18 -m 64M "$BIN/18-scan-ram-for-secret.husk" "$REV_SECRET" </dev/null
is "$st:$(out 18 | tail -1 | sed 's/.*, //')" "0:0 hits" "18 a scan of all guest RAM does not find the host's secret"
hrun 18b -m 64M -e "GIVEN=$SECRET" "$BIN/18-scan-ram-for-secret.husk" "$REV_SECRET" </dev/null
is "$st" 1 "18 (control: the scan finds the secret when it is given with -e)"

# --- network and system calls -------------------------------------------------
hrun 19 python - <"$H/19-network.py"
is "$st:$(out 19 | tr '\n' ' ')" "0:97 97 97 97 2 2 2 111 " "19 Python sockets and connect: OSError errno 97; AF_UNIX connects to the host's well-known sockets: ENOENT, an abstract name ECONNREFUSED"
for libc in husk stock; do
	hrun 20 "$BIN/20-socket.$libc" </dev/null
	is "$st:$(out 20 | tail -1)" "0:0 unexpected" "20 C socket() ($libc libc): -1 EAFNOSUPPORT but AF_UNIX; socketpair(AF_INET) fails; AF_UNIX pairs, a listener and pipes stay inside"
	rm -f "$TMP/21.audit"
	hrun 21 --audit "$TMP/21.audit" "$BIN/21-dangerous-syscalls.$libc" </dev/null
	is "$st:$(out 21 | tail -1)" "0:0 unexpected" "21 dangerous raw syscalls ($libc libc): -1 ENOSYS/EPERM each"
	grep UNEXPECTED "$TMP/21.out" | sed 's/^/# /'
	grep -q '"kind":"unknown syscall","what":"numbers outside 0..511","count":3,' "$TMP/21.audit"
	ok $? "21 ($libc libc): the audit records the 3 calls numbered beyond the table (1000, -1, x32)"
	hrun 22 "$BIN/22-bad-pointers.$libc" </dev/null
	is "$st:$(out 22 | tail -1)" "0:0 unexpected" "22 bad pointers to syscalls ($libc libc): -1 EFAULT each, no crash"
	grep UNEXPECTED "$TMP/22.out" | sed 's/^/# /'
done

# --- boot information -----------------------------------------------------------
a400=$(printf '%400s' '' | tr ' ' a)
set --
i=0
while [ $i -lt 2000 ]; do set -- "$@" "$a400"; i=$((i + 1)); done
hrun 23 "$BIN/23-huge-argv.husk" "$@" </dev/null
is "$st:$(out 23)" "0:argc=2001 bytes=800000 odd=0" "23 2000 arguments of 400 bytes arrive intact"
while [ $i -lt 2500 ]; do set -- "$@" "$a400"; i=$((i + 1)); done
hrun 23b "$BIN/23-huge-argv.husk" "$@" </dev/null
set --
is "$st" 125 "23 2500 arguments of 400 bytes (1 MB): husk refuses with 125"
err_has 23b 'arguments and environment do not fit'; ok $? "23 with a clear message ($(cat "$TMP/23b.err"))"

# --- read-only data -----------------------------------------------------------
mkdir "$TMP/ds"
echo "hello dataset" >"$TMP/ds/a.txt"
ds_before=$(cd "$TMP/ds" && ls -lA --time-style=+%s . && sha256sum a.txt)
HUSK_CACHE=$TMP/cache hrun 24 --ro ds="$TMP/ds" python - <"$H/24-write-ro-data.py"
is "$st:$(grep -c ' EROFS$' "$TMP/24.out"):$(out 24 | tail -1)" "0:10:hello dataset" "24 writes to the --ro dataset: EROFS each"
is "$(cd "$TMP/ds" && ls -lA --time-style=+%s . && sha256sum a.txt)" "$ds_before" "24 the dataset directory on the host is unchanged"

# --- CPU exceptions -----------------------------------------------------------
for libc in husk stock; do
	hrun 25 "$BIN/25-int80.$libc" </dev/null
	is "$st:$(out 25)" '139:before int $0x80' "25 int \$0x80 ($libc libc): SIGSEGV, 139, as on Linux without i386 emulation"
	err_has 25 '^husk: program killed by SIGSEGV (software interrupt int \$0x80) at rip'; ok $? "25 ($libc libc): $(cat "$TMP/25.err")"
	hrun 26 "$BIN/26-ud2.$libc" </dev/null
	err_has 26 '^husk: program killed by SIGILL (invalid opcode)'
	is "$st:$?" 132:0 "26 ud2 ($libc libc): SIGILL, 132"
	hrun 27 "$BIN/27-divide-by-zero.$libc" </dev/null
	err_has 27 '^husk: program killed by SIGFPE (divide error)'
	is "$st:$?" 136:0 "27 division by zero ($libc libc): SIGFPE, 136"
	hrun 28 "$BIN/28-jump-to-null.$libc" </dev/null
	err_has 28 '^husk: program killed by SIGSEGV (page fault) at rip 0, address 0 (read)$'
	is "$st:$?" 139:0 "28 jump to address 0 ($libc libc): SIGSEGV, 139"
	hrun 29 "$BIN/29-self-modifying-code.$libc" </dev/null
	is "$st:$(out 29 | tail -1)" "0:after patching its own code: answer() = 42" \
		"29 writing its own code after mprotect(r-x) ($libc libc): works (protections not enforced)"
	hrun 30 "$BIN/30-close-stdout.$libc" </dev/null
	is "$st:$(out 30):$(grep -c ': -1 EBADF$' "$TMP/30.err")" "0::2" "30 write after close(1) ($libc libc): EBADF"
	hrun 33 "$BIN/33-abort.$libc" </dev/null
	is "$st" 134 "33 abort() ($libc libc): SIGABRT, 134"
done

# --- randomness -----------------------------------------------------------------
hrun 31 python - <"$H/31-urandom-100m.py"
is "$st:$(out 31 | tr '\n' ' ')" "0:104857600 ok " "31 100 MiB from /dev/urandom"
for libc in husk stock; do
	hrun 32 "$BIN/32-getrandom-64m.$libc" </dev/null
	is "$st:$(out 32 | cut -d' ' -f1-3)" "0:total 67108864 uniform" "32 getrandom of 64 MiB ($libc libc)"
done

# --- the guest attacks its own kernel and the device protocol -------------------
# expected status, and what husk says on stderr.  (`cli; hlt`: the guest's
# local APIC is KVM's, so after a cold boot, with no timer armed, hlt waits
# there for an interrupt that cannot come; no CPU is spent and the
# wall-clock limit ends it.  From a snapshot the guest kernel has armed its
# timer again at the snapshot point, whose interrupt ends the hlt: the
# program goes on, harmlessly.)
hrun 34 -t 2 --cold "$BIN/34-privileged-instructions.husk" hlt </dev/null
err_has 34 "timed out after 2 s"
is "$st:$?" "124:0" "34 hlt (cold): 124, 'timed out after 2 s'"
hrun 34 -t 2 "$BIN/34-privileged-instructions.husk" hlt </dev/null
if [ "$st" = 0 ]; then out 34 | grep -q "survived hlt"; else err_has 34 "timed out after 2 s"; fi
ok $? "34 hlt (from a snapshot): the wall-clock limit ends it, or an interrupt does and it goes on ($st)"
while read -r what want msg; do
	hrun 34 -t 2 "$BIN/34-privileged-instructions.husk" "$what" </dev/null
	err_has 34 "$msg"
	is "$st:$?" "$want:0" "34 $what: $want, '$msg'"
	grep -q "survived" "$TMP/34.out" && [ "$want" != 0 ] && echo "# $what: the program went on"
done <<'EOF'
out-unknown-port 121 write to an unknown I/O port
in-exit-port 121 unexpected I/O port access
forge-fault-report 122 guest reported a fault with signal
forge-long-sleep 124 timed out after 2 s
zero-idt 122 triple fault
zero-cr3 122 triple fault
smash-page-tables 122 triple fault
smash-kernel 122 triple fault
wrmsr-lstar 139 program killed by SIGSEGV (page fault) at rip 0,
mmio-garbage 121 guest misbehaved: virtio
mmio-hole 121 read of unknown MMIO address 0xd000f000
past-ram 139 program killed by SIGSEGV (page fault)
EOF
hrun 34 "$BIN/34-privileged-instructions.husk" forge-exit </dev/null
is "$st:$(out 34)" "7:trying forge-exit" "34 forge-exit: writing the exit port directly is an ordinary exit (7)"

# --- more Lua and Python ----------------------------------------------------------
hrun 35 lua - <"$H/35-lua-spawn.lua"
is "$st:$(out 35 | tr '\n' '|')" "0:execute: nil|popen: nil|" "35 Lua os.execute and io.popen start nothing"
hrun 36 -m 64M python - <"$H/36-tmpfs-fill.py"
is "$st:$(out 36 | sed 's/after [0-9]* MiB/after N MiB/' | tr '\n' '|')" "0:/tmp: ENOSPC after N MiB|then MemoryError|" \
	"36 guest /tmp filled (-m 64M): ENOSPC, then MemoryError, exit 0"
[ ! -e /tmp/husk-hostile-tmpfill ]; ok $? "36 the guest's /tmp is not the host's"
hrun 37 -m 64M lua - <"$H/37-lua-memory-bomb.lua"
is "$st:$(out 37)" "0:false	not enough memory	true" "37 Lua memory bomb (-m 64M): 'not enough memory', caught"
hrun 38 python - <"$H/38-python-abort.py"
is "$st:$(out 38)" "134:before abort" "38 Python os.abort(): SIGABRT, 134"

for libc in husk stock; do
	hrun 42 "$BIN/42-prot-none.$libc" </dev/null
	is "$st:$(out 42 | tr '\n' '|')" "139:0 unexpected|touch|" \
		"42 PROT_NONE pages ($libc libc): EFAULT in system calls, usable again after mprotect or a new mmap, SIGSEGV when touched"
done

t0=$(now_ms)
hrun 43 -t 2 python - <"$H/43-pipe-never-read.py"
[ "$st" = 124 ] && [ "$(out 43 | grep -c '^tick')" -ge 5 ] && [ $(($(now_ms) - t0)) -lt 6000 ]
ok $? "43 a pipe never read: the writer blocks, another thread still runs, -t 2 ends it ($st)"
t0=$(now_ms)
hrun 44 -t 1 python - <"$H/44-epoll-spin.py"
[ "$st" = 124 ] && [ "$(out 44)" = spinning ] && [ $(($(now_ms) - t0)) -lt 5000 ]
ok $? "44 an epoll_wait(0) loop for ever: -t 1 ends it promptly ($st)"

for libc in husk stock; do
	hrun 45 "$BIN/45-unix-socket-abuse.$libc" </dev/null
	is "$st:$(out 45 | tail -1)" "0:0 unexpected" \
		"45 Unix socket abuse ($libc libc): malformed control messages and names refused, descriptor cycles, full and dropped queues, 2000 connections"
	grep UNEXPECTED "$TMP/45.out" | sed 's/^/# /'
	hrun 46 -t 30 "$BIN/46-direction-flag.$libc" </dev/null
	is "$st:$(out 46 | tail -1)" "0:0 unexpected" \
		"46 the direction flag set at system calls, ticks, switches and faults ($libc libc): the kernel's copies stay right"
	grep UNEXPECTED "$TMP/46.out" | sed 's/^/# /'
	hrun 47 -t 30 "$BIN/47-cow-kernel-writes.$libc" </dev/null
	is "$st:$(out 47 | tail -1)" "0:0 unexpected" \
		"47 the kernel writes into pages a child shares with its parent after fork ($libc libc): pipes, /dev/zero, getrandom, stat, recvmsg, wait4, a fault's frame on an alternate stack; only the child's copy changes"
	grep UNEXPECTED "$TMP/47.out" | sed 's/^/# /'
done

# --- malformed programs, absurd mappings (both libcs) ------------------------------
for libc in husk stock; do
	mkdir -p "$TMP/elf" && cp "$BIN/49-malformed-elf.$libc" "$BIN/50-huge-mappings.$libc" "$TMP/elf"
	# each reads its own file from the workdir: the first program's /proc/self/exe is not in a file system
	hrun 49 -t 60 -w "$TMP/elf" "$BIN/49-malformed-elf.$libc" "/workdir/49-malformed-elf.$libc" </dev/null
	is "$st:$(out 49 | tail -1)" "0:22 tried, 0 unexpected" \
		"49 execve of 22 malformed ELF files ($libc libc): an errno each, or a program that dies or runs as on Linux; the guest kernel lives"
	grep UNEXPECTED "$TMP/49.out" | sed 's/^/# /'
	hrun 50 -t 60 -w "$TMP/elf" "$BIN/50-huge-mappings.$libc" "/workdir/50-huge-mappings.$libc" </dev/null
	is "$st:$(out 50 | tail -1)" "0:0 unexpected" \
		"50 huge and absurd mmaps ($libc libc): ENOMEM/EINVAL each, all memory taken and given back, a file mapped past its end reads zeros"
	grep UNEXPECTED "$TMP/50.out" | sed 's/^/# /'
done

# --- Debian's dynamic loader (glibc programs in a Debian image) -------------------------
debian_image t-numpy python3-numpy # HUSK_CACHE: build/test-cache
G=$TMP/glibc
mkdir -p "$G"
if ! gcc -O2 -shared -fPIC -o "$G/preload.so" "$H/glibc/48-ld-preload.c" ||
	! gcc -O2 -shared -fPIC -o "$G/own.so" "$H/glibc/51-so-rewrites-own-code.c" ||
	! gcc -O2 -o "$G/stub" "$H/glibc/52-syscall-stub-abuse.c"; then
	echo "Bail out! cannot build tests/hostile/glibc/*.c with gcc"
	exit 1
fi
hrun 48 --image t-numpy -w "$G" -e LD_PRELOAD=/workdir/preload.so sh -c 'id -u; python3 -c "import os; print(os.getuid())"'
is "$st:$(out 48 | tr '\n' '|'):$(grep -c '^preloaded$' "$TMP/48.err")" "0:4242|4242|:3" \
	"48 LD_PRELOAD of a library in the workdir: Debian's sh, id and python3 run with it (its VM, its business)"
hrun 51 --image t-numpy -w "$G" python3 -c 'import ctypes; print("answer() =", ctypes.CDLL("/workdir/own.so").answer())'
is "$st:$(out 51)" "0:answer() = 42" "51 an .so that rewrites its own code at load (dlopen from python3): runs patched"
hrun 52 --image t-numpy -w "$G" ./stub
err_has 52 '^husk: program killed by SIGTRAP (breakpoint)'
is "$st:$?" "133:0" "52 a program that overwrites its rewritten syscall site's stub: SIGTRAP, its own death"
hrun 52b --image t-numpy -w "$G" ./stub unmap
err_has 52b '^husk: program killed by SIGSEGV (page fault)'
is "$st:$?" "139:0" "52 a program that unmaps the page of its syscall stubs: SIGSEGV, its own death"

# --- the host after everything -----------------------------------------------------
is "$(sha256sum <"$TMP/canary"):$(stat -c %Y "$TMP/canary")" "$canary:$canary_mtime" "host: the canary file is unchanged"
ls -A / >"$TMP/root.after"
cmp -s "$TMP/root.before" "$TMP/root.after"; ok $? "host: no new entries in /"
leftovers=$(ls -A /tmp | grep -e "$TOK" -e '^husk-hostile-tmpfill$')
is "$leftovers" "" "host: nothing the programs tried to create is in /tmp"
is "$(sha256sum </etc/passwd)" "$passwd" "host: /etc/passwd is unchanged"
plan "$n"
done_testing
