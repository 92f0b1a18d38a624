#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Debian images (vmm/debian/, docs/debian-binaries.md): `husk image build`
# from Debian's packages through the host's apt, then `husk run --image`
# with that image as the guest's root: Debian's own python3, numpy, bash and
# coreutils, unmodified, exec'd by the guest kernel from the image (PATH
# lookup, PT_INTERP in the image), the command's errors as a shell's.
# The cache is build/test-cache (kept between local runs; CI starts empty).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 32
export HUSK_CACHE=$ROOT/build/test-cache
mkdir -p "$HUSK_CACHE" && chmod 700 "$HUSK_CACHE"
IMG=t-numpy

# Bad input: one line, exit 125, nothing built.
"$HUSK" image build 'Bad/Name' python3 >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "125:husk: bad image name 'Bad/Name' (a-z, 0-9, '.', '_', '-'; at most 64) (see husk --help)" \
	"a bad image name: one line, exit 125"
"$HUSK" image build x 'python3;rm' >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "125:husk: bad package name 'python3;rm' (a Debian package name: a-z, 0-9, '+', '-', '.') (see husk --help)" \
	"a bad package name: one line, exit 125"
"$HUSK" image build x no-such-package-husk >"$TMP/out" 2>&1
st=$?
ok $([ $st = 125 ] && grep -q "Unable to locate package no-such-package-husk" "$TMP/out" &&
	tail -1 "$TMP/out" | grep -q "^husk: image x: apt-get cannot resolve these packages (its message is above" && echo 0 || echo 1) \
	"an unknown package: apt's message, then husk's line, exit 125"
ok $([ ! -e "$HUSK_CACHE/images/x" ] && [ -z "$(ls -A "$HUSK_CACHE/images" | grep '^\.build')" ] && echo 0 || echo 1) \
	"a failed build leaves nothing behind"

# The build (or, on a second local run, the cache's up-to-date image).
"$HUSK" image rm $IMG >/dev/null 2>&1
"$HUSK" image build $IMG python3-numpy >"$TMP/build" 2>&1
st=$?
ok $([ $st = 0 ] && grep -q "resolving 1 package with apt" "$TMP/build" && grep -q "unpacking [0-9]* packages" "$TMP/build" &&
	grep -q "writing the disk" "$TMP/build" && echo 0 || echo 1) "the image builds, with its progress on stderr"
[ $st = 0 ] || { sed 's/^/# /' "$TMP/build"; echo "Bail out! the image did not build"; exit 1; }
M=$HUSK_CACHE/images/$IMG/manifest.json
got=$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
names = {p["name"]: p["version"] for p in m["packages"]}
print(m["requested"], "libc6" in names, "python3-numpy" in names, m["ld_so_cache"], m["python_bytecode"], len(m["disk_sha256"]))' "$M")
is "$got" "['python3-numpy'] True True True python3.11 64" \
	"the manifest: what was asked, the closure with versions, ld.so.cache, bytecode, the disk's digest"
want=$(dpkg-query -W -f '${Version}' python3-numpy 2>/dev/null)
got=$(python3 -c 'import json,sys; print([p["version"] for p in json.load(open(sys.argv[1]))["packages"] if p["name"] == "python3-numpy"][0])' "$M")
is "$got" "$want" "the package's version is the one apt gives the host"
"$HUSK" image build $IMG python3-numpy >"$TMP/again" 2>&1
is "$?:$(tail -1 "$TMP/again")" "0:husk: image $IMG: up to date ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["packages"]))' "$M") packages, as apt resolves them today); husk image rm $IMG rebuilds it" \
	"built again: found up to date in the cache"
"$HUSK" image ls >"$TMP/ls" 2>&1
ok $(awk -v n=$IMG '$1 == n && $2 > 20 && $NF == "python3-numpy" { f = 1 } END { exit !f }' "$TMP/ls" && echo 0 || echo 1) \
	"husk image ls lists it: packages, disk, what was asked"

