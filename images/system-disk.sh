#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# system-disk.sh BUILD: the python image's system disk, mounted read-only on
# /usr in the guest, as an ext2 image (python.disk), plus the image's default
# environment (python.env).  It holds:
#   lib/python311.zip    the stored stdlib zip (pyzip.sh): what imports read
#   lib/python3.11/      the sources of the same modules (pyzip.sh), which
#                        the .pyc name: tracebacks show source lines
#   share/terminfo/      common terminals, compiled by deps.sh ncurses
#                        (ncurses' compiled-in terminfo directory)
#   share/zoneinfo/      Debian's tzdata, from the host (package tzdata):
#                        the first directory of CPython's zoneinfo.TZPATH
#   lib/ssl/cert.pem     Debian's CA certificates (package ca-certificates:
#                        the certificates it ships, not the host's bundle,
#                        which may hold local CAs) in one PEM file: our
#                        OpenSSL's default CA file (OPENSSLDIR /usr/lib/ssl,
#                        deps.sh), which ssl.create_default_context() loads
#   bin/python3.11       the interpreter itself, with python3 and python as
#                        hard links: CPython finds argv[0] on PATH there, so
#                        sys.executable is /usr/bin/python (tools look for it)
#   bin/busybox          BusyBox (busybox.sh), with a hard link per applet
#                        (busybox.applets: sh, ls, grep, ...): the guest's
#                        /bin is a symlink to usr/bin, so /bin/sh is ash.
#                        Hard links, not symlinks: exec needs no link to
#                        follow, and BusyBox picks the applet from argv[0],
#                        which is the name either way.
# The staging directory python-sys/ doubles as PYTHONHOME for native runs.
set -eu
BUILD=$1
img=$BUILD/images
stage=$img/python-sys
die() { echo "system-disk.sh: $*" >&2; exit 1; }
[ -f "$img/python-stdlib.zip" ] || die "$img/python-stdlib.zip is missing"
[ -f "$img/busybox" ] && [ -s "$img/busybox.applets" ] || die "$img/busybox or busybox.applets is missing (images/busybox.sh makes them)"
[ -d "$img/python-src" ] || die "$img/python-src is missing (images/pyzip.sh makes it)"
ti=$BUILD/musl-deps/share/terminfo
[ -f "$ti/x/xterm" ] || die "$ti/x/xterm is missing (images/deps.sh ncurses makes it)"
tz=/usr/share/zoneinfo
[ -f "$tz/Europe/Paris" ] && [ -f "$tz/tzdata.zi" ] || die "no zoneinfo in $tz: install Debian's tzdata (scripts/install-deps)"
cas=$(dpkg-query -L ca-certificates 2>/dev/null | grep '^/usr/share/ca-certificates/.*\.crt$' | LC_ALL=C sort) || true
[ "$(echo "$cas" | grep -c .)" -ge 100 ] || die "Debian's CA certificates are missing: install ca-certificates (scripts/install-deps)"
rm -rf "$stage"
mkdir -p "$stage/lib" "$stage/share" "$stage/bin"
cp "$img/python" "$stage/bin/python3.11"
ln "$stage/bin/python3.11" "$stage/bin/python3"
ln "$stage/bin/python3.11" "$stage/bin/python"
cp "$img/busybox" "$stage/bin/busybox"
chmod 0755 "$stage/bin/busybox"
while IFS= read -r a; do
	case $a in
	'' | */* | . | ..) die "bad applet name '$a' in $img/busybox.applets" ;;
	esac
	[ -e "$stage/bin/$a" ] && die "applet $a would replace $stage/bin/$a"
	ln "$stage/bin/busybox" "$stage/bin/$a"
done <"$img/busybox.applets"
cp "$img/python-stdlib.zip" "$stage/lib/python311.zip"
cp -a "$img/python-src" "$stage/lib/python3.11"
cp -a "$ti" "$stage/share/terminfo"
# Symlinks stay symlinks (UTC -> Etc/UTC, posix/ -> ..); localtime points
# at the host's /etc/localtime: left out.
cp -a "$tz" "$stage/share/zoneinfo"
rm -f "$stage/share/zoneinfo/localtime"
mkdir -p "$stage/lib/ssl"
for c in $cas; do
	grep -q -- '-----BEGIN CERTIFICATE-----' "$c" || die "$c is not a PEM certificate"
	cat "$c"
done >"$stage/lib/ssl/cert.pem"
find "$stage/share/zoneinfo" -type l ! -exec test -e {} \; -print | grep -q . &&
	die "dangling symlinks in $stage/share/zoneinfo: $(find "$stage/share/zoneinfo" -type l ! -exec test -e {} \; -print | head -n 3)"
# Room: files (a hard-linked one once), directories and symlinks in 4 KiB blocks, a tenth more and
# 4 MiB for the metadata; one inode per entry and 256 spare.
kib=$(find "$stage" -printf '%i %s\n' | sort -u -k1,1 | awk '{ k += int(($2 + 4095) / 4096) * 4 } END { print int(k * 1.1) + 4096 }') # hard links once
inodes=$(( $(find "$stage" | wc -l) + 256 ))
mke2fs -q -t ext2 -b 4096 -m 0 -N "$inodes" -E root_owner=0:0 -d "$stage" -F "$img/python.disk.tmp" "${kib}k" ||
	die "mke2fs failed"
mv "$img/python.disk.tmp" "$img/python.disk"
echo "PYTHONHOME=/usr" > "$img/python.env"
