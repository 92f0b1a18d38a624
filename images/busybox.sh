#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# busybox.sh: BusyBox from Debian's busybox source (Debian patches applied)
# as a stripped static x86-64 ET_EXEC linked against our musl, to
# $BUILD/images/busybox, with busybox.applets (its applets' names, one a
# line): the shell (ash, as sh) and the common tools.  system-disk.sh puts it
# on the python image's system disk as /usr/bin/busybox with a hard link per
# applet, so /bin/sh (/bin -> usr/bin in the guest) exists for
# subprocess(shell=True), os.system and #!/bin/sh scripts.  The
# configuration is made here: BusyBox's defconfig with every applet not in
# APPLETS turned off, so nothing is built that cannot work in the guest and
# the build stays short (~30 s on 2 cores).  Checks: static ET_EXEC, every
# syscall site uses the fast entry (syscheck.sh), exactly the listed applets
# are there, and a shell smoke test runs natively, plainly and with the fast
# entry in use (sysinfo-run.c).  Environment: BUILD (absolute), JOBS, DEBSRC.
# Called by images/Makefile.
set -eu
die() { echo "busybox.sh: $*" >&2; exit 1; }
: "${BUILD:?busybox.sh: BUILD is not set}"
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
DEBSRC=${DEBSRC:-$here/../scripts/debsrc}
cc=$BUILD/musl/bin/musl-gcc
work=$BUILD/src/work/busybox
out=$BUILD/images

# BusyBox's make must not see our make's variables or jobserver.
unset MAKEFLAGS MFLAGS MAKEFILES MAKELEVEL MAKEOVERRIDES || true
# One collation for sort and comm below.
LC_ALL=C
export LC_ALL

[ -x "$cc" ] || die "$cc missing (build musl first)"
src=$(sh "$DEBSRC" busybox "$BUILD/src") || die "cannot get Debian's busybox source"
[ -f "$src/shell/ash.c" ] || die "$src/shell/ash.c missing"
# Build in a copy: debsrc reuses its unpacked tree, which must stay pristine.
rm -rf "$work"
mkdir -p "$(dirname "$work")" "$out"
cp -a "$src" "$work"
cd "$work"

# The applets on the disk (the `busybox --list` check below uses this list).
# Asked for: the shell and the tools scripts and subprocess calls expect.
APPLETS="sh ash ls cat echo printf env true false test [ [[ expr sleep pwd
 mkdir rmdir rm cp mv ln touch head tail wc sort uniq cut tr grep egrep fgrep
 sed awk find xargs basename dirname date id uname which seq tee yes du df
 stat readlink realpath chmod md5sum sha256sum gzip gunzip zcat tar od
 hexdump diff
 cmp comm dd expand fold install mktemp nl paste printenv rev split tac
 timeout truncate unlink base64 sha1sum sha512sum cksum xxd bzip2 bunzip2
 bzcat unxz xzcat unzip patch shuf kill hostname whoami nproc sync usleep
 getopt ps free uptime pidof pgrep pkill killall mkfifo nice renice"

