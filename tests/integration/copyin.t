#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Host directories copied into images (vmm/copyin.c) and the dataset cache:
# no symlink is followed, in the path given or inside the tree while it is
# copied; the cache directory and its images must be the user's own; the
# cache key changes with any change to the tree; e2fsprogs run from fixed
# paths with an environment of their own.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 27
export HUSK_CACHE="$TMP/cache"

# ---- (a) a poisoned cache directory is refused: one line, exit 125 -------------
mkdir -p "$TMP/ds"
echo public > "$TMP/ds/f"
refused() { # refused CACHE-DIR WHAT: husk must refuse it with one line
	HUSK_CACHE="$1" "$HUSK" run --ro d="$TMP/ds" lua -e 'print("ran")' > "$TMP/out" 2> "$TMP/err"
	st=$?
	[ "$st" = 125 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l < "$TMP/err")" = 1 ] && grep -q "$2" "$TMP/err"
	ok $? "a cache dir that $3 is refused: exit $st, $(cat "$TMP/err")"
}
mkdir -m 0777 "$TMP/ww" && chmod 0777 "$TMP/ww"
refused "$TMP/ww" "writable by group or others" "anyone can write"
mkdir "$TMP/gw" && chmod 0770 "$TMP/gw"
refused "$TMP/gw" "writable by group or others" "its group can write"
mkdir -m 0700 "$TMP/real-cache" && ln -s "$TMP/real-cache" "$TMP/link-cache"
refused "$TMP/link-cache" "is a symlink" "is a symlink"
if [ "$(id -u)" = 0 ]; then
	mkdir -m 0700 "$TMP/theirs" && chown 65534:65534 "$TMP/theirs"
	refused "$TMP/theirs" "owned by uid 65534" "another user owns"
else
	ok 0 "# SKIP another user's cache dir needs root to make"
fi
[ -z "$(find "$TMP/ww" "$TMP/gw" "$TMP/real-cache" -mindepth 1)" ]; ok $? "nothing was written into a refused cache dir"

# A cached image replaced by a symlink (or made writable by others) is not
# used: the image is built again and replaces it.
"$HUSK" run --ro d="$TMP/ds" lua -e 'io.write(io.open("/data/d/f"):read("a"))' > "$TMP/out"
img=$(ls "$HUSK_CACHE"/ro-*.img)
echo "$img" | grep -Eq '/ro-[0-9a-f]{64}\.img$'; ok $? "the image's name is a SHA-256 key"
is "$(stat -c %a "$img" "${img%.img}.map" | tr '\n' ' '):$(ls -A "$HUSK_CACHE" | grep -vc '^snapshots$')" "600 600 :2" \
	"the image and its map are mode 600, no temporary is left"
mkdir "$TMP/evil" && echo SECRET > "$TMP/evil/f"
mke2fs -q -t ext2 -d "$TMP/evil" -F "$TMP/evil.img" 20M > /dev/null 2>&1
rm "$img" && ln -s "$TMP/evil.img" "$img"
"$HUSK" run --ro d="$TMP/ds" lua -e 'io.write(io.open("/data/d/f"):read("a"))' > "$TMP/out"
is "$(cat "$TMP/out")" "public" "a cached image that is a symlink is not followed"
[ -f "$img" ] && [ ! -L "$img" ]; ok $? "it is replaced by a built one"
chmod 0666 "$img" && printf 'tampered' | dd of="$img" bs=1 seek=1024 conv=notrunc 2>/dev/null
"$HUSK" run --ro d="$TMP/ds" lua -e 'io.write(io.open("/data/d/f"):read("a"))' > "$TMP/out"
is "$(cat "$TMP/out"):$(stat -c %a "$img")" "public:600" "a cached image others can write is built again"

# ---- (b) a symlink in a component of -w DIR or --ro DIR is refused ---------------
mkdir -p "$TMP/place/data" && echo x > "$TMP/place/data/f" && ln -s "$TMP/place" "$TMP/alias"
"$HUSK" run -w "$TMP/alias/job" lua -e '' 2> "$TMP/err"
st=$?
is "$st:$(cat "$TMP/err")" "125:husk: workdir $TMP/alias/job: $TMP/alias is a symlink (give the real path)" \
	"-w through a symlinked component: refused"
