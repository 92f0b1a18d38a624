#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# deps.sh LIB: one C library CPython's stdlib modules need, from its Debian
# source package (Debian patches applied), as a static library built with our
# musl-gcc, installed to $BUILD/musl-deps (lib/, include/, lib/pkgconfig/).
#   zlib -> libz.a   bzip2 -> libbz2.a   xz -> liblzma.a   sqlite3 -> libsqlite3.a
#   libffi -> libffi.a (_ctypes)
#   ncurses -> libncursesw.a libpanelw.a (wide-char; _curses, _curses_panel),
#              and share/terminfo: a terminfo database of common terminals
#              compiled with its own tic, for the system disk's /usr/share/terminfo
#   libedit -> libedit.a (the readline module; BSD-licensed, needs ncurses)
#   openssl -> libssl.a libcrypto.a (_ssl, _hashlib): TLS 1.2/1.3 clients
#              and servers, the default provider built in; OPENSSLDIR
#              /usr/lib/ssl (the system disk's CA bundle is its cert.pem)
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
libffi) pkg=libffi ;; ncurses) pkg=ncurses ;; libedit) pkg=libedit ;; openssl) pkg=openssl ;;
*) die "usage: deps.sh zlib|bzip2|xz|sqlite3|libffi|ncurses|libedit|openssl" ;;
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
libffi)
	# --disable-multi-os-directory: lib/, not lib/../lib64.  No static
	# trampolines: they locate libffi's own mapping through /proc/self/maps
	# (no /proc in the guest); closures then use one RWX mmap, which the
	# guest grants (protections are not enforced there).
	CC=$cc CFLAGS=$CFLAGS LDFLAGS=$LDFLAGS "$src/configure" --prefix="$prefix" --disable-shared --enable-static \
		--disable-docs --disable-multi-os-directory --disable-exec-static-tramp \
		>configure.log 2>&1 || fail configure configure.log
	make -j"$JOBS" >build.log 2>&1 || fail build build.log
	make install >install.log 2>&1 || fail install install.log
	hdr='#include <ffi.h>
static int twice(int x) { return 2 * x; }
static const char *ffi_check(void) {
	ffi_cif cif; ffi_type *args[1] = { &ffi_type_sint }; int x = 21; void *av[1] = { &x }; ffi_arg r;
	if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 1, &ffi_type_sint, args) != FFI_OK) return "";
	ffi_call(&cif, FFI_FN(twice), &r, av);
	return (int)r == 42 ? "ffi_call ok" : "";
}' call='ffi_check()' libs=-lffi
	;;
ncurses)
	# Wide-char (libncursesw, libpanelw), terminfo only (no termcap
	# fallback), looked up in /usr/share/terminfo: the python system disk
	# (mounted on /usr in the guest) carries the entries compiled below.
	# $TERMINFO and ~/.terminfo still work.
	CC=$cc CFLAGS=$CFLAGS LDFLAGS=$LDFLAGS "$src/configure" --prefix="$prefix" \
		--without-shared --with-normal --without-debug --without-profile --without-cxx --without-cxx-binding \
		--without-ada --without-manpages --without-tests --without-gpm --without-dlsym \
		--enable-widec --disable-termcap --disable-db-install --disable-home-terminfo \
		--with-default-terminfo-dir=/usr/share/terminfo --with-terminfo-dirs=/usr/share/terminfo \
		--enable-pc-files --with-pkg-config-libdir="$prefix/lib/pkgconfig" \
		--with-build-cc=gcc >configure.log 2>&1 || fail configure configure.log
	make -j"$JOBS" >build.log 2>&1 || fail build build.log
	make install >install.log 2>&1 || fail install install.log
	# The terminfo database: the entries named below (and what they use),
	# compiled with the tic just built (a static musl program: it runs
	# here), in the directory-tree format this ncurses reads.
	rm -rf "$prefix/share/terminfo"; mkdir -p "$prefix/share/terminfo"
	terms="dumb ansi vt52 vt100 vt102 vt220 linux xterm xterm-color xterm-16color xterm-256color
		xterm-mono xterm-r6 xterm-new screen screen-256color screen-bce screen-w screen.xterm-256color
		tmux tmux-256color rxvt rxvt-256color putty putty-256color konsole
		konsole-256color gnome gnome-256color vte vte-256color alacritty kitty st st-256color foot
		cons25 sun wsvt25 cygwin pcansi mach hurd"
	TERMINFO= ./progs/tic -x -o "$prefix/share/terminfo" -e "$(echo $terms | tr ' ' ,)" "$src/misc/terminfo.src" \
		>tic.log 2>&1 || fail "tic" tic.log
	for t in $terms; do
		[ -f "$prefix/share/terminfo/$(printf %.1s "$t")/$t" ] || die "terminfo entry $t was not compiled (see $work/tic.log)"
	done
	hdr='#include <curses.h>
