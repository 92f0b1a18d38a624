#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Read-only datasets attached without copying their data (vmm/disks/dataset.c,
# file_server.c): a 100 GB sparse file and a tree of 100,000 files attach
# with no more than their metadata in the cache and read back byte-identical;
# host files that change, shrink, are replaced or become symlinks during a
# run are never read outside the file walked; a torn map is built again; the
# file server is confined.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 26
export HUSK_CACHE="$TMP/cache"
mkdir -m 700 "$HUSK_CACHE"
PY=/usr/bin/python3
kib() { du -sk "$HUSK_CACHE" | cut -f1; }

# ---- a 100 GB sparse file ----------------------------------------------------------
mkdir "$TMP/sparse"
truncate -s 100G "$TMP/sparse/s.bin"
printf 'middle' | dd of="$TMP/sparse/s.bin" bs=1 seek=$((50 << 30)) conv=notrunc status=none
head -c 1048576 /dev/urandom > "$TMP/tail.bin"
dd if="$TMP/tail.bin" of="$TMP/sparse/s.bin" bs=1M seek=$(((100 << 10) - 1)) conv=notrunc status=none
"$HUSK" run --ro s="$TMP/sparse" python -c '
import hashlib, os
f = open("/data/s/s.bin", "rb")
print(os.path.getsize("/data/s/s.bin"))
f.seek(50 << 30); print(f.read(6).decode())
f.seek(1 << 30); print(f.read(1 << 20) == bytes(1 << 20))
f.seek((100 << 30) - (1 << 20)); print(hashlib.sha256(f.read()).hexdigest())' > "$TMP/out" 2> "$TMP/err"
is "$(cat "$TMP/out")" "$(printf '%s\n' 107374182400 middle True "$(sha256sum < "$TMP/tail.bin" | cut -d' ' -f1)")" \
	"a 100 GB sparse file: its size, its data at 50 GiB and at the end, zeros in a hole"
[ "$(kib)" -lt 65536 ]; ok $? "the cache holds its metadata only ($(kib) KiB)"

# ---- 100,000 files -------------------------------------------------------------------
"$PY" -c '
import os, sys
for d in range(100):
    os.makedirs(f"{sys.argv[1]}/d{d}")
    for f in range(1000):
        with open(f"{sys.argv[1]}/d{d}/f{f}", "w") as o: o.write(f"{d}/{f} " * (1 + f % 50))
os.symlink("/etc/hostname", f"{sys.argv[1]}/d0/outside")' "$TMP/tree"
cat > "$TMP/digest.py" << 'EOF'
import hashlib, os, sys
top, h, n = sys.argv[1], hashlib.sha256(), 0
for d, dirs, files in os.walk(top):
    dirs.sort()
    for f in sorted(files):
        p = os.path.join(d, f)
        h.update(os.path.relpath(p, top).encode() + b"\0")
        if os.path.islink(p):
            h.update(b"link " + os.readlink(p).encode())
        else:
            with open(p, "rb") as o:
                h.update(o.read())
        n += 1
print(n, h.hexdigest())
EOF
before=$(kib)
"$HUSK" run -m 512M --ro t="$TMP/tree" python "$TMP/digest.py" /data/t > "$TMP/out" 2> "$TMP/err"
is "$(cat "$TMP/out")" "$("$PY" "$TMP/digest.py" "$TMP/tree")" \
	"100,000 files and a symlink read back as on the host (count and sha256 over names and contents)"