[ ! -e "$TMP/place/job" ]; ok $? "and nothing was made through the symlink"
"$HUSK" run --ro d="$TMP/alias/data" lua -e '' 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: --ro $TMP/alias/data: $TMP/alias is a symlink (give the real path)" \
	"--ro through a symlinked component: refused"
ln -s "$TMP/place/data" "$TMP/data-link"
"$HUSK" run --ro d="$TMP/data-link" lua -e '' 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: --ro $TMP/data-link: $TMP/data-link is a symlink (give the real path)" \
	"--ro DIR that is itself a symlink: refused"
ln -s "$TMP/place" "$TMP/job-link"
"$HUSK" run -w "$TMP/job-link" lua -e '' 2> "$TMP/err"
is "$?" 125 "-w DIR that is itself a symlink: refused"
"$HUSK" run -w "$TMP/new/deep/job" lua -e 'io.open("made", "w"):write("yes")' 2> "$TMP/err"
is "$?:$(cat "$TMP/new/deep/job/made" 2>/dev/null)" "0:yes" "-w makes a missing DIR (mkdir -p) as before"

# ---- (c) a directory swapped for a symlink during the copy is never followed ------
# A helper swaps tree/secret with a symlink to $TMP/secret, over and over,
# while husk copies the tree and the guest reads all of it.  The guest must
# see the real directory or a symlink, never the secret's contents.  (mke2fs -d lstat()s a name, then chdir()s into it and
# back out by "..": a symlink swapped in between is followed, and with the
# same name in the secret's parent and nothing after it in the tree, the
# copy then ends without error.)
mkdir -p "$TMP/secret" "$TMP/race/tree/secret"
for i in 0 1 2 3; do
	echo public > "$TMP/race/tree/a$i"
	echo public > "$TMP/race/tree/secret/f$i"
	echo SECRET > "$TMP/secret/f$i"
done
# renameat2(RENAME_EXCHANGE): the name is always the directory or the
# symlink, never missing.
cat > "$TMP/swap.py" <<'EOF'
import ctypes, os, sys, time
tree, secret, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
sub, spare = (tree + "/secret").encode(), (tree + "/../spare").encode()
os.symlink(secret, spare)
end, n = time.time() + seconds, 0
while time.time() < end:
    for i in range(1000):
        if libc.renameat2(-100, sub, -100, spare, 2):
            sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 1000
print(n)
EOF
cat > "$TMP/walk.py" <<'EOF'
import os
for top, dirs, files in os.walk("/data/t"):
    for n in files + dirs:
        p = os.path.join(top, n)
        if os.path.islink(p):
            print("LINK", n, os.readlink(p))
        elif os.path.isfile(p):
            print("FILE", n, open(p).read().strip())
EOF
python3 "$TMP/swap.py" "$TMP/race/tree" "$TMP/secret" 15 > "$TMP/swaps" &
swapper=$!
runs=0 links=0 leaks=0 built=0
while kill -0 $swapper 2>/dev/null && [ $runs -lt 80 ]; do
	runs=$((runs + 1))
	HUSK_CACHE="$TMP/race-cache-$runs" "$HUSK" run --ro t="$TMP/race/tree" python - < "$TMP/walk.py" > "$TMP/walk" 2>&1 &&
		built=$((built + 1))
	grep -q SECRET "$TMP/walk" && leaks=$((leaks + 1)) && sed 's/^/# leaked: /' "$TMP/walk" | grep SECRET | head -2
	grep -q '^LINK' "$TMP/walk" && links=$((links + 1))
	rm -rf "$TMP/race-cache-$runs"
done
wait $swapper
echo "# $runs copies during $(cat "$TMP/swaps") swaps: $built ran, $links saw a symlink"
is "$leaks" 0 "the secret never appears in the guest ($runs copies of a tree being swapped)"
[ "$built" -gt 0 ]; ok $? "copies of the moving tree run ($built of $runs)"
[ "$links" -gt 0 ]; ok $? "the guest sees the swapped-in symlink as a symlink ($links of $runs)"