# The configuration: BusyBox's defconfig with every applet not in APPLETS
# turned off (its features go with it; those of the applets kept stay at
# their defaults), and the settings below.  Left out, by group:
#  - networking (wget, nc, ping, ip, ifconfig, telnet, httpd, ftp*, udhcpc,
#    nslookup, ...): the guest has no network device, socket() fails with
#    EAFNOSUPPORT.
#  - mount, umount, swapon, losetup, pivot_root, switch_root, mdev, fdisk,
#    mkfs.*, fsck, blkid, hdparm, e2fsprogs: no mount(2), no block device
#    nodes; the kernel mounts its disks itself.
#  - init, halt/reboot/poweroff, runit, start-stop-daemon, crond/crontab,
#    syslogd/klogd/logger, dmesg: husk's program is pid 1 and the run ends
#    with it; no daemons, no syslog socket, no kernel log.
#  - login, su, sulogin, passwd, adduser/deluser, chpasswd, vlock, getty,
#    chown/chgrp: one user (root) and no setuid (FEATURE_SUID off too).
#  - top, pmap, watch, fuser, lsof, sysctl, iostat: terminal screens, /sys,
#    or /proc files the guest's /proc does not have (ps, free, uptime, pidof,
#    pgrep/pkill and killall read only what it has, and are in).
#  - vi, less, more, stty, reset, setterm, openvt, chvt, loadkmap, and the
#    shell's line editing (FEATURE_EDITING): no termios and no virtual
#    terminals in the guest (the python REPL reads plain lines too).
#  - ash's job control (ASH_JOB_CONTROL): no controlling terminal to hand
#    over (TIOCSPGRP), and stop signals are ignored.
#  - insmod/modprobe/lsmod, SELinux tools, chrt/ionice/taskset, mknod,
#    chattr/lsattr, hwclock, rtcwake: no modules, no SELinux, and the calls
#    (sched_setaffinity, device nodes, device ioctls) are refused or have no
#    device behind them (nice, renice and mkfifo are in).
#  - mail tools (network), hush (one shell is enough: ash), bash: sh is ash,
#    not bash (BASH_IS_NONE): a #!/bin/bash script must fail plainly rather
#    than run in a shell that only looks like bash.
#  - everything else defconfig has (editors, dpkg/rpm, bc, cpio, ...): not
#    asked for; add a name to APPLETS to get it (the checks below follow).
# FEATURE_PREFER_APPLETS and FEATURE_SH_STANDALONE stay off: commands are
# found on PATH (/usr/bin), as with any other shell; they would re-exec
# /proc/self/exe.  FEATURE_USE_SENDFILE off: it was built before the guest
# had sendfile(2), and read/write is as fast here.
cat >bb.config <<'CFG'
CONFIG_STATIC=y
CONFIG_CROSS_COMPILER_PREFIX=""
CONFIG_BUSYBOX=y
CONFIG_BUSYBOX_EXEC_PATH="/usr/bin/busybox"
CONFIG_FEATURE_INSTALLER=n
CONFIG_FEATURE_SUID=n
CONFIG_FEATURE_PREFER_APPLETS=n
CONFIG_FEATURE_SH_STANDALONE=n
CONFIG_FEATURE_SH_NOFORK=n
CONFIG_FEATURE_SYSLOG=n
CONFIG_FEATURE_UTMP=n
CONFIG_FEATURE_WTMP=n
CONFIG_FEATURE_PIDFILE=n
CONFIG_FEATURE_DEVPTS=n
CONFIG_FEATURE_EDITING=n
CONFIG_FEATURE_USE_SENDFILE=n
CONFIG_SH_IS_ASH=y
CONFIG_SH_IS_HUSH=n
CONFIG_SH_IS_NONE=n
CONFIG_BASH_IS_ASH=n
CONFIG_BASH_IS_HUSH=n
CONFIG_BASH_IS_NONE=y
CONFIG_ASH=y
CONFIG_HUSH=n
CONFIG_ASH_JOB_CONTROL=n
CONFIG_ASH_MAIL=n
CONFIG_FEATURE_SH_MATH=y
CONFIG_FEATURE_SH_MATH_64=y
CONFIG_FEATURE_SEAMLESS_GZ=y
CFG
# Each applet's config symbol (sh and ash: the choice and ASH above).
for a in $APPLETS; do
	case $a in
	sh | ash) ;;
	'[') echo TEST1 ;;
	'[[') echo TEST2 ;;
	*) echo "$a" | tr a-z A-Z ;;
	esac
done | sort -u >bb.wanted
# Every applet's symbol, from the sources' //applet: lines.
grep -rhoE '^//applet: *IF_[A-Z0-9_]+\(' --include=*.c --exclude-dir=.pc . |
	sed -E 's/.*IF_([A-Z0-9_]+)\(.*/\1/' | sort -u >bb.all
[ "$(wc -l <bb.all)" -gt 300 ] || die "found only $(wc -l <bb.all) applet symbols in the sources"
for sym in $(cat bb.wanted); do grep -qx "$sym" bb.all || die "no applet symbol $sym in BusyBox's sources"; done
for sym in $(comm -23 bb.all bb.wanted); do
	grep -q "^CONFIG_$sym=" bb.config || echo "CONFIG_$sym=n"
done >>bb.config
for sym in $(cat bb.wanted); do echo "CONFIG_$sym=y"; done >>bb.config

make defconfig >config.log 2>&1 || { tail -n 20 config.log >&2; die "make defconfig failed (see $work/config.log)"; }
# Our lines replace defconfig's; "=n" is written as Kconfig writes it.
sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' bb.config >bb.names
{ grep -v -w -F -f bb.names .config || true; } >config.base
sed 's/^\(CONFIG_[A-Za-z0-9_]*\)=n$/# \1 is not set/' bb.config >>config.base
mv config.base .config
yes '' | make oldconfig >>config.log 2>&1 || { tail -n 20 config.log >&2; die "make oldconfig failed (see $work/config.log)"; }
# Kconfig drops a symbol whose dependencies are not met: each of ours must
# have survived as given.
while IFS= read -r line; do
	case $line in
	*=n) ! grep -q "^${line%=n}=" .config ;;
	*) grep -qxF "$line" .config ;;
	esac || die "$line did not stick in .config (see $work/config.log)"
