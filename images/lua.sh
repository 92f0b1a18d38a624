#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# lua.sh: Lua 5.4 from Debian's lua5.4 source (Debian patches applied) as a
# stripped static x86-64 ET_EXEC, linked against our musl ($BUILD/musl), to
# $BUILD/images/lua.  Debian's src/Makefile is rewritten for libtool and a
# shared liblua, so compile the sources directly with upstream `make posix`
# flags.  Environment: BUILD (absolute), JOBS, DEBSRC.  Called by images/Makefile.
set -eu
die() { echo "lua.sh: $*" >&2; exit 1; }
: "${BUILD:?lua.sh: BUILD is not set}"
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
DEBSRC=${DEBSRC:-$here/../scripts/debsrc}
cc=$BUILD/musl/bin/musl-gcc
work=$BUILD/src/work/lua
out=$BUILD/images

[ -x "$cc" ] || die "$cc missing (build musl first)"
src=$(sh "$DEBSRC" lua5.4 "$BUILD/src") || die "cannot get Debian's lua5.4 source"
[ -f "$src/src/lua.c" ] || die "$src/src/lua.c missing"
rm -rf "$work"
mkdir -p "$work" "$out"
cd "$work"

# Debian's luaconf.h includes this header, which debian/rules generates.
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-musl"' >lua5.4-deb-multiarch.h

CORE="lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes
 lparser lstate lstring ltable ltm lundump lvm lzio"
LIB="lauxlib lbaselib lcorolib ldblib liolib lmathlib loadlib loslib lstrlib
 ltablib lutf8lib linit"
CFLAGS="-std=gnu99 -O2 -Wall -Wextra -DLUA_COMPAT_5_3 -DLUA_USE_POSIX -I. -I$src/src"
for f in $CORE $LIB lua; do echo "$f"; done |
	xargs -P "$JOBS" -I{} "$cc" $CFLAGS -c "$src/src/{}.c" -o {}.o >build.log 2>&1 ||
	{ tail -n 20 build.log >&2; die "compile failed (see $work/build.log)"; }
objs=
for f in $CORE $LIB; do objs="$objs $f.o"; done
"$cc" -static -o lua lua.o $objs -lm >>build.log 2>&1 ||
	{ tail -n 20 build.log >&2; die "link failed (see $work/build.log)"; }
strip -o lua.stripped lua

# --- checks, then install atomically ---
# Every function with a `syscall` instruction must also read __sysinfo and
# call through it, except those musl-fastcall.patch deliberately leaves alone.
sysinfo=$(nm lua | awk '$3 == "__sysinfo" { print $1 }')
[ -n "$sysinfo" ] || die "lua does not contain musl's __sysinfo (not linked against our musl?)"
objdump -d --no-show-raw-insn lua | awk -v a="$(printf %x "0x$sysinfo")" '
	function done() { if (sc && !(ld && ic)) print f }
	/^[0-9a-f]+ <.*>:$/ { done(); f = $2; sc = ld = ic = 0; next }
	/\tsyscall/ { sc++ }
	index($0, "# " a " <__sysinfo>") { ld++ }
	/(call|jmp) +\*%/ { ic++ }
	END { done() }' >rawsyscalls.txt
bad=$(grep -Ev '^<(__clone|__restore_rt|vfork|__unmapself)>:$' rawsyscalls.txt || true)
[ -z "$bad" ] || die "syscall instructions without the fast entry in:" $bad
[ "$(./lua.stripped -e 'print(1+1)')" = 2 ] || die "lua -e 'print(1+1)' does not print 2 natively"
readelf -hW lua.stripped | grep -q 'Type: *EXEC' || die "lua is not an ET_EXEC"
readelf -lW lua.stripped | grep -q INTERP && die "lua has a PT_INTERP"
if command -v file >/dev/null; then
	file -b lua.stripped | grep -q 'statically linked' || die "file(1) does not call lua statically linked"
fi
mv -f lua.stripped "$out/lua"
echo "lua.sh: $out/lua ready ($(wc -c <"$out/lua") bytes)"
