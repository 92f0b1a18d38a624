#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A dataset's stated limits (README, "Datasets"): a million names, 128
# directories deep, names of 255 bytes and paths of 3,968 bytes below the
# top attach and read back; one more of any is refused with one line and
# exit 125, before the guest exists.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 14
export HUSK_CACHE="$TMP/cache"
mkdir -m 700 "$HUSK_CACHE"

# 1. A million names: 1,000 directories of 999 empty files, on a tmpfs
#    when there is one (making a million files on a disk costs 40 to 200 s
#    of system time on this project's machines; on /dev/shm 4 s).
SHM=$(mktemp -d /dev/shm/husk-test-XXXXXX 2>/dev/null || mktemp -d "$TMP/m-XXXXXX")
trap 'rm -rf "$TMP" "$SHM"' EXIT
M=$SHM/million
/usr/bin/python3 - "$M" <<'EOF'
import os, stat, sys
top = sys.argv[1]
os.mkdir(top)
for d in range(1000):
    p = f"{top}/{d:03d}"
    os.mkdir(p)
    for f in range(999):
        os.mknod(f"{p}/{f:03d}", stat.S_IFREG | 0o644)
EOF
count='
import os
n = 0
for d in os.scandir("/data/m"):
    n += 1 + sum(1 for _ in os.scandir(d.path))
print(n)'
t0=$(date +%s%N)
"$HUSK" run -m 1G --ro m="$M" python -c "$count" > "$TMP/out" 2> "$TMP/err"
st=$? t1=$(date +%s%N)
is "$st:$(cat "$TMP/out")" "0:1000000" "a tree of 1,000,000 names attaches and the guest lists them all"
echo "# first attach and listing: $(((t1 - t0) / 1000000)) ms, cache $(du -sk "$HUSK_CACHE" | cut -f1) KiB"
t0=$(date +%s%N)
"$HUSK" run --ro m="$M" lua -e '' 2> "$TMP/err"
st=$? t1=$(date +%s%N)
is "$st" 0 "attached again from the cache"
echo "# cached attach: $(((t1 - t0) / 1000000)) ms"
: > "$M/one-more"
"$HUSK" run --ro m="$M" lua -e 'print("ran")' > "$TMP/out" 2> "$TMP/err"
is "$?" 125 "one name more is refused (exit 125)"
is "$(cat "$TMP/err")" "husk: --ro $M: the tree holds more than 1000000 entries (the limit)" "with one line"
[ ! -s "$TMP/out" ]; ok $? "before the program runs"
rm -rf "$M"

# 2. 128 directories below the top, with a file at the bottom; then 129.
D=$TMP/deep
p=$D
for i in $(seq 128); do p=$p/d; done
mkdir -p "$p" && echo bottom > "$p/f"
is "$("$HUSK" run --ro d="$D" python -c '
import os
os.chdir("/data/d")
for i in range(128): os.chdir("d")
print(open("f").read(), end="")' 2>&1)" "bottom" "a tree 128 directories deep reads to the bottom"
mkdir "$p/d"
"$HUSK" run --ro d="$D" lua -e '' 2> "$TMP/err"
is "$?" 125 "129 deep is refused (exit 125)"
is "$(wc -l < "$TMP/err")" 1 "with one line"
grep -q "nested deeper than 128 directories" "$TMP/err"; ok $? "saying why"

# 3. Names of 255 bytes, paths up to 3,968 bytes below the top; then longer.
L=$TMP/long
n255=$(printf '%0255d' 0)
n250=$(printf 'x%.0s' $(seq 250))
p=$L
for i in $(seq 15); do p=$p/$n250; done # 15 * 251 = 3765 bytes
mkdir -p "$p" && echo long > "$p/$n255"
rel=$(echo "${p#$L/}/$n255" | tr -d '\n')
is "${#rel}" 4020 "(the test's path is 4,020 bytes: too long)"
mv "$p/$n255" "$p/$(printf '%0200d' 0)"
rel=${p#$L/}/$(printf '%0200d' 0)
is "$("$HUSK" run --ro d="$L" python -c '
import os, sys
os.chdir("/data/d")
print(open(sys.argv[1]).read(), end="")' "$rel" 2>&1)" "long" "a path of ${#rel} bytes and names of 250 bytes read back"
echo long > "$L/$n255"
is "$("$HUSK" run --ro d="$L" python -c '
import sys
print(open("/data/d/" + sys.argv[1]).read(), end="")' "$n255" 2>&1)" "long" "a name of 255 bytes reads back"
echo x > "$p/$n255"
"$HUSK" run --ro d="$L" lua -e '' 2> "$TMP/err"
is "$?" 125 "a path longer than 3,968 bytes is refused (exit 125)"
grep -q "their paths are longer than 3968 bytes" "$TMP/err" && [ "$(wc -l < "$TMP/err")" = 1 ]; ok $? "with one line saying why"
done_testing