done <bb.config

# -Os (BusyBox's own); musl-gcc's headers only (no Linux headers needed by
# these applets).  V=1: the commands go to the log.
make -j"$JOBS" V=1 CC="$cc" HOSTCC=gcc busybox_unstripped >build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "build failed (see $work/build.log)"; }

# --- checks, then install atomically ---
sh "$here/syscheck.sh" busybox_unstripped || die "busybox does not use our musl's fast entry (see above)"
strip -o busybox.stripped busybox_unstripped
readelf -hW busybox.stripped | grep -q 'Type: *EXEC' || die "busybox is not an ET_EXEC"
readelf -lW busybox.stripped | grep -q INTERP && die "busybox has a PT_INTERP"
if command -v file >/dev/null; then
	file -b busybox.stripped | grep -q 'statically linked' || die "file(1) does not call busybox statically linked"
fi
./busybox.stripped --list >applets.txt || die "busybox --list fails natively"
missing=
for a in $APPLETS; do grep -qxF -- "$a" applets.txt || missing="$missing $a"; done
[ -z "$missing" ] || die "applets missing from the build:$missing (see $work/.config)"
# Nothing beyond the list (a new default-on applet would land on the disk).
for a in $APPLETS; do echo "$a"; done | LC_ALL=C sort >applets.wanted
extra=$(LC_ALL=C sort applets.txt | LC_ALL=C comm -13 applets.wanted -)
[ -z "$extra" ] || die "applets not in the list were built:" $extra
smoke='set -e; d=$(mktemp -d); cd "$d"
printf "b\na\nb\n" > f; [ "$(sort f | uniq | tr "\n" " ")" = "a b " ]
echo hello | gzip | gunzip | grep -q hello
tar -czf t.tgz f && tar -tzf t.tgz | grep -qx f
[ "$(echo "x y z" | awk "{ print \$2 }")" = y ]
[ "$(seq 3 | xargs echo | sed s/2/two/)" = "1 two 3" ]
[ "$(find . -name f -type f | wc -l)" -eq 1 ]
[ "$(echo abc | md5sum | cut -c1-8)" = 0bee89b0 ]
cd /; rm -r "$d"; echo $((6 * 7))'
# The applets themselves (the host's tools stay out of PATH), as on the disk.
mkdir bin
while IFS= read -r a; do ln -s ../busybox.stripped "bin/$a"; done <applets.txt
r=$(env -i PATH="$work/bin" "$work/bin/sh" -c "$smoke") || die "the shell smoke test fails natively"
[ "$r" = 42 ] || die "the shell smoke test printed '$r', expected 42"
# The same with the fast entry in use, as in the guest (AT_SYSINFO, no vDSO):
# the shell alone (a forked child would print its own count at its exit).
gcc -O2 -Wall -fno-stack-protector -o sysinfo-run "$here/sysinfo-run.c" >sysinfo-run.log 2>&1 ||
	{ cat sysinfo-run.log >&2; die "cannot build $here/sysinfo-run.c"; }
r=$(./sysinfo-run "$work/busybox.stripped" sh -c 'x=; for i in 1 2 3; do x="$x$i"; done; echo "$x $((6 * 7))"' 2>fastentry.log) ||
	{ cat fastentry.log >&2; die "busybox sh fails natively with AT_SYSINFO (fast entry) in its auxv"; }
[ "$r" = "123 42" ] || die "the shell through the fast entry printed '$r', expected '123 42'"
n=$(sed -n 's/^sysinfo-run: \([0-9]*\) system calls through AT_SYSINFO$/\1/p' fastentry.log)
[ "${n:-0}" -gt 5 ] || die "busybox made ${n:-no} system calls through the fast entry (see $work/fastentry.log)"
# Not executable here: it is a part of the python image's system disk
# (system-disk.sh gives it 0755 there), not an image of its own, and husk
# takes every executable file of the image directory for an image (`husk
# images`, the unknown-image message).  busybox.applets: the names
# system-disk.sh links to it.
chmod 0644 busybox.stripped
cp applets.txt "$out/busybox.applets.tmp"
mv -f "$out/busybox.applets.tmp" "$out/busybox.applets"
mv -f busybox.stripped "$out/busybox"
echo "busybox.sh: $out/busybox ready ($(wc -c <"$out/busybox") bytes, $(wc -l <applets.txt) applets)"
