#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# deps.sh LIB: one C library CPython's stdlib modules need, from its Debian
# source package (Debian patches applied), as a static library built with our
# musl-gcc, installed to $BUILD/musl-deps (lib/, include/, lib/pkgconfig/).
#   zlib -> libz.a   bzip2 -> libbz2.a   xz -> liblzma.a   sqlite3 -> libsqlite3.a
# Each is checked by linking and running a static test program against it.
# Environment: BUILD (absolute), JOBS, DEBSRC, and TCLSH (sqlite3 only: the
# amalgamation is generated with Tcl scripts).  Called by images/Makefile.
set -eu
lib=${1:-}
die() { echo "deps.sh${lib:+ $lib}: $*" >&2; exit 1; }
: "${BUILD:?deps.sh: BUILD is not set}"
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
DEBSRC=${DEBSRC:-$here/../scripts/debsrc}
cc=$BUILD/musl/bin/musl-gcc
prefix=$BUILD/musl-deps
work=$BUILD/src/work/deps-$lib

# Package builds must not see our make's variables (sqlite's Makefile has its
# own TOP, ...) or its jobserver.
unset MAKEFLAGS MFLAGS MAKEFILES MAKELEVEL MAKEOVERRIDES || true
[ -x "$cc" ] || die "$cc missing (build musl first)"
case $lib in
zlib) pkg=zlib ;; bzip2) pkg=bzip2 ;; xz) pkg=xz-utils ;; sqlite3) pkg=sqlite3 ;;
*) die "usage: deps.sh zlib|bzip2|xz|sqlite3" ;;
esac
src=$(sh "$DEBSRC" "$pkg" "$BUILD/src") || die "cannot get Debian's $pkg source"
rm -rf "$work" "$prefix/.$lib"
mkdir -p "$work" "$prefix/lib/pkgconfig" "$prefix/include"
cd "$work"
fail() { [ -f "$2" ] && tail -n 20 "$2" >&2; die "$1 failed (see $work/$2)"; }
CFLAGS="-O2"
# Our musl is static only: configure's test programs must be linked -static
# or they cannot run ("cannot run C compiled programs").
LDFLAGS="-static"

case $lib in
zlib)
	# configure only works in the source tree: build in a copy.
	cp -a "$src/." .
	CC=$cc CFLAGS=$CFLAGS ./configure --static --prefix="$prefix" >configure.log 2>&1 || fail configure configure.log
	make -j"$JOBS" libz.a >build.log 2>&1 || fail build build.log
	make install >install.log 2>&1 || fail install install.log
	hdr='#include <zlib.h>' call='zlibVersion()' libs=-lz
	;;
bzip2)
	cp -a "$src/." .
	make -j"$JOBS" CC="$cc" CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64" libbz2.a >build.log 2>&1 || fail build build.log
	cp libbz2.a "$prefix/lib/"
	cp bzlib.h "$prefix/include/"
	# CPython's configure asks pkg-config first.
	cat >"$prefix/lib/pkgconfig/bzip2.pc" <<-EOF
		prefix=$prefix
		Name: bzip2
		Description: bzip2 compression library (static, musl)
		Version: $(echo "$src" | sed 's/.*bzip2-//')
		Libs: -L\${prefix}/lib -lbz2
		Cflags: -I\${prefix}/include
	EOF
	hdr='#include <stdio.h>
#include <bzlib.h>' call='BZ2_bzlibVersion()' libs=-lbz2
	;;
xz)
	CC=$cc CFLAGS=$CFLAGS LDFLAGS=$LDFLAGS "$src/configure" --prefix="$prefix" --disable-shared --enable-static \
		--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links \
		--disable-scripts --disable-doc --disable-nls >configure.log 2>&1 || fail configure configure.log
	make -j"$JOBS" -C src/liblzma >build.log 2>&1 || fail build build.log
	make -C src/liblzma install >install.log 2>&1 || fail install install.log
	hdr='#include <lzma.h>' call='lzma_version_string()' libs=-llzma
	;;
sqlite3)
	tclsh=${TCLSH:-tclsh}
	command -v "$tclsh" >/dev/null || die "no tclsh ($tclsh) to generate the amalgamation (apt-get install tcl, or let images/Makefile build one)"
	# No dlopen in a static binary: leave extension loading out.
	CC=$cc CFLAGS="$CFLAGS -DSQLITE_OMIT_LOAD_EXTENSION" LDFLAGS=$LDFLAGS "$src/configure" --prefix="$prefix" \
		--disable-shared --enable-static --disable-tcl --disable-readline --disable-editline \
		--disable-load-extension --enable-threadsafe >configure.log 2>&1 || fail configure configure.log
	# Generators (lemon, mkkeywordhash, ...) run here: host gcc, and
	# CROSS_BUILDING=yes so Debian's 30-cross.patch builds lemon with BCC too.
	tools="TCLSH_CMD=$tclsh BCC=gcc CROSS_BUILDING=yes"
	make -j"$JOBS" $tools sqlite3.c >build.log 2>&1 || fail "amalgamation" build.log
	make -j"$JOBS" $tools libsqlite3.la >>build.log 2>&1 || fail build build.log
	cp .libs/libsqlite3.a "$prefix/lib/"
	cp sqlite3.h "$src/src/sqlite3ext.h" "$prefix/include/"
	make $tools sqlite3.pc >>build.log 2>&1 || fail sqlite3.pc build.log
	cp sqlite3.pc "$prefix/lib/pkgconfig/"
	hdr='#include <sqlite3.h>' call='sqlite3_libversion()' libs='-lsqlite3 -lm'
	;;
esac

# --- check: a static program using the library links and runs here ---
printf '%s\n#include <stdio.h>\nint main(void) { printf("%%s\\n", %s); return 0; }\n' "$hdr" "$call" >check.c
"$cc" -static -O2 -I"$prefix/include" -o check check.c -L"$prefix/lib" $libs >check.log 2>&1 ||
	fail "linking a test program against $prefix/lib" check.log
v=$(./check) && [ -n "$v" ] || die "test program linked against the $lib library does not run"
touch "$prefix/.$lib"
echo "deps.sh: $lib $v ready in $prefix"