# Runs: Debian's programs from the image's root.
got=$("$HUSK" run --image $IMG python3 -c 'import sys; print(sys.executable, sys.version_info[:2])' 2>&1)
is "$got" "/usr/bin/python3 (3, 11)" "Debian's python3 from the image, found on PATH"
prog='import numpy as np
a = np.arange(16.).reshape(4, 4) + np.eye(4) * 3
print(np.__version__, np.linalg.det(a).round(6), np.linalg.solve(a, np.ones(4)).round(9).tolist())
print(np.fft.fft(np.arange(8)).round(9).tolist())'
want=$(/usr/bin/python3 -c "$prog" 2>&1) # Debian's, with python3-numpy (install-deps)
got=$("$HUSK" run --image $IMG python3 -c "$prog" 2>&1)
is "$got" "$want" "numpy (OpenBLAS, LAPACK, FFT) gives what the host's gives"
got=$("$HUSK" run --image $IMG bash -c 'ls /usr/bin | wc -l' 2>&1)
ok $([ "$got" -gt 50 ] 2>/dev/null && echo 0 || echo 1) "bash -c 'ls /usr/bin | wc -l' (got $got)"
got=$("$HUSK" run --image $IMG dash -c '/bin/true; echo $?; ls /nonexistent 2>/dev/null; echo $?; id -un; cat /etc/hostname' 2>&1)
is "$got" "0
2
root
husk" "dash: external commands and their statuses, the image's /etc"
got=$("$HUSK" run --image $IMG sh -c 'readlink /bin /lib64; ls / | tr "\n" " "' 2>&1)
is "$got" "usr/bin
usr/lib64
bin boot data dev etc home lib lib64 proc root run sbin sys tmp usr var workdir " "Debian's merged /usr and the mount points"
got=$("$HUSK" run --image $IMG python3 -c 'import os; print(sorted(os.listdir("/dev")), open("/dev/null").read() == "", len(os.urandom(8)))' 2>&1)
is "$got" "['null', 'shm', 'urandom', 'zero'] True 8" "/dev is the kernel's, above the image"
got=$("$HUSK" run --image $IMG python3 -c 'open("/usr/x", "w")' 2>&1 | tail -1)
is "$got" "OSError: [Errno 30] Read-only file system: '/usr/x'" "the image is read-only"

