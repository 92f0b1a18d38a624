#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# /proc (guest/fs/procfs.c): what programs read there, made by the guest
# kernel from its own state.  The links (self, exe, cwd, fd/N), cmdline and
# environ, stat and status after a fork and beside a thread, maps, task/,
# cpuinfo, meminfo, mounts, stat, uptime; reads in small chunks; reopening
# a file through /proc/self/fd/N; CPython's subprocess closing fds through
# /proc/self/fd; and BusyBox's df and ls, which read it.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 24

# One run prints "label: value" lines; each check takes its line.
cat > "$TMP/proc.py" <<'EOF'
import os, subprocess, sys, threading, time
def say(label, *v): print(label + ":", *v, flush=True)
say("exe", os.readlink("/proc/self/exe") == os.path.realpath(sys.executable), os.readlink("/proc/self/exe"))
say("self", os.readlink("/proc/self") == str(os.getpid()), os.readlink("/proc/self/cwd"))
f = open("/tmp/opened.txt", "w+")
f.write("through the link\n"); f.flush()
say("fd", f.fileno() in map(int, os.listdir("/proc/self/fd")), os.readlink("/proc/self/fd/%d" % f.fileno()))
say("reopen", open("/proc/self/fd/%d" % f.fileno()).read().strip())
r, w = os.pipe()
links = [os.readlink("/proc/self/fd/%d" % fd) for fd in (r, w)]
say("pipe", links[0] == links[1] == "pipe:[%d]" % os.fstat(r).st_ino, links[0].startswith("pipe:["))
say("cmdline", open("/proc/self/cmdline", "rb").read().split(b"\0")[:-1] == [a.encode() for a in sys.orig_argv])
say("environ", dict(e.decode().split("=", 1) for e in open("/proc/self/environ", "rb").read().split(b"\0") if e) == dict(os.environ))
pid = os.fork()
if pid == 0:
    s = open("/proc/self/stat").read().split()
    say("child stat", s[0] == str(os.getpid()), s[1], s[2], s[3] == str(os.getppid()), s[4], s[5])
    os._exit(7)
time.sleep(0.2)
say("zombie", str(pid) in os.listdir("/proc"), open("/proc/%d/stat" % pid).read().split()[2], open("/proc/%d/status" % pid).read().split("\n")[1])
os.waitpid(pid, 0)
say("reaped", os.path.exists("/proc/%d" % pid))
maps = open("/proc/self/maps").read().splitlines()
exe = os.readlink("/proc/self/exe")
say("maps", any(l.split()[1] == "r-xp" and l.endswith(" " + exe) for l in maps), any(l.endswith(" [stack]") for l in maps),
    all(int(a.split()[0].split("-")[0], 16) < int(b.split()[0].split("-")[0], 16) for a, b in zip(maps, maps[1:])))
ev = threading.Event()
t = threading.Thread(target=ev.wait)
t.start()
status = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines())
say("threads", sorted(map(int, os.listdir("/proc/self/task"))) == sorted([os.getpid(), t.native_id]), status["Threads"],
    status["Pid"] == str(os.getpid()), status["PPid"], status["Name"], os.readlink("/proc/thread-self") == "%d/task/%d" % (os.getpid(), os.getpid()))
say("task stat", open("/proc/self/task/%d/stat" % t.native_id).read().split()[:3] == [str(t.native_id), "(python)", "S"])
ev.set(); t.join()
cpu = open("/proc/cpuinfo").read()
say("cpuinfo", cpu.count("processor\t:"), os.cpu_count(), "flags\t\t: fpu" in cpu, "model name\t:" in cpu)
mem = dict(l.split(":")[0:2] for l in open("/proc/meminfo").read().splitlines())
say("meminfo", int(mem["MemTotal"].split()[0]) * 1024 == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"),
    0 < int(mem["MemFree"].split()[0]) < int(mem["MemTotal"].split()[0]))
mounts = [l.split() for l in open("/proc/mounts").read().splitlines()]
say("mounts", sorted((m[1], m[2], m[3]) for m in mounts if m[1] in ("/tmp", "/workdir", "/usr", "/proc")))
stat = dict(l.split(None, 1) for l in open("/proc/stat").read().splitlines())
up = float(open("/proc/uptime").read().split()[0])
say("stat", stat["cpu"].split()[0].isdigit(), abs(int(stat["btime"]) + up - time.time()) < 5, stat["procs_running"])
fd = os.open("/proc/cpuinfo", os.O_RDONLY)
chunks = iter(lambda: os.read(fd, 7), b"")
say("chunks", b"".join(chunks) == cpu.encode(), os.pread(fd, 9, 10) == cpu.encode()[10:19])
st, tmp = os.stat("/proc/self/status"), os.stat("/tmp")
say("stat()", st.st_size, oct(st.st_mode), st.st_dev != tmp.st_dev, os.stat("/proc/1/status").st_ino != os.stat("/proc/1/stat").st_ino)
os.dup2(f.fileno(), 20)  # inheritable
kept = subprocess.run(["ls", "/proc/self/fd"], capture_output=True, text=True, close_fds=False).stdout.split()
closed = subprocess.run(["ls", "/proc/self/fd"], capture_output=True, text=True).stdout.split()
say("close_fds", "20" in kept, "20" in closed, closed)
try:
    open("/proc/self/comm", "w")
