#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# python.sh: CPython 3.11 from Debian's python3.11 source (Debian patches
# applied) as a stripped static x86-64 ET_EXEC linked against our musl, with
# the stdlib C extension modules and most test modules built in (zlib, _bz2,
# _lzma and _sqlite3 use the static libs in $BUILD/musl-deps), to
# $BUILD/images/python.  The build tree $BUILD/src/work/python stays: pyzip.sh
# and pylib.sh take the stdlib (Lib/ + the generated _sysconfigdata) from it.
# Checks: static ET_EXEC, every syscall site uses the fast entry (syscheck.sh),
# the modules listed below are built in, and a module smoke test runs natively
# both plainly and through sysinfo-run.c (AT_SYSINFO in the auxv, as in the
# guest).  Environment: BUILD (absolute), JOBS, DEBSRC.  Called by
# images/Makefile.
set -eu
die() { echo "python.sh: $*" >&2; exit 1; }
: "${BUILD:?python.sh: BUILD is not set}"
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
DEBSRC=${DEBSRC:-$here/../scripts/debsrc}
cc=$BUILD/musl/bin/musl-gcc
deps=$BUILD/musl-deps
work=$BUILD/src/work/python
out=$BUILD/images

# CPython's make must not see our make's variables or jobserver, and neither
# the build nor the checks may pick up the host's Python settings.
unset MAKEFLAGS MFLAGS MAKEFILES MAKELEVEL MAKEOVERRIDES || true
for v in $(env | sed -n 's/^\(PYTHON[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

[ -x "$cc" ] || die "$cc missing (build musl first)"
for l in libz libbz2 liblzma libsqlite3; do
	[ -f "$deps/lib/$l.a" ] || die "$deps/lib/$l.a missing (run deps.sh first)"
done
src=$(sh "$DEBSRC" python3.11 "$BUILD/src") || die "cannot get Debian's python3.11 source"
[ -x "$src/configure" ] || die "$src/configure missing"
# Build in a copy: debsrc reuses its unpacked tree, which must stay pristine.
rm -rf "$work"
mkdir -p "$(dirname "$work")" "$out"
cp -a "$src" "$work"
cd "$work"

# gcc --print-multiarch says x86_64-linux-gnu but configure's own probe of
# musl-gcc says x86_64-linux-musl -> "internal configure error for the
# platform triplet".  Drop the probe; MULTIARCH then follows the triplet.
sed -i 's/^\( *\)MULTIARCH=\$(\$CC --print-multiarch 2>\/dev\/null)$/\1MULTIARCH=/' configure
grep -q 'MULTIARCH=$($CC --print-multiarch' configure && die "could not remove the --print-multiarch probe from configure"

# MODULE_BUILDTYPE=static: Modules/Setup.stdlib lists the stdlib extensions
# as *static* (built into the interpreter).  Only our static libs may be found,
# through pkg-config or otherwise; PYTHON_FOR_REGEN=false: never run a host
# Python (a needed regeneration fails loudly instead).
PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig MODULE_BUILDTYPE=static \
./configure CC="$cc" CPPFLAGS="-I$deps/include" LDFLAGS="-L$deps/lib -static" \
	PYTHON_FOR_REGEN=false \
	--prefix=/usr --disable-shared --enable-test-modules --without-ensurepip \
	--without-system-expat --without-system-libmpdec \
	--with-builtin-hashlib-hashes=md5,sha1,sha256,sha512,sha3,blake2 \
	>configure.log 2>&1 || { tail -n 20 configure.log >&2; die "configure failed (see $work/configure.log)"; }

# On Linux, 3.11 builds the stdlib extensions as shared objects with setup.py
# (useless without dlopen) and uses Modules/Setup.stdlib only on WASM.  Feed
# it to makesetup as Setup.local, without its *shared* section.
[ -f Modules/Setup.stdlib ] || die "configure did not write Modules/Setup.stdlib"
# The built-in test modules (_testcapi, _testbuffer, _testclinic, _xxtestfuzz;
# about 180 KB) are kept for CPython's regression tests, e.g. test_sqlite3
# imports _testcapi.  Not _testinternalcapi: it needs getpath.o, which
# Programs/_freeze_module (linked with every built-in module) replaces.
sed -e '/^\*shared\*/,$d' -e '/^_testinternalcapi /d' Modules/Setup.stdlib >Modules/Setup.local
make Makefile >makesetup.log 2>&1 || { tail -n 20 makesetup.log >&2; die "makesetup failed (see $work/makesetup.log)"; }

# LINKFORSHARED: no -export-dynamic (nothing can be dlopened).
# pybuilddir.txt generates build/lib.*/_sysconfigdata_*.py for the stdlib.
make -j"$JOBS" LINKFORSHARED=" " python >build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "build failed (see $work/build.log)"; }
make LINKFORSHARED=" " pybuilddir.txt >>build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "generating _sysconfigdata failed (see $work/build.log)"; }
ls "$work/$(cat pybuilddir.txt)"/_sysconfigdata_*.py >/dev/null 2>&1 ||
	die "no _sysconfigdata_*.py in $work/$(cat pybuilddir.txt)"

