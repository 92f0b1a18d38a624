#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Dynamically linked programs exec'd in the guest (guest/proc/exec.c loads
# PT_INTERP's interpreter above the program, AT_BASE says where): a program
# built with Debian's musl-gcc against a shared library of its own, with
# Debian's musl dynamic loader as its interpreter, all in the workdir, run
# by the bundled Python's subprocess; then what an exec must refuse; then
# Debian's own glibc programs (this host's /bin/ls, cat, dash and their
# libraries, unmodified) through glibc's dynamic loader run as a program.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 12
W=$TMP/w
mkdir -p "$W"
D=$ROOT/tests/progs/dynamic
LDSO=/usr/lib/x86_64-linux-musl/libc.so
if ! musl-gcc -shared -fPIC -o "$W/libgreet.so" "$D/greet.c" ||
	! musl-gcc -o "$W/dyn" "$D/main.c" -L"$W" -lgreet -Wl,-rpath,/workdir \
		-Wl,--dynamic-linker=/workdir/ld-musl-x86_64.so.1 || [ ! -f "$LDSO" ]; then
	echo "Bail out! cannot build the dynamic test program with musl-gcc (musl-tools) or find $LDSO"
	exit 1
fi
cp "$LDSO" "$W/ld-musl-x86_64.so.1"
run() { "$HUSK" run -t 60 -w "$W" python -c "$1" 2>&1; }

