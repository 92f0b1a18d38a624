#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What a new user tries first: a script file from the host run without -w
# (copied into a scratch /workdir in guest RAM), paths the guest cannot see
# (one-line errors and notes), the calls Linux never fails (sysinfo, times,
# getpgrp... musl uses some unchecked), /etc's accounts and names.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 30
cd "$TMP" || exit 1

printf 'import os, sys, stat\nprint(sys.argv, os.getcwd(), sorted(os.listdir(".")), oct(stat.S_IMODE(os.stat(sys.argv[0]).st_mode)))\n' > analyze.py
is "$("$HUSK" run python analyze.py a b)" "['analyze.py', 'a', 'b'] /workdir ['analyze.py'] 0o444" \
	"husk run python FILE.py: the host file runs from a scratch /workdir, read-only, under its own name"
mkdir -p sub
cp analyze.py "sub/my script.py"
is "$("$HUSK" run python -u -W ignore "$TMP/sub/my script.py")" "['my script.py'] /workdir ['my script.py'] 0o444" \
	"an absolute path, a name with a space, options before it: the argument becomes the name"
printf 'print("lua", arg[0], ...)\n' > s.lua
is "$("$HUSK" run lua -e 'x = 1' s.lua 1 2)" "$(printf 'lua\ts.lua\t1\t2')" "husk run lua -e STAT FILE.lua ARGS"
: > empty.py
"$HUSK" run python empty.py; is "$?" 0 "an empty script runs"

# The scratch directory: writable, discarded, measured.
printf 'open("out.txt", "w").write("x" * 10000)\nimport os\nos.mkdir("d")\nprint(sorted(os.listdir(".")))\n' > write.py
out=$("$HUSK" run --stats python write.py 2> stats)
is "$out" "['d', 'out.txt', 'write.py']" "the program writes files and directories in its scratch cwd"
[ ! -e out.txt ] && [ ! -e d ]; ok $? "nothing the program wrote there reaches the host"
grep -q 'scratch /workdir: 16384 bytes left there, discarded' stats; ok $? "--stats says what was left in the scratch directory"
"$HUSK" run --audit audit.jsonl python write.py > /dev/null
grep -q "\"scratch_bytes_left\":16384" audit.jsonl; ok $? "the audit's end record has it too"
is "$("$HUSK" run python -c 'import os; print(os.getcwd(), os.listdir("."))')" "/workdir []" "without a script the scratch cwd starts empty"
mkdir -p wd
is "$("$HUSK" run -w wd python -c 'import os; print(os.listdir("."))')" "[]" "a fresh workdir has no lost+found"

# Paths the guest cannot see.
out=$("$HUSK" run python nope.py 2>&1); st=$?
is "$st" 125 "a missing script: exit 125"
case $out in "husk: nope.py: no such file on the host"*) r=0 ;; *) r=1 ;; esac
ok $r "... with one line saying so ($out)"
is "$(echo "$out" | wc -l)" 1 "... and nothing from the interpreter"
out=$("$HUSK" run python sub 2>&1); st=$?
is "$st:$out" "125:husk: sub is a directory: give it as the workdir (-w sub) to run from it" "a directory as the script"
out=$("$HUSK" run -w wd python analyze.py 2>&1); st=$?
case $out in "husk: analyze.py is not in the workdir wd"*) r=0 ;; *) r=1 ;; esac
is "$st:$r" "125:0" "with -w, a script that is not in the workdir: exit 125 and why"
out=$("$HUSK" run -w wd python "$TMP/analyze.py" 2>&1); st=$?
case $out in "husk: $TMP/analyze.py is a host path the guest cannot see"*) r=0 ;; *) r=1 ;; esac
is "$st:$r" "125:0" "with -w, an absolute host path as the script: exit 125 and why"
cp analyze.py wd/
is "$("$HUSK" run -w wd python analyze.py)" "['analyze.py'] /workdir ['analyze.py'] 0o644" "with -w, a script in the workdir runs as before"
echo '{"a": 1}' > d.json
"$HUSK" run python -m json.tool d.json > /dev/null 2> err
grep -q "^husk: note: 'd.json' is a host path the guest cannot see" err; ok $? "a host file given as an argument gets a note"
"$HUSK" run python -c 'print(1)' x y > /dev/null 2> err
is "$(cat err)" "" "arguments that are no host files get none"
is "$(echo 'print(3)' | "$HUSK" run python -)" 3 "a script from stdin still works"
truncate -s 40M big.py
out=$("$HUSK" run -m 40M python big.py 2>&1); st=$?
case $out in *"big.py (41943040 bytes) does not fit in guest memory"*) r=0 ;; *) r=1 ;; esac
is "$st:$r" "125:0" "a script larger than guest memory: exit 125 and why"

# Calls Linux never fails: real values, not ENOSYS garbage.
out=$("$HUSK" run -m 256M python -c '
import os, resource, time
t = os.times()
print(os.getloadavg(), os.getpgrp() == os.getpid() == os.getsid(0), os.getgroups(), os.getresuid(), os.getresgid())
print(os.sched_getaffinity(0), os.cpu_count(), os.getpriority(os.PRIO_PROCESS, 0), 0 <= t.user < 60, t.elapsed >= 0)
mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 20
print(200 < mb <= 256, 0 < os.sysconf("SC_AVPHYS_PAGES") <= os.sysconf("SC_PHYS_PAGES"), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 1000)')
is "$(echo "$out" | sed -n 1p)" "(0.0, 0.0, 0.0) True [] (0, 0, 0) (0, 0, 0)" "getloadavg is (0, 0, 0); getpgrp, getsid, getgroups, getresuid, getresgid answer"
is "$(echo "$out" | sed -n 2p)" "{0} 1 0 True True" "sched_getaffinity, cpu_count, getpriority, times"
is "$(echo "$out" | sed -n 3p)" "True True True" "sysconf's memory sizes (from sysinfo) and getrusage's maxrss"
out=$("$HUSK" run --syscalls python -c 'import os; os.getloadavg(); os.times()' 2>&1)
echo "$out" | grep -q ENOSYS; is "$?" 1 "none of them is ENOSYS"

# /etc: the run's user (root, as getuid says) and the loopback names.
is "$("$HUSK" run python -c 'import getpass, pwd, grp; print(getpass.getuser(), pwd.getpwuid(0).pw_dir, grp.getgrgid(0).gr_name)')" \
	"root /tmp root" "getpass.getuser(), pwd and grp know the run's user"
is "$("$HUSK" run python -c 'import socket; print(socket.gethostname(), open("/etc/hosts").read().split()[:2])')" \
	"husk ['127.0.0.1', 'localhost']" "/etc/hosts and the host name"
is "$("$HUSK" run python -c 'import os; print(sorted(os.listdir("/etc")))')" "['group', 'hostname', 'hosts', 'passwd', 'resolv.conf', 'services']" "/etc has just these"
"$HUSK" run python -c 'open("/etc/passwd", "a").write("x")' 2> /dev/null
is "$?" 1 "/etc is read-only"
is "$("$HUSK" run python -c 'import os; print(sorted(os.listdir("/")))')" "['bin', 'dev', 'etc', 'proc', 'tmp', 'usr', 'workdir']" "/ lists the mounts (/proc among them) and /bin (a link to usr/bin)"
done_testing
