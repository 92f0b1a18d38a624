#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# python.sh: CPython 3.11 from Debian's python3.11 source (Debian patches
# applied) as a stripped static x86-64 ET_EXEC linked against our musl, with
# the stdlib C extension modules and most test modules built in (zlib, _bz2,
# _lzma, _sqlite3, _ctypes (libffi), readline (libedit), _curses and
# _curses_panel (ncursesw), _ssl and _hashlib (OpenSSL) use the static libs
# in $BUILD/musl-deps), and dlopen(NULL)/dlsym over a table of its own
# global symbols (husk-dl.c), to $BUILD/images/python.  The build tree
# $BUILD/src/work/python stays: pyzip.sh and pylib.sh take the stdlib (Lib/
# + the generated _sysconfigdata) from it.
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
for l in libz libbz2 liblzma libsqlite3 libffi libncursesw libpanelw libedit libssl libcrypto; do
	[ -f "$deps/lib/$l.a" ] || die "$deps/lib/$l.a missing (run deps.sh first)"
done
src=$(sh "$DEBSRC" python3.11 "$BUILD/src") || die "cannot get Debian's python3.11 source"
[ -x "$src/configure" ] || die "$src/configure missing"
# Build in a copy: debsrc reuses its unpacked tree, which must stay pristine.
rm -rf "$work"
mkdir -p "$(dirname "$work")" "$out"
cp -a "$src" "$work"
cd "$work"
# The readline module where a terminal's settings cannot be read (the guest):
# plain reading with the prompt, not libedit without one (python-readline.patch).
patch -p1 --no-backup-if-mismatch <"$here/python-readline.patch" >patch.log 2>&1 ||
	{ cat patch.log >&2; die "python-readline.patch does not apply"; }
# The interpreter's snapshot point (python-snapshot.patch, Modules/main.c):
# under husk, a snapshot's boot stops once python is initialised; the runs go
# on from there with their own argv and environment, and at exit tear down
# only the modules they imported (Python/pylifecycle.c).
patch -p1 --no-backup-if-mismatch <"$here/python-snapshot.patch" >>patch.log 2>&1 ||
	{ cat patch.log >&2; die "python-snapshot.patch does not apply"; }

# gcc --print-multiarch says x86_64-linux-gnu but configure's own probe of
# musl-gcc says x86_64-linux-musl -> "internal configure error for the
# platform triplet".  Drop the probe; MULTIARCH then follows the triplet.
sed -i 's/^\( *\)MULTIARCH=\$(\$CC --print-multiarch 2>\/dev\/null)$/\1MULTIARCH=/' configure
grep -q 'MULTIARCH=$($CC --print-multiarch' configure && die "could not remove the --print-multiarch probe from configure"

# MODULE_BUILDTYPE=static: Modules/Setup.stdlib lists the stdlib extensions
# as *static* (built into the interpreter).  Only our static libs may be found,
# through pkg-config or otherwise; PYTHON_FOR_REGEN=false: never run a host
# Python (a needed regeneration fails loudly instead).
# The ncursesw headers (curses.h, term.h, panel.h) are in include/ncursesw:
# configure's curses checks must see them.  --with-readline=editline: the
# readline module over libedit (BSD), not GNU readline (GPL-3.0+), which
# would put this binary under the GPL-3.  OpenSSL is found through its
# openssl.pc (static libssl.a, libcrypto.a).
PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig MODULE_BUILDTYPE=static \
./configure CC="$cc" CPPFLAGS="-I$deps/include -I$deps/include/ncursesw" LDFLAGS="-L$deps/lib -static" \
	PYTHON_FOR_REGEN=false \
	--prefix=/usr --disable-shared --enable-test-modules --without-ensurepip --with-readline=editline \
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
# _ctypes, readline, _curses and _curses_panel are left to setup.py in 3.11
# (Setup.stdlib has them commented out): the same sources and the defines
# setup.py would use, against libffi, libedit and ncursesw from $deps (no
# -DX=1: makesetup takes a line with '=' for a make variable).
grep -q 'define HAVE_LIBREADLINE 1' pyconfig.h && grep -q 'define WITH_EDITLINE 1' pyconfig.h ||
	die "configure did not find libedit (see $work/configure.log)"
grep -q 'define HAVE_NCURSES_H 1' pyconfig.h || die "configure did not find ncurses.h (see $work/configure.log)"
grep -q '^_ssl ' Modules/Setup.local && grep -q '^_hashlib ' Modules/Setup.local ||
	die "configure did not find OpenSSL for _ssl and _hashlib (see $work/configure.log)"
cat >>Modules/Setup.local <<EOF
_ctypes _ctypes/_ctypes.c _ctypes/callbacks.c _ctypes/callproc.c _ctypes/stgdict.c _ctypes/cfield.c -DHAVE_FFI_PREP_CIF_VAR -DHAVE_FFI_PREP_CLOSURE_LOC -DHAVE_FFI_CLOSURE_ALLOC -lffi
readline readline.c -ledit -lncursesw
_curses _cursesmodule.c -DHAVE_NCURSESW -lncursesw
_curses_panel _curses_panel.c -DHAVE_NCURSESW -lpanelw -lncursesw
EOF
make Makefile >makesetup.log 2>&1 || { tail -n 20 makesetup.log >&2; die "makesetup failed (see $work/makesetup.log)"; }

# LINKFORSHARED: no -export-dynamic (nothing can be dlopened).
# pybuilddir.txt generates build/lib.*/_sysconfigdata_*.py for the stdlib.
make -j"$JOBS" LINKFORSHARED=" " python >build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "build failed (see $work/build.log)"; }
make LINKFORSHARED=" " pybuilddir.txt >>build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "generating _sysconfigdata failed (see $work/build.log)"; }
ls "$work/$(cat pybuilddir.txt)"/_sysconfigdata_*.py >/dev/null 2>&1 ||
	die "no _sysconfigdata_*.py in $work/$(cat pybuilddir.txt)"

