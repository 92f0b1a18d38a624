#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# musl.sh: build our libc = Debian's musl 1.2.3 + musl-fastcall.patch, static
# only, installed to $BUILD/musl (lib/libc.a, crt*.o, include/, bin/musl-gcc),
# then check it: the wrapper points at $BUILD/musl, libc.a has the fast-entry
# call and the syscall fallback, a hello world and fastentry-test.c run here.
# Environment: BUILD (absolute), JOBS, DEBSRC (scripts/debsrc).  Logs go to
# $BUILD/src/work/musl/*.log.  Called by images/Makefile.
set -eu
die() { echo "musl.sh: $*" >&2; exit 1; }
: "${BUILD:?musl.sh: BUILD is not set}"
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
DEBSRC=${DEBSRC:-$here/../scripts/debsrc}
prefix=$BUILD/musl
work=$BUILD/src/work/musl

# musl's own make must not see our make's variables (e.g. BUILD) or jobserver.
unset MAKEFLAGS MFLAGS MAKEFILES MAKELEVEL MAKEOVERRIDES || true

src=$(sh "$DEBSRC" musl "$BUILD/src") || die "cannot get Debian's musl source"
# Patch a fresh copy: debsrc reuses its unpacked tree, which must stay pristine.
rm -rf "$work"
mkdir -p "$(dirname "$work")"
cp -a "$src" "$work"
cd "$work"
patch -p1 -s --forward <"$here/musl-fastcall.patch" >patch.log 2>&1 ||
	die "$here/musl-fastcall.patch does not apply to $src (see $work/patch.log)"

# --syslibdir: keep everything (even the unused dynamic linker path in the
# wrapper's specs) under $prefix; nothing is installed into /lib.
./configure --prefix="$prefix" --syslibdir="$prefix/lib" --disable-shared \
	--enable-wrapper=gcc >configure.log 2>&1 ||
	die "configure failed (see $work/configure.log)"
make -j"$JOBS" >build.log 2>&1 || { tail -n 20 build.log >&2; die "build failed (see $work/build.log)"; }
rm -rf "$prefix"
make install >install.log 2>&1 || { tail -n 20 install.log >&2; die "install failed (see $work/install.log)"; }

# --- checks ---
cc=$prefix/bin/musl-gcc
lib=$prefix/lib
[ -x "$cc" ] || die "$cc was not installed"
for f in libc.a crt1.o crti.o crtn.o musl-gcc.specs; do
	[ -f "$lib/$f" ] || die "$lib/$f was not installed"
done
grep -q "$lib/musl-gcc.specs" "$cc" || die "$cc does not use $lib/musl-gcc.specs"
grep -q -- "-isystem $prefix/include" "$lib/musl-gcc.specs" || die "musl-gcc.specs does not point at $prefix/include"
grep -q "$lib/crti.o" "$lib/musl-gcc.specs" || die "musl-gcc.specs does not point at $lib"

# Every patched path must load __sysinfo, call through it and keep `syscall`.
# (Debian's gcc makes PIC by default, so musl archives its .lo objects.)
mkdir -p objcheck
objdump -dr --no-show-raw-insn "$lib/libc.a" >objcheck/libc.dis 2>/dev/null ||
	die "objdump cannot read $lib/libc.a"
member() { # print the disassembly of archive member $1(.o|.lo)
	awk -v m="$1" '/^[^ ]+\.l?o: +file format/ { on = ($1 == m ".o:" || $1 == m ".lo:") }
		on' objcheck/libc.dis
}
for o in __syscall_cp getpid syscall_cp __set_thread_area; do
	member "$o" >"objcheck/$o.dis"
	[ -s "objcheck/$o.dis" ] || die "libc.a has no member $o.o"
	grep -q '__sysinfo' "objcheck/$o.dis" || die "$o.o does not read __sysinfo"
	grep -Eq '(call|jmp) +\*%' "objcheck/$o.dis" || die "$o.o has no call through __sysinfo"
	grep -Eq '[[:space:]]syscall *$' "objcheck/$o.dis" || die "$o.o lost its syscall fallback"
done
member write >objcheck/write.dis
grep -q '__syscall_cp' objcheck/write.dis || die "write() in libc.a does not go through __syscall_cp"

printf '#include <stdio.h>\nint main(void) { printf("hello from musl\\n"); return 0; }\n' >hello.c
"$cc" -static -O2 -o hello hello.c || die "musl-gcc cannot build a static hello world"
[ "$(./hello)" = "hello from musl" ] || die "static hello world does not print natively"
readelf -lW hello | grep -q INTERP && die "hello world has a PT_INTERP (not static)"
"$cc" -static -O2 -fno-omit-frame-pointer -o fastentry-test "$here/fastentry-test.c" ||
	die "cannot build fastentry-test.c"
./fastentry-test >fastentry.log || { cat fastentry.log >&2; die "fastentry-test failed"; }
grep -q '^fastentry ok$' fastentry.log || die "fastentry-test did not report ok"

touch "$prefix/.stamp"
echo "musl.sh: $prefix ready (fast-entry checks passed)"
