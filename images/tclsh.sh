#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tclsh.sh: a host (glibc) tclsh from Debian's tcl8.6 source, installed to
# $BUILD/host-tcl (bin/tclsh8.6 + its script library).  Only sqlite3's build
# needs it, to generate its amalgamation; images/Makefile calls this only when
# the host has no `tclsh` (it is not in scripts/install-deps).
# Environment: BUILD (absolute), JOBS, DEBSRC.
set -eu
die() { echo "tclsh.sh: $*" >&2; exit 1; }
: "${BUILD:?tclsh.sh: BUILD is not set}"
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
DEBSRC=${DEBSRC:-$here/../scripts/debsrc}
prefix=$BUILD/host-tcl
work=$BUILD/src/work/tcl

unset MAKEFLAGS MFLAGS MAKEFILES MAKELEVEL MAKEOVERRIDES || true
src=$(sh "$DEBSRC" tcl8.6 "$BUILD/src") || die "cannot get Debian's tcl8.6 source"
[ -x "$src/unix/configure" ] || die "$src/unix/configure missing"
rm -rf "$work" "$prefix"
mkdir -p "$work"
cd "$work"
# The host compiler on purpose: this tclsh runs only here, at build time.
CC=gcc "$src/unix/configure" --prefix="$prefix" --disable-shared \
	--disable-threads >configure.log 2>&1 || die "configure failed (see $work/configure.log)"
make -j"$JOBS" binaries >build.log 2>&1 || { tail -n 20 build.log >&2; die "build failed (see $work/build.log)"; }
make install-binaries install-libraries >install.log 2>&1 ||
	{ tail -n 20 install.log >&2; die "install failed (see $work/install.log)"; }
[ "$(echo 'puts [expr {6*7}]' | "$prefix/bin/tclsh8.6")" = 42 ] || die "$prefix/bin/tclsh8.6 does not run"
touch "$prefix/.stamp"
echo "tclsh.sh: $prefix/bin/tclsh8.6 ready"