except OSError as e:
    say("write", e.strerror)
EOF
"$HUSK" run python - < "$TMP/proc.py" > "$TMP/out" 2> "$TMP/err"; st=$?
line() { sed -n "s/^$1: //p" "$TMP/out"; }
[ "$st" = 0 ] || sed 's/^/# /' "$TMP/err" | tail -5
is "$(line exe)" "True /usr/bin/python" "readlink /proc/self/exe is sys.executable's real path, the file on the system disk"
is "$(line self)" "True /workdir" "/proc/self is the caller's pid; /proc/self/cwd its working directory"
is "$(line fd)" "True /tmp/opened.txt" "os.listdir('/proc/self/fd') has a file's fd; its link is the file's path"
is "$(line reopen)" "through the link" "opening /proc/self/fd/N opens the file again"
is "$(line pipe)" "True True" "both ends of a pipe read as pipe:[INO], the inode fstat gives"
is "$(line cmdline):$(line environ)" "True:True" "/proc/self/cmdline is argv, NUL-separated; /proc/self/environ the environment"
is "$(line 'child stat')" "True (python) R True 1 1" "a forked child's /proc/self/stat: its pid, (comm), R, its parent's pid, process group, session"
is "$(line zombie):$(line reaped)" "True Z State:	Z (zombie):False" "a child that ended is listed in /proc as a zombie (stat Z) until it is waited for"
is "$(line maps)" "True True True" "/proc/self/maps has the python binary's executable mapping and [stack], in address order"
is "$(line threads)" "True 2 True 0 python True" "beside a thread: task/ lists both tids, status says Threads 2, Pid, PPid, Name; thread-self links to PID/task/TID"
is "$(line 'task stat')" "True" "/proc/self/task/TID/stat is the thread's: its tid, (python), S while it waits"
is "$(line cpuinfo)" "1 1 True True" "/proc/cpuinfo has one processor (as os.cpu_count), with flags and a model name"
is "$(line meminfo)" "True True" "/proc/meminfo: MemTotal is sysconf's physical memory; MemFree below it"
is "$(line mounts)" "[('/proc', 'proc', 'ro'), ('/tmp', 'tmpfs', 'rw'), ('/usr', 'ext2', 'ro'), ('/workdir', 'tmpfs', 'rw')]" \
	"/proc/mounts lists /workdir and /tmp (rw tmpfs), /usr (ro ext2) and /proc"
is "$(line stat)" "True True 1" "/proc/stat: a cpu line, btime + uptime is now, one task running"
is "$(line chunks)" "True True" "/proc/cpuinfo read 7 bytes at a time, and pread at an offset, give the same text"
is "$(line 'stat()')" "0 0o100444 True True" "stat of a /proc file: size 0 as on Linux, read-only, its own st_dev, distinct inodes"
is "$(line close_fds)" "True False ['0', '1', '2', '3']" "subprocess: an inheritable fd reaches the child only without close_fds (CPython closes through /proc/self/fd)"
is "$(line write)" "Read-only file system" "opening a /proc file for writing: EROFS"
is "$st" 0 "the script ran to its end"

# BusyBox reads it: df (the mounts), ls, readlink of an exec'd program's exe.
out=$("$HUSK" run python -c 'import subprocess; subprocess.run("df /tmp | tail -1; ls /proc/self/fd | tr \"\\n\" \" \"; echo; readlink /proc/self/exe; cat /proc/self/comm", shell=True)' 2>&1)
is "$(echo "$out" | sed -n 1p | awk '{ print $1, $NF }')" "tmpfs /tmp" "BusyBox df /tmp: a line for the tmpfs on /tmp (from /proc/mounts)"
is "$(echo "$out" | sed -n 2p)" "0 1 2 3 " "BusyBox ls /proc/self/fd: the standard fds and its directory's"
is "$(echo "$out" | sed -n 3,4p | tr '\n' ' ')" "/usr/bin/readlink cat " "an exec'd program's exe is the file it ran; comm its name"

# A static program from the host: no file in the guest, so no exe; maps
# still has its image and stack.
out=$("$HUSK" run lua -e 'local m = io.open("/proc/self/maps"):read("a"); print(io.open("/proc/self/exe") == nil, m:find("r%-xp") ~= nil, m:find("%[stack%]") ~= nil)' 2>&1 | tr '\t' ' ')
is "$out" "true true true" "lua (no file in the guest): /proc/self/exe is absent; maps has its code and [stack]"
done_testing
