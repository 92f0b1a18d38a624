#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# system-disk.sh BUILD: the python image's system disk, mounted on /usr in the
# guest: lib/python311.zip (the stored stdlib zip), as an ext2 image
# (python.disk), plus the image's default environment (python.env).  The
# staging directory python-sys/ doubles as PYTHONHOME for native runs.
set -eu
BUILD=$1
img=$BUILD/images
stage=$img/python-sys
[ -f "$img/python-stdlib.zip" ] || { echo "system-disk.sh: $img/python-stdlib.zip is missing" >&2; exit 1; }
rm -rf "$stage"
mkdir -p "$stage/lib"
cp "$img/python-stdlib.zip" "$stage/lib/python311.zip"
kib=$(( $(stat -c %s "$stage/lib/python311.zip") / 1024 + 8192 ))
mke2fs -q -t ext2 -b 4096 -m 0 -E root_owner=0:0 -d "$stage" -F "$img/python.disk.tmp" "${kib}k" \
	|| { echo "system-disk.sh: mke2fs failed" >&2; exit 1; }
mv "$img/python.disk.tmp" "$img/python.disk"
echo "PYTHONHOME=/usr" > "$img/python.env"