# --- checks, then install atomically ---
sh "$here/syscheck.sh" python || die "python does not use our musl's fast entry (see above)"
strip -o python.stripped python
readelf -hW python.stripped | grep -q 'Type: *EXEC' || die "python is not an ET_EXEC"
readelf -lW python.stripped | grep -q INTERP && die "python has a PT_INTERP"
if command -v file >/dev/null; then
	file -b python.stripped | grep -q 'statically linked' || die "file(1) does not call python statically linked"
fi
# Built in, not importable from disk: these must be in sys.builtin_module_names.
MODS="array _asyncio _bisect _blake2 _bz2 cmath _codecs_cn _codecs_hk
 _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _contextvars _crypt _csv
 _datetime _decimal _elementtree fcntl grp _heapq _json _lsprof _lzma math
 _md5 mmap _multibytecodec _multiprocessing _opcode _pickle _posixshmem
 _posixsubprocess pyexpat _queue _random resource select _sha1 _sha256 _sha3
 _sha512 _socket spwd _sqlite3 _statistics _struct syslog termios _typing
 unicodedata _xxsubinterpreters xxsubtype zlib _zoneinfo audioop
 _testcapi _testbuffer _testclinic _xxtestfuzz"
# The stripped binary, run from the build tree, finds Lib/ there (build-dir
# landmark Modules/Setup.local); cp keeps it next to Modules/.
cp python.stripped python-check
missing=$(./python-check -I -c '
import sys
print(*sorted(set(sys.argv[1].split()) - set(sys.builtin_module_names)))' "$MODS") ||
	die "the stripped python does not run natively"
[ -z "$missing" ] || die "modules not built in: $missing (see $work/build.log and Modules/Setup.local)"
smoke='
import sqlite3, zlib, lzma, bz2, decimal, json, csv, unicodedata, hashlib
c = sqlite3.connect(":memory:")
n = c.execute("select sum(value) from json_each(?)", (json.dumps([1, 2, 3]),)).fetchone()[0]
data = b"husk" * 1000
assert zlib.decompress(zlib.compress(data)) == data
assert lzma.decompress(lzma.compress(data)) == data
assert bz2.decompress(bz2.compress(data)) == data
print(n + int(decimal.Decimal("0.5") * 2) + len(hashlib.sha3_256(data).digest()))'
r=$(./python-check -I -c "$smoke") || die "the stripped python cannot use its built-in modules natively"
[ "$r" = 39 ] || die "module smoke test printed '$r', expected 39"
# The same with the fast entry in use, as in the guest (AT_SYSINFO, no vDSO).
gcc -O2 -Wall -fno-stack-protector -o sysinfo-run "$here/sysinfo-run.c" >sysinfo-run.log 2>&1 ||
	{ cat sysinfo-run.log >&2; die "cannot build $here/sysinfo-run.c"; }
r=$(./sysinfo-run "$work/python-check" -I -c "$smoke" 2>fastentry.log) ||
	{ cat fastentry.log >&2; die "python fails natively with AT_SYSINFO (fast entry) in its auxv"; }
[ "$r" = 39 ] || die "module smoke test through the fast entry printed '$r', expected 39"
n=$(sed -n 's/^sysinfo-run: \([0-9]*\) system calls through AT_SYSINFO$/\1/p' fastentry.log)
[ "${n:-0}" -gt 100 ] || die "python made ${n:-no} system calls through the fast entry (see $work/fastentry.log)"
rm -f python-check
mv -f python.stripped "$out/python"
echo "python.sh: $out/python ready ($(wc -c <"$out/python") bytes)"