got=$("$HUSK" run --image $IMG python3 -c '
import ctypes, errno, numpy as np
m = np.memmap("/tmp/x.dat", dtype="float32", mode="w+", shape=(3, 4))
m[:] = 1.5
m.flush()
del m
print(np.memmap("/tmp/x.dat", dtype="float32", mode="r", shape=(3, 4)).sum())
libc = ctypes.CDLL(None, use_errno=True)
for a, n, f in [(4096 * 1000, 4096, 4), (1, 4096, 4), (0, 0, 3), (0, 4096, 5)]:
    r = libc.msync(ctypes.c_void_p(a), ctypes.c_size_t(n), f)
    print(r, errno.errorcode.get(ctypes.get_errno()) if r else "")' 2>&1)
is "$got" "18.0
-1 ENOMEM
-1 EINVAL
0 
-1 EINVAL" "numpy.memmap written, flushed (msync) and read back; msync's errors as Linux's"

got=$("$HUSK" run --image $IMG python3 -c '
import numpy.core._multiarray_umath as m
flags = set(open("/proc/cpuinfo").read().split("flags\t\t:")[1].split("\n")[0].split())
pairs = [("SSE42", "sse4_2"), ("AVX", "avx"), ("F16C", "f16c"), ("FMA3", "fma"), ("AVX2", "avx2"), ("AVX512F", "avx512f")]
print([k for k, f in pairs if m.__cpu_features__[k] != (f in flags)], m.__cpu_features__["SSE42"])' 2>&1)
is "$got" "[] True" "/proc/cpuinfo's flags are what numpy finds usable (no AVX without the kernel's XSAVE)"

got=$("$HUSK" run --image $IMG python3 -c '
import ctypes
libc = ctypes.CDLL(None)
libc.getauxval.restype = ctypes.c_ulong
print([libc.getauxval(t) != 0 for t in (3, 6, 9, 16, 25, 31)], libc.getauxval(51) >= 2048)' 2>&1)
is "$got" "[True, True, True, True, True, True] True" \
	"glibc's auxiliary vector: AT_PHDR, AT_PAGESZ, AT_ENTRY, AT_HWCAP, AT_RANDOM, AT_EXECFN, AT_MINSIGSTKSZ (2048 or the frame with AVX-512 state)"

got=$("$HUSK" run -t 60 --net-loopback --image $IMG python3 -c '
import http.server, socket, threading, urllib.request
srv = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
r = urllib.request.urlopen(f"http://localhost:{srv.server_port}/")
print(socket.getaddrinfo("localhost", 80, socket.AF_INET)[0][4], socket.getservbyname("https"), r.status)' 2>/dev/null)
is "$got" "('127.0.0.1', 80) 443 200" "glibc's resolver and services in the image, an HTTP server and client on the guest's loopback"

# Files in and out: a host script, a dataset, the workdir.
printf 'import sys, os\nprint("script", sys.argv[1:], os.getcwd())\n' >"$TMP/s.py"
got=$("$HUSK" run --image $IMG python3 "$TMP/s.py" a b 2>&1)
is "$got" "script ['a', 'b'] /workdir" "python3 FILE.py: the host script copied in, as for the bundled python"
mkdir -p "$TMP/data" "$TMP/result"
printf '1\n2\n3\n' >"$TMP/data/n.txt"
got=$("$HUSK" run --image $IMG --ro d="$TMP/data" -w "$TMP/result" python3 -c '
import numpy as np
x = np.loadtxt("/data/d/n.txt")
np.savetxt("/workdir/sum.txt", [x.sum()])
print(x.mean())' 2>&1)
is "$got:$(cat "$TMP/result/sum.txt" 2>&1)" "2.0:6.000000000000000000e+00" "a dataset read, a result written back to the workdir"

"$HUSK" run --audit "$TMP/audit.jsonl" --image $IMG true
got=$(python3 -c '
import json, sys
start = json.loads(open(sys.argv[1]).readline())
m = json.load(open(sys.argv[2]))
print(start["image"], start["debian_image"]["name"], start["debian_image"]["disk_sha256"] == m["disk_sha256"])' \
	"$TMP/audit.jsonl" "$M" 2>&1)
is "$got" "true $IMG True" "the audit's start record names the command, the image and its disk's digest"

# The command's errors, as a shell's.
"$HUSK" run --image $IMG no-such-command >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "127:husk: no-such-command: command not found in the image's PATH" "a command not on PATH: 127"
"$HUSK" run --image $IMG /usr/bin/nothing-here >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "127:husk: /usr/bin/nothing-here: no such file in the image" "a path not in the image: 127"
"$HUSK" run --image $IMG /usr/share >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "126:husk: /usr/share: cannot run it (error 13)" "a directory: 126"
"$HUSK" run --image $IMG /etc/passwd >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "126:husk: /etc/passwd: cannot run it (error 13)" "a file that is not executable: 126"
"$HUSK" run --image no-such-image true >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "125:husk: no Debian image 'no-such-image' in $HUSK_CACHE/images (build it: husk image build no-such-image PACKAGE...; husk image ls lists them)" \
	"an image that was never built: one line, exit 125"
got=$("$HUSK" run --image $IMG -e PATH=/nowhere python3 -c 1 2>&1; echo "rc=$?")
is "$got" "husk: python3: command not found in the image's PATH
rc=127" "-e PATH is the one searched"

# Removal.
cp -r "$HUSK_CACHE/images/$IMG" "$HUSK_CACHE/images/t-copy"
"$HUSK" image rm t-copy >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out"):$(ls "$HUSK_CACHE/images" | grep -c copy)" "0::0" "husk image rm removes it"
"$HUSK" image rm t-copy >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "125:husk: no Debian image 't-copy' in $HUSK_CACHE/images" "removing what is not there: exit 125"
# glibc gives each thread that mallocs under contention an arena of its own,
# reserved as 128 MiB of PROT_NONE address space of which it uses what it
# mprotects: a reservation must not cost memory (it cost 64 MiB a thread).
mkdir -p "$TMP/mt"
cat > "$TMP/mt.c" << 'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_barrier_t b;
static void *run(void *a)
{
	void *p[1000];
	(void)a;
	pthread_barrier_wait(&b);
	for (int k = 0; k < 100; k++) {
		for (int i = 0; i < 1000; i++)
			p[i] = malloc(100);
		for (int i = 0; i < 1000; i++)
			free(p[i]);
	}
	return 0;
}
int main(void)
{
	pthread_t t[16];
	pthread_barrier_init(&b, 0, 16);
	for (int i = 0; i < 16; i++)
		if (pthread_create(&t[i], 0, run, 0))
			return 1;
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], 0);
	puts("16 threads done");
	return 0;
}
EOF
gcc -O2 -pthread -o "$TMP/mt/mt" "$TMP/mt.c" || echo "Bail out! cannot build a glibc program with gcc"
out=$("$HUSK" run -m 1G --stats -w "$TMP/mt" --image $IMG ./mt 2> "$TMP/err")
peak=$(sed -n 's/.*guest memory peak \([0-9]*\) KiB.*/\1/p' "$TMP/err")
[ "$out" = "16 threads done" ] && [ -n "$peak" ] && [ "$peak" -lt 131072 ]
ok $? "16 glibc threads mallocing at once (an arena each): the guest's memory peak stays small (${peak:-?} KiB; was 203 MB)"
done_testing