# dlopen/dlsym over the binary's own symbols (husk-dl.c): ctypes needs
# dlopen(NULL) to import at all, and CDLL(None).qsort to find libc's qsort.
# Link once with an empty table, list the global symbols (nm), link again
# with that table.  Its references are weak, so they pull no archive member
# in (a strong one could pick another member, e.g. aio.o for __aio_close
# over close.o's weak dummy): the second link has the same symbols (checked).
"$cc" -O2 -Wall -Werror -c -o husk-dl.o "$here/husk-dl.c" || die "cannot compile $here/husk-dl.c"
symtab() { # symtab NM-OUTPUT: the table as assembly, sorted by name (strcmp order)
	awk '$2 ~ /^[TDBRWV]$/ && $3 != "husk_syms" && $3 != "husk_nsyms" { print $3 }' "$1" | LC_ALL=C sort -u | awk '
	BEGIN { print "\t.section .rodata.husk_syms,\"a\"\n\t.balign 8\n\t.globl husk_syms\nhusk_syms:" }
	{ t = $1; if (t ~ /^dl(open|sym|close|error)$/) t = "__wrap_" t   # callers get the wrappers
	  printf "\t.weak %s\n\t.quad .Lhs%d, %s\n", t, NR, t; names[NR] = $1 }
	END { printf "\t.globl husk_nsyms\n\t.balign 8\nhusk_nsyms:\n\t.quad %d\n", NR
	      print "\t.section .rodata.husk_names,\"a\""
	      for (i = 1; i <= NR; i++) printf ".Lhs%d:\t.asciz \"%s\"\n", i, names[i]
	      print "\t.section .note.GNU-stack,\"\",@progbits" }'
}
: >empty.nm
symtab empty.nm >husk-syms0.s
"$cc" -c -o husk-syms0.o husk-syms0.s || die "cannot assemble the empty symbol table"
wrap="-Wl,--wrap=dlopen,--wrap=dlsym,--wrap=dlclose,--wrap=dlerror"
rm -f python
make LINKFORSHARED="$wrap $work/husk-dl.o $work/husk-syms0.o" python >>build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "linking python with husk-dl.o failed (see $work/build.log)"; }
nm -g --defined-only python >pass1.nm
symtab pass1.nm >husk-syms.s
"$cc" -c -o husk-syms.o husk-syms.s || die "cannot assemble the symbol table"
rm -f python
make LINKFORSHARED="$wrap $work/husk-dl.o $work/husk-syms.o" python >>build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "linking python with its symbol table failed (see $work/build.log)"; }
nm -g --defined-only python >pass2.nm
[ "$(awk '{ print $3 }' pass1.nm | sort)" = "$(awk '{ print $3 }' pass2.nm | sort)" ] ||
	die "the symbol table changed the set of linked symbols (compare $work/pass1.nm and pass2.nm)"
echo "python.sh: $(grep -c '^	.quad .Lhs' husk-syms.s) symbols in the dlsym table"

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
 _testcapi _testbuffer _testclinic _xxtestfuzz _ctypes readline _curses
 _curses_panel _ssl _hashlib"
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
# ctypes: libc's qsort by name through dlsym, calling back into Python;
# curses: the terminfo database deps.sh compiled; readline: libedit's.
smoke2='
import ctypes, curses, readline
libc = ctypes.CDLL(None)
a = (ctypes.c_int * 5)(5, 1, 4, 2, 3)
cmp = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))(lambda x, y: x[0] - y[0])
libc.qsort(a, 5, ctypes.sizeof(ctypes.c_int), cmp)
assert list(a) == [1, 2, 3, 4, 5], list(a)
assert ctypes.CDLL("libc.so.6").qsort
try:
    ctypes.CDLL("libfoo.so.1")
    raise SystemExit("dlopen of a library that is not there worked")
except OSError as e:
    assert "static binary" in str(e), e
curses.setupterm("xterm", 1)
assert curses.tigetstr("clear") == b"\x1b[H\x1b[2J", curses.tigetstr("clear")
assert "libedit" in readline.__doc__
print("ok")'
r=$(TERMINFO=$deps/share/terminfo ./python-check -I -c "$smoke2") || die "ctypes, curses or readline fail natively"
[ "$r" = ok ] || die "ctypes/curses/readline smoke test printed '$r'"
# ssl and hashlib over OpenSSL: its digests, a TLS 1.3 context (the CA
# file, /usr/lib/ssl/cert.pem, is on the system disk: none here).
smoke3='
import ssl, hashlib
assert ssl.OPENSSL_VERSION.startswith("OpenSSL 3."), ssl.OPENSSL_VERSION
assert hashlib.sha256.__name__ == "openssl_sha256", hashlib.sha256
assert hashlib.new("sha3_256", b"abc").hexdigest().startswith("3a985da74fe225b2")
assert hashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 2).hex().startswith("061df616")
ctx = ssl.create_default_context()
assert ctx.maximum_version == ssl.TLSVersion.MAXIMUM_SUPPORTED and ssl.HAS_TLSv1_3
assert ssl.get_default_verify_paths().openssl_cafile == "/usr/lib/ssl/cert.pem", ssl.get_default_verify_paths()
print("ok")'
r=$(./python-check -I -c "$smoke3") || die "ssl or hashlib fail natively"
[ "$r" = ok ] || die "ssl/hashlib smoke test printed '$r'"
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