[ $(($(kib) - before)) -lt 65536 ]; ok $? "the cache grew by their metadata only ($(($(kib) - before)) KiB)"
"$HUSK" run --ro t="$TMP/tree" python -c 'import os; print(os.readlink("/data/t/d0/outside"))' > "$TMP/out"
is "$(cat "$TMP/out")" "/etc/hostname" "a symlink out of the dataset is a symlink in the guest"
"$HUSK" run --ro t="$TMP/tree" python -c '
try: print(open("/data/t/d0/outside").read() == open("/etc/hostname").read())
except OSError as e: print(e.errno)' > "$TMP/out"
[ "$(cat "$TMP/out")" != "$(cat /etc/hostname)" ]; ok $? "following it reads the guest's file, never the host's"
ls "$HUSK_CACHE"/ro-*.img | sort > "$TMP/imgs"
"$HUSK" run --ro t="$TMP/tree" python -c 'print(open("/data/t/d5/f5").read())' > "$TMP/out"
is "$(ls "$HUSK_CACHE"/ro-*.img | sort | cmp - "$TMP/imgs" && cat "$TMP/out")" "$(cat "$TMP/tree/d5/f5")" \
	"an unchanged tree is attached from the cache"

# ---- host files changing during a run ----------------------------------------------------
mkdir "$TMP/live"
head -c $((16 << 20)) /dev/zero | tr '\0' A > "$TMP/live/shrinks"
echo "the walked file" > "$TMP/live/replaced"
echo "another walked file" > "$TMP/live/linked"
echo "SECRET-ON-THE-HOST" > "$TMP/secret"
cat > "$TMP/live.py" << 'EOF'
import os, sys, time
f = open("/data/l/shrinks", "rb", buffering=0)
head = f.read(1 << 20)
print("ready", flush=True)
time.sleep(3)
rest = f.read()
data = head + rest
print("read", len(data), "A", data.count(b"A"), "zero", data.count(b"\0"))
for name in ("replaced", "linked"):
    try:
        print(name, open("/data/l/" + name, "rb").read())
    except OSError as e:
        print(name, "errno", e.errno)
EOF
"$HUSK" run --ro l="$TMP/live" python "$TMP/live.py" > "$TMP/out" 2> "$TMP/err" &
pid=$!
i=0
while ! grep -q ready "$TMP/out" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
truncate -s $((2 << 20)) "$TMP/live/shrinks"
echo "a new file in its place" > "$TMP/new" && mv "$TMP/new" "$TMP/live/replaced"
rm "$TMP/live/linked" && ln -s "$TMP/secret" "$TMP/live/linked"
wait $pid
is "$?" 0 "the run with files changing under it ends normally"
is "$(sed -n 2p "$TMP/out")" "read 16777216 A $((2 << 20)) zero $((14 << 20))" \
	"a file shrunk on the host reads as zeros beyond its new end (never past it on the host)"
is "$(sed -n 3p "$TMP/out")" "replaced errno 5" "a file replaced on the host (another inode): EIO, not the new file"
is "$(sed -n 4p "$TMP/out")" "linked errno 5" "a file replaced by a symlink on the host: EIO"
! grep -q SECRET "$TMP/out"; ok $? "the symlink's target on the host is never read"

# ---- the cache's map ---------------------------------------------------------------------
mkdir "$TMP/small" && echo "small dataset" > "$TMP/small/f"
"$HUSK" run --ro d="$TMP/small" lua -e '' > /dev/null
map=$(ls -t "$HUSK_CACHE"/ro-*.map | head -1)
truncate -s 20 "$map"
"$HUSK" run --ro d="$TMP/small" lua -e 'io.write(io.open("/data/d/f"):read("a"))' > "$TMP/out" 2> "$TMP/err"
is "$(cat "$TMP/out")" "small dataset" "a torn map in the cache is not used: the image is built again"
[ "$(stat -c %s "$map")" -gt 20 ]; ok $? "and the map is stored whole again"
dd if=/dev/urandom of="$map" bs=1 count=64 seek=40 conv=notrunc status=none
"$HUSK" run --ro d="$TMP/small" lua -e 'io.write(io.open("/data/d/f"):read("a"))' > "$TMP/out" 2> "$TMP/err"
is "$(cat "$TMP/out")" "small dataset" "a map with garbage in it is refused too"
cp "$map" "$TMP/old.map"
rm "${map%.map}.img"
"$HUSK" run --ro d="$TMP/small" lua -e '' > /dev/null # built again: another image UUID
cp "$TMP/old.map" "$map"
"$HUSK" run --ro d="$TMP/small" lua -e 'io.write(io.open("/data/d/f"):read("a"))' > "$TMP/out" 2> "$TMP/err"
is "$(cat "$TMP/out"):$(cmp -s "$map" "$TMP/old.map" && echo same || echo replaced)" "small dataset:replaced" \
	"a map from another build of the image is refused (the image's UUID is in the map)"