# ---- (d) the cache key ------------------------------------------------------------
export HUSK_CACHE="$TMP/kcache"
mkdir -p "$TMP/kds/sub" && echo AAAA > "$TMP/kds/sub/f"
cat_f() { "$HUSK" run --ro d="$TMP/kds" lua -e 'io.write(io.open("/data/d/sub/f"):read("a"))'; }
cat_f > /dev/null
first=$(stat -c %i:%Y "$HUSK_CACHE"/ro-*.img)
cat_f > /dev/null
is "$(ls "$HUSK_CACHE"/ro-*.img | wc -l):$(stat -c %i:%Y "$HUSK_CACHE"/ro-*.img)" "1:$first" \
	"the same tree twice: one cached image, not built again"
touch -r "$TMP/kds/sub/f" "$TMP/stamp"
printf 'BBBB\n' | dd of="$TMP/kds/sub/f" conv=notrunc 2>/dev/null
touch -r "$TMP/stamp" "$TMP/kds/sub/f" # the same size and mtime: only the ctime tells
is "$(cat_f)" "BBBB" "an in-place edit with its mtime restored is seen (ctime is in the key)"
is "$(ls "$HUSK_CACHE"/ro-*.img | wc -l)" 2 "it got a new cached image"
mv "$TMP/kds" "$TMP/kds2" && mkdir "$TMP/kds" && cp -a "$TMP/kds2/sub" "$TMP/kds/sub"
is "$(cat_f):$(ls "$HUSK_CACHE"/ro-*.img | wc -l)" "BBBB:3" "another tree at the same path with the same names, sizes and times: a new key"

# ---- e2fsprogs: a fixed path and a clean environment ------------------------------
mkdir -p "$TMP/fakebin"
printf '#!/bin/sh\ntouch %s/fake-ran\nexit 0\n' "$TMP" > "$TMP/fakebin/e2fsck"
chmod +x "$TMP/fakebin/e2fsck"
mke2fs -q -t ext2 -F "$TMP/bad.img" 4M > /dev/null 2>&1
printf '\377\377\377\377' | dd of="$TMP/bad.img" bs=1 seek=1028 conv=notrunc 2>/dev/null
PATH="$TMP/fakebin:$PATH" "$HUSK" run --ro x="$TMP/bad.img" lua -e '' 2> "$TMP/err"
is "$?" 125 "a corrupt --ro image is still refused with a poisoned PATH"
[ ! -e "$TMP/fake-ran" ]; ok $? "the e2fsck first in PATH is not run"

# ---- /run/husk: the kept namespaces' directory must be husk's own (test build) -----
mkdir -m 0777 "$TMP/kept" && chmod 0777 "$TMP/kept"
HUSK_TEST_KEPT_DIR="$TMP/kept/ns" HUSK_IMAGES=$ROOT/build/images "$ROOT/build/tests/husk-test" run \
	--audit "$TMP/k.json" lua -e 'print(3)' > "$TMP/out"
grep -q '"shared_by_runs":false.*"missing":"kept namespaces: '"$TMP"'/kept is writable by group or others (mode 777)"' \
	"$TMP/k.json" && [ "$(cat "$TMP/out")" = 3 ]
ok $? "a kept-namespace directory under a world-writable one is not used; the run goes on"
for f in "$TMP"/kept/ns/*; do [ -e "$f" ] && umount "$f" 2>/dev/null; done
chmod 0755 "$TMP/kept" && rm -rf "$TMP/kept/ns" && mkdir "$TMP/kept/ns" && ln -s /tmp "$TMP/kept/ns-link"
HUSK_TEST_KEPT_DIR="$TMP/kept/ns-link" HUSK_IMAGES=$ROOT/build/images "$ROOT/build/tests/husk-test" run \
	--audit "$TMP/l.json" lua -e '' > /dev/null
grep -q '"missing":"kept namespaces: '"$TMP"'/kept/ns-link is a symlink"' "$TMP/l.json"
ok $? "a kept-namespace directory that is a symlink is not used"
done_testing