#include <term.h>
static const char *ti_check(void) {
	int err; char *s;
	if (setupterm("xterm-256color", 1, &err) != OK) return "";
	s = tigetstr("clear");
	return s && s != (char *)-1 ? curses_version() : "";
}' call='ti_check()' libs='-lpanelw -lncursesw'
	export TERMINFO="$prefix/share/terminfo"
	;;
libedit)
	[ -f "$prefix/lib/libncursesw.a" ] || die "$prefix/lib/libncursesw.a missing (deps.sh ncurses first)"
	# configure looks for tgetent in -ltermcap, -lncurses, -lcurses: let
	# -lncurses find libncursesw.a (users of libedit.a link -lncursesw).
	mkdir termlib && ln -s "$prefix/lib/libncursesw.a" termlib/libncurses.a
	# Debian's patches only change configure.ac (libbsd overlay, soname,
	# termcap search order; Debian runs autoreconf): build in a copy with the
	# generated files marked newer, so make keeps upstream's configure.
	cp -a "$src/." source
	touch source/aclocal.m4; sleep 1; touch source/configure source/config.h.in; find source -name Makefile.in -exec touch {} +
	# musl's wchar_t holds ISO 10646 code points, but musl-gcc does not
	# include glibc's stdc-predef.h, which says so (chartype.h insists).
	CC=$cc CFLAGS="$CFLAGS" CPPFLAGS="-I$prefix/include -I$prefix/include/ncursesw -D__STDC_ISO_10646__=201706L" \
		LDFLAGS="$LDFLAGS -L$work/termlib" ac_cv_lib_termcap_tgetent=no \
		./source/configure --prefix="$prefix" --disable-shared --enable-static --disable-examples \
		>configure.log 2>&1 || fail configure configure.log
	make -j"$JOBS" >build.log 2>&1 || fail build build.log
	make install >install.log 2>&1 || fail install install.log
	hdr='#include <stdio.h>
#include <editline/readline.h>' call='rl_library_version' libs='-ledit -lncursesw'
	;;
openssl)
	# Only what TLS clients and servers and hashlib use: static libraries
	# (no-shared), no loadable modules or engines (no-dso, no-engine,
	# no-module: nothing can be dlopened; the default provider is built
	# in), no legacy provider and its old algorithms (MD4, RC4, Blowfish,
	# ...), nor the national ciphers no TLS default uses (SM2/3/4, ARIA,
	# Camellia) or binary-field curves; no CMS, OCSP, CT, CMP or time
	# stamps (CPython uses none); no SSL 3, DTLS, SRP, SRTP or
	# compression; no kernel TLS, AF_ALG or secure heap (they need Linux
	# headers, which musl-gcc lacks; the secure heap is only used by a
	# program that asks for it with CRYPTO_secure_malloc_init, which
	# CPython does not); no tests, no apps (only the libraries are built).
	# OPENSSLDIR is on the system disk: /usr/lib/ssl/cert.pem is the
	# default CA file.
	CC=$cc CFLAGS=$CFLAGS "$src/Configure" linux-x86_64 --prefix="$prefix" --libdir=lib \
		--openssldir=/usr/lib/ssl \
		no-shared no-dso no-engine no-module no-legacy no-tests no-ssl3 no-dtls no-srp no-srtp \
		no-comp no-zlib no-ktls no-afalgeng no-secure-memory no-async no-md4 no-mdc2 no-whirlpool no-rc2 no-rc4 \
		no-bf no-cast no-idea no-seed no-sm2 no-sm3 no-sm4 no-aria no-camellia no-ec2m \
		no-cms no-ocsp no-ct no-cmp no-ts no-ui-console \
		>configure.log 2>&1 || fail configure configure.log
	make -j"$JOBS" build_libs >build.log 2>&1 || fail build build.log
	make install_dev >install.log 2>&1 || fail install install.log
	hdr='#include <openssl/ssl.h>
#include <openssl/evp.h>
static const char *ssl_check(void) {
	unsigned char md[EVP_MAX_MD_SIZE]; unsigned int n = 0;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || !EVP_Digest("abc", 3, md, &n, EVP_sha3_256(), NULL) || n != 32 || md[0] != 0x3a) return "";
	SSL_CTX_free(ctx);
	return OpenSSL_version(OPENSSL_VERSION);
}' call='ssl_check()' libs='-lssl -lcrypto'
	;;
esac

# --- check: a static program using the library links and runs here ---
printf '%s\n#include <stdio.h>\nint main(void) { printf("%%s\\n", %s); return 0; }\n' "$hdr" "$call" >check.c
"$cc" -static -O2 -I"$prefix/include" -I"$prefix/include/ncursesw" -o check check.c -L"$prefix/lib" $libs >check.log 2>&1 ||
	fail "linking a test program against $prefix/lib" check.log
v=$(./check) && [ -n "$v" ] || die "test program linked against the $lib library does not run"
touch "$prefix/.$lib"
echo "deps.sh: $lib $v ready in $prefix"