# ---- the cache's cap ------------------------------------------------------------------
export HUSK_CACHE="$TMP/capped"
# A cap below one snapshot's size (lua's is ~1 MiB): runs boot afresh here,
# or trimming would take the datasets out for the snapshot's sake.
export HUSK_COLD=1
mkdir -m 700 "$HUSK_CACHE"
over=0
for i in $(seq 20); do
	mkdir -p "$TMP/many/$i" && echo "dataset $i" > "$TMP/many/$i/f"
	HUSK_CACHE_MAX=150K "$HUSK" run --ro d="$TMP/many/$i" lua -e 'io.write(io.open("/data/d/f"):read("a"))' >> "$TMP/many.out"
	[ "$(du -sk "$HUSK_CACHE" | cut -f1)" -le 154 ] || over=$((over + 1)) # 150 KiB and the directory itself
done
is "$(grep -c '^dataset' "$TMP/many.out"):$over" "20:0" "20 datasets in turn: each read, the cache never over its cap of 150K"
HUSK_CACHE_MAX=150K "$HUSK" cache ls > "$TMP/ls"
kept=$(grep -c "^dataset " "$TMP/ls")
[ "$kept" -ge 2 ] && [ "$kept" -lt 20 ]; ok $? "husk cache ls lists the $kept datasets kept, oldest first"
grep -q "in $kept entries, cap 150K (HUSK_CACHE_MAX)" "$TMP/ls"; ok $? "and the total against the cap"
"$HUSK" run --ro d="$TMP/many/20" lua -e '' && ls "$HUSK_CACHE"/ro-*.map > "$TMP/maps"
"$HUSK" run --ro d="$TMP/many/1" lua -e '' # the oldest, evicted: built again
is "$(ls "$HUSK_CACHE"/ro-*.map | wc -l)" "$(($(wc -l < "$TMP/maps") + 1))" "an evicted dataset is built again when used"
"$HUSK" cache clear dataset > /dev/null
is "$(ls -A "$HUSK_CACHE" | grep -v '^snapshots$')" "" "husk cache clear dataset empties it of datasets"
"$HUSK" cache clear stuff 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: unknown kind 'stuff' (expected dataset, image, package, snapshot or leftover) (see husk --help)" \
	"an unknown kind: one line, exit 125"
HUSK_CACHE_MAX=lots "$HUSK" run --ro d="$TMP/many/2" lua -e '' 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: bad HUSK_CACHE_MAX 'lots' (see husk --help)" "a bad HUSK_CACHE_MAX: one line, exit 125"
export HUSK_CACHE="$TMP/cache"
unset HUSK_COLD

# ---- the file server ---------------------------------------------------------------------
"$HUSK" run --ro t="$TMP/tree" python -c 'import time; time.sleep(2)' &
pid=$!
sleep 1
kids=$(ps -o pid= --ppid "$pid")
confined=0 total=0
for k in $kids; do
	total=$((total + 1))
	grep -q '^Seccomp:[[:space:]]*2' "/proc/$k/status" && grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$k/status" &&
		confined=$((confined + 1))
done
server=$(for k in $kids; do ls -l "/proc/$k/fd" 2> /dev/null | grep -q "$TMP/tree" && echo "$k"; done)
wait $pid
[ -n "$server" ]; ok $? "a process holds the dataset's directory: the file server"
is "$confined/$total" "$total/$total" "every process husk forked for the run is under seccomp with no_new_privs"
"$HUSK" run --ro t="$TMP/tree" python -c 'print(open("/data/t/d1/f1").read())' > "$TMP/out"
is "$(cat "$TMP/out")" "$(cat "$TMP/tree/d1/f1")" "runs go on after it (nothing left behind)"
done_testing