got=$(run '
import subprocess
r = subprocess.run(["/workdir/dyn", "guest"], capture_output=True, text=True)
print(r.returncode, r.stdout + r.stderr, end="")')
is "$got" "0 hello, guest, from a shared library
hello, dlopen, from a shared library
auxv: AT_BASE set, AT_ENTRY set, AT_PHDR's first type 6
heap 1" "a dynamic program runs: its library (DT_NEEDED, rpath), dlopen, AT_BASE/AT_ENTRY/AT_PHDR, its heap"

got=$(run '
import subprocess
r = subprocess.run(["/workdir/dyn", "twice", "/workdir/nothing.so"], capture_output=True, text=True)
print(r.returncode, r.stdout.splitlines()[1])')
is "$got" "0 dlopen: Error loading shared library /workdir/nothing.so: No such file or directory" \
	"dlopen of a file that is not there: the loader's own error, the program goes on"

# What an exec refuses: the errors Linux gives.
# variant NAME INTERP: a copy of dyn whose interpreter path is INTERP (no
# longer than the original's; "-" for the original's cut one byte short,
# without its NUL)
variant() {
	cp "$W/dyn" "$W/$1"
	python3 - "$W/$1" "$2" <<'EOS'
import struct, sys
p, new = sys.argv[1], sys.argv[2]
b = bytearray(open(p, "rb").read())
old = b"/workdir/ld-musl-x86_64.so.1\0"
i = b.find(old)
if new != "-":
    b[i:i + len(old)] = new.encode().ljust(len(old), b"\0")
else:
    phoff, = struct.unpack_from("<Q", b, 32)
    phnum, = struct.unpack_from("<H", b, 56)
    for k in range(phnum):
        o = phoff + 56 * k
        if struct.unpack_from("<I", b, o)[0] == 3:  # PT_INTERP
            struct.pack_into("<Q", b, o + 32, struct.unpack_from("<Q", b, o + 32)[0] - 1)
open(p, "wb").write(b)
EOS
}
variant no-interp /workdir/ld-missing-here.so
variant interp-dir /workdir
variant interp-unterminated -
variant interp-is-dynamic /workdir/dyn
chmod +x "$W"/no-interp "$W"/interp-*
got=$(run '
import errno, subprocess
for p in ("no-interp", "interp-dir", "interp-unterminated", "interp-is-dynamic"):
    try:
        subprocess.run(["/workdir/" + p]); print(p, "ran")
    except OSError as e:
        print(p, errno.errorcode[e.errno])')
is "$(echo "$got" | sed -n 1p)" "no-interp ENOENT" "an interpreter that is not there: ENOENT, as Linux"
is "$(echo "$got" | sed -n 2p)" "interp-dir EACCES" "an interpreter that is a directory: EACCES"
is "$(echo "$got" | sed -n 3p)" "interp-unterminated ENOEXEC" "PT_INTERP's path without its NUL: ENOEXEC"
is "$(echo "$got" | sed -n 4p)" "interp-is-dynamic ENOEXEC" "an interpreter that has an interpreter itself: ENOEXEC"
got=$("$HUSK" run -w "$W" "$W/dyn" 2>&1; echo "status $?")
is "$got" "husk: $W/dyn: dynamically linked (has an interpreter); husk runs static executables
status 125" "husk run of a dynamic program from the host: still one clear line, 125 (its interpreter is in no image yet)"
# Debian's glibc programs, as the host has them, run by its ld.so
# (--library-path: the libraries sit in the dataset, not at their paths).
G=$TMP/glibc
mkdir -p "$G/lib"
cp /lib64/ld-linux-x86-64.so.2 "$G/ld.so"
for b in /bin/ls /bin/cat /bin/dash; do
	cp "$b" "$G/"
	for l in $(ldd "$b" | awk '/=>/ { print $3 }'); do cp -n "$l" "$G/lib/"; done
done
printf 'a line of text\n' > "$G/text"
glibc() { # PROGRAM ARGS...: its status, stdout and stderr in husk
	"$HUSK" run -t 60 --ro deb="$G" python -c '
import subprocess, sys
r = subprocess.run(["/data/deb/ld.so", "--library-path", "/data/deb/lib"] + sys.argv[1:], capture_output=True, text=True)
print(r.returncode, r.stdout + r.stderr, end="")' "$@" 2>&1
}
is "$(glibc /data/deb/ls -1a /data/deb)" "0 $(ls -1a "$G")" "Debian's ls (glibc) lists the dataset as the host's does"
is "$(glibc /data/deb/ls -la /data/deb | grep -c 'not implemented')" "0" \
	"ls -la: no call it makes fails (statx; its ACL look, lgetxattr, finds none: ENODATA)"
is "$(glibc /data/deb/dash -c 'x=$(/data/deb/ld.so --library-path /data/deb/lib /data/deb/cat /data/deb/text); echo "$x" | while read w rest; do echo "$w|$rest"; done; exit 3')" \
	"3 a|line of text" "Debian's dash runs a pipeline with Debian's cat (fork, exec through ld.so, pipes), exit 3"
# Debian's python3.11 (glibc, ET_EXEC at 0x400000) exec'd with its PT_INTERP
# pointing at glibc's loader in a dataset: the program at its address, the
# loader above it, the standard library from PYTHONHOME.
P=$TMP/pydeb
mkdir -p "$P/lib" "$P/home/lib"
cp /lib64/ld-linux-x86-64.so.2 "$P/ld.so"
for l in $(ldd /usr/bin/python3.11 | awk '/=>/ { print $3 }'); do cp -n "$l" "$P/lib/"; done
(cd /usr/lib && tar cf - --exclude=test --exclude=dist-packages --exclude=idlelib --exclude=tkinter \
	--exclude=lib2to3 --exclude=ensurepip --exclude=pydoc_data python3.11) | (cd "$P/home/lib" && tar xf -)
python3 - /usr/bin/python3.11 "$P/python3" <<'EOS'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
old = b"/lib64/ld-linux-x86-64.so.2\0"
i = b.find(old)
b[i:i + len(old)] = b"/data/pydeb/ld.so\0".ljust(len(old), b"\0")
open(sys.argv[2], "wb").write(b)
EOS
chmod +x "$P/python3"
code='import sys, json, collections, re; print(sys.version.split()[0], json.dumps(collections.Counter(re.findall("[a-z]+", "a b a c b a")).most_common()))'
got=$("$HUSK" run -t 60 --ro pydeb="$P" python -c '
import subprocess, sys
r = subprocess.run(["/data/pydeb/python3", "-c", sys.argv[1]], capture_output=True, text=True,
                   env={"PYTHONHOME": "/data/pydeb/home", "LD_LIBRARY_PATH": "/data/pydeb/lib"})
print(r.returncode, r.stdout + r.stderr, end="")' "$code" 2>&1)
is "$got" "0 $(/usr/bin/python3.11 -c "$code")" "Debian's own python3.11 (glibc) runs in the guest as on the host"

# and Debian's numpy (python3-numpy: C extensions, BLAS and LAPACK as shared
# libraries the loader finds, dlopen'd by the import)
mkdir -p "$P/dist"
cp -r /usr/lib/python3/dist-packages/numpy "$P/dist/"
for so in $(find /usr/lib/python3/dist-packages/numpy -name '*.so'); do
	for l in $(ldd "$so" | awk '/=>/ { print $3 }'); do cp -nL "$l" "$P/lib/"; done
done
code='import numpy as np; a = np.arange(12.).reshape(3, 4); print(np.__version__, a.sum(), (a @ a.T).trace(), np.linalg.det(np.array([[2., 1.], [1., 3.]])), np.linalg.solve([[3., 1.], [1., 2.]], [9., 8.]))'
got=$("$HUSK" run -t 60 --ro pydeb="$P" python -c '
import subprocess, sys
r = subprocess.run(["/data/pydeb/python3", "-c", sys.argv[1]], capture_output=True, text=True,
                   env={"PYTHONHOME": "/data/pydeb/home", "LD_LIBRARY_PATH": "/data/pydeb/lib", "PYTHONPATH": "/data/pydeb/dist"})
print(r.returncode, r.stdout + r.stderr, end="")' "$code" 2>&1)
is "$got" "0 $(/usr/bin/python3.11 -c "$code")" "Debian's numpy in Debian's python3.11 in the guest: linear algebra as on the host"
done_testing
