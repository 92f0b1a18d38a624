#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Datasets (--ro), the workdir (-w) and what comes back to the host.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 27
export HUSK_CACHE="$TMP/cache"
DS=$TMP/dataset JOB=$TMP/job
mkdir -p "$DS/sub"
printf 'hello dataset\n' > "$DS/hello.txt"
head -c 5000000 /dev/urandom > "$DS/sub/big.bin"
manifest() { (cd "$1" && find . -printf '%p %y %s %m %T@\n' | sort && find . -type f -exec sha256sum {} + | sort); }
manifest "$DS" > "$TMP/ds.before"

"$HUSK" run --ro ds="$DS" -w "$JOB" "$PROGS/husk/fs_check" > "$TMP/tap"
is "$?" 0 "file system conformance program passes in the guest"
grep '^not ok' "$TMP/tap" | sed 's/^/# /'
is "$(grep -c '^ok' "$TMP/tap")" "$(sed -n 's/^1\.\.//p' "$TMP/tap")" "every guest file system check is ok"
is "$(cat "$JOB/out/b.txt")" "Alp" "a file written in the guest is on the host after the run"
[ ! -e "$JOB/out/link" ] && [ ! -L "$JOB/out/link" ]; ok $? "a file removed in the guest is removed on the host"
is "$(stat -c %Y "$JOB/out/b.txt")" "1000000000" "modification times come back"
ls "$HUSK_CACHE"/ro-*.img > "$TMP/cache1"
is "$(wc -l < "$TMP/cache1")" 1 "the dataset image is cached"

"$HUSK" run --ro ds="$DS" -w "$JOB" lua -e '
local i = assert(io.open("/data/ds/sub/big.bin", "rb")) local d = i:read("a") i:close()
local o = assert(io.open("copy.bin", "wb")) o:write(d) o:close() print(#d)' > "$TMP/out"
is "$(cat "$TMP/out")" "5000000" "Lua reads the 5 MB dataset file"
is "$(sha256sum < "$JOB/copy.bin")" "$(sha256sum < "$DS/sub/big.bin")" "its copy written to the workdir matches the host's sha256"
ls "$HUSK_CACHE"/ro-*.img > "$TMP/cache2"
is "$(cat "$TMP/cache2")" "$(cat "$TMP/cache1")" "a second run reuses the cached dataset image"
is "$(cat "$JOB/out/b.txt")" "Alp" "files the program did not touch stay"

# A full disk is ENOSPC in the guest, and what fit comes back.
"$HUSK" run --disk 48M -w "$TMP/small" "$PROGS/husk/fill_disk" > "$TMP/fill"
is "$?" 0 "filling the workdir disk does not crash"
grep -q '^ENOSPC after [0-9]* bytes$' "$TMP/fill"; ok $? "the program sees ENOSPC ($(cat "$TMP/fill"))"
fit=$(sed -n 's/^ENOSPC after \([0-9]*\) bytes$/\1/p' "$TMP/fill")
is "$(stat -c %s "$TMP/small/fill")" "$fit" "the data that fit is written back"

# After a failure the workdir still comes back, and husk says so.
"$HUSK" run -w "$TMP/fail" lua -e 'local f = io.open("partial.txt", "w") f:write("done so far") f:close() os.exit(3)' 2>"$TMP/err"
is "$?" 3 "the program's status is kept"
is "$(cat "$TMP/fail/partial.txt")" "done so far" "what it completed is written back"
grep -q 'workdir was still written back' "$TMP/err"; ok $? "husk says the workdir was written back after the failure"

# A corrupt read-only image is refused before the run.
mke2fs -q -t ext2 -F "$TMP/good.img" 4M
cp "$TMP/good.img" "$TMP/bad.img"
printf '\377\377\377\377' | dd of="$TMP/bad.img" bs=1 seek=1028 conv=notrunc 2>/dev/null
"$HUSK" run --ro x="$TMP/bad.img" lua -e '' 2>"$TMP/err"
is "$?" 125 "a corrupt --ro image: exit 125"
grep -q 'corrupt ext2 image' "$TMP/err"; ok $? "with a clear message"
"$HUSK" run --ro x="$TMP/good.img" lua -e 'print(io.open("/data/x/lost+found") ~= nil)' > "$TMP/out"
is "$(cat "$TMP/out")" "true" "an ext2 image file is attached as it is"

# A hostile program cannot make the extraction write outside the workdir.
sha_passwd=$(sha256sum < /etc/passwd)
rm -f /tmp/husk-hostile-target
"$HUSK" run -w "$TMP/hostile" "$PROGS/husk/hostile_workdir" 100000 > /dev/null 2>"$TMP/err"
is "$?" 0 "the hostile program ran"
[ -L "$TMP/hostile/passwd-link" ] && [ -L "$TMP/hostile/rootlink" ] && [ -L "$TMP/hostile/escape" ]
ok $? "symlinks come back as symlinks"
[ "$(sha256sum < /etc/passwd)" = "$sha_passwd" ] && [ ! -e /tmp/husk-hostile-target ] && [ ! -e "$TMP/owned" ]
ok $? "nothing outside the workdir was written"
is "$(ls "$TMP/hostile/many" | wc -l)" 100000 "100000 files come back"

manifest "$DS" > "$TMP/ds.after"
cmp -s "$TMP/ds.before" "$TMP/ds.after"; ok $? "the dataset directory is byte-for-byte unchanged"
# Hard links come back as hard links, across directories, and stay so.
mkdir "$TMP/hl"
"$HUSK" run -w "$TMP/hl" python -c '
import os
os.makedirs("d/e")
open("a", "w").write("shared")
os.link("a", "b"); os.link("a", "d/e/c")'
inodes=$(stat -c %i "$TMP/hl/a" "$TMP/hl/b" "$TMP/hl/d/e/c" | sort -u | wc -l)
is "$inodes:$(stat -c %h "$TMP/hl/a"):$(cat "$TMP/hl/d/e/c")" "1:3:shared" "hard links come back as one file with three names"
is "$("$HUSK" run -w "$TMP/hl" python -c '
import os
s = os.stat("b")
print(s.st_nlink, s.st_ino == os.stat("d/e/c").st_ino)
os.unlink("b")')" "3 True" "the next run sees them linked"
[ ! -e "$TMP/hl/b" ] && [ "$(stat -c %h "$TMP/hl/a")" = 2 ]; ok $? "removing one name in the guest removes just that name"
done_testing
