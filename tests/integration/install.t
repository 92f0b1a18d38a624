#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make install / uninstall into a temporary DESTDIR: the installed husk
# finds its images from any directory, the man page renders, the bash
# completion is valid and completes, uninstall leaves nothing behind.
# It installs what is built (make check builds all first): `-o all` keeps
# make from rebuilding anything here, so the test stays quick.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 16
unset HUSK_IMAGES
DEST=$TMP/dest
inst() { make -C "$ROOT" -o all "$@" DESTDIR="$DEST" PREFIX=/usr > "$TMP/make.log" 2>&1; }

inst install
st=$?
is "$st" 0 "make install DESTDIR=... PREFIX=/usr succeeds"
[ "$st" -eq 0 ] || sed 's/^/# /' "$TMP/make.log"

is "$(cd "$DEST" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')" \
	"./usr/bin/husk ./usr/include/husk.h ./usr/lib/husk/husk_bench.py ./usr/lib/husk/husk_bench_plot.py ./usr/lib/husk/lua ./usr/lib/husk/lua.info ./usr/lib/husk/python ./usr/lib/husk/python.disk ./usr/lib/husk/python.env ./usr/lib/husk/python.info ./usr/lib/libhusk.a ./usr/lib/libhusk.so ./usr/lib/libhusk.so.0 ./usr/lib/libhusk.so.0.1.0 ./usr/lib/pkgconfig/husk.pc ./usr/lib/python3/dist-packages/husk/__init__.py ./usr/lib/python3/dist-packages/husk/_lib.py ./usr/lib/python3/dist-packages/husk/husk.h ./usr/lib/python3/dist-packages/husk/py.typed ./usr/share/bash-completion/completions/husk ./usr/share/man/man1/husk.1 " \
	"exactly husk, the images (no staging dirs or stdlib zip), libhusk, its header, pkg-config file and Python package, the man page and the completion"
[ -x "$DEST/usr/bin/husk" ] && [ -x "$DEST/usr/lib/husk/lua" ] && [ -x "$DEST/usr/lib/husk/python" ] &&
	[ ! -x "$DEST/usr/lib/husk/python.disk" ]
ok $? "programs are executable, data files are not"

# The installed husk, from /, with no build tree beside it.
H=$DEST/usr/bin/husk
is "$(cd / && "$H" run lua -e 'print(1)')" "1" "installed husk runs lua -e 'print(1)' from /"
is "$(cd / && "$H" run python3 -c 'import sys; print(6 * 7, sys.version_info[0])')" "42 3" \
	"installed husk runs python3 -c ... from /"
is "$(cd / && "$H" images | awk 'NR > 1 {print $1, $2}' | tr '\n' ' ')" "lua lua5.4 python python3,python3.11 " \
	"installed husk images lists lua and python with their aliases"

# The installed library finds the installed husk beside it (LIBDIR/../bin),
# from C through pkg-config and from Python, with no HUSK_BIN.
cat >"$TMP/use.c" <<'C'
#include <husk.h>
#include <stdio.h>
int main(void)
{
	struct husk_error e;
	husk_config *c = husk_config_new("lua");
	husk_config_arg(c, "-e", &e);
	husk_config_arg(c, "print(6 * 7)", &e);
	husk_result *r = husk_run(c, &e);
	printf("%s", r ? (const char *)husk_result_output(r, 1, NULL) : e.message);
	return 0;
}
C
PKG_CONFIG_PATH=$DEST/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEST cc -o "$TMP/use" "$TMP/use.c" \
	$(PKG_CONFIG_PATH=$DEST/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config --cflags --libs husk)
is "$(unset HUSK_BIN; LD_LIBRARY_PATH=$DEST/usr/lib "$TMP/use")" "42" "a C program built with pkg-config's flags runs lua through the installed libhusk"
is "$(cd / && unset HUSK_BIN; HUSK_LIBRARY=$DEST/usr/lib/libhusk.so.0 PYTHONPATH=$DEST/usr/lib/python3/dist-packages \
	/usr/bin/python3 -c 'import husk; print(husk.run("lua", ["-e", "print(6 * 7)"]).stdout.decode().strip())')" "42" \
	"the installed Python package runs it too"

# The man page.
LC_ALL=C MANWIDTH=80 man --warnings -l "$DEST/usr/share/man/man1/husk.1" > "$TMP/man" 2> "$TMP/man.err"
is "$?:$(wc -c < "$TMP/man.err")" "0:0" "man -l renders the installed page without warnings"
grep -q 'husk - run one program in a fresh' "$TMP/man" && grep -q 'HUSK_IMAGES' "$TMP/man" &&
	grep -q 'husk images' "$TMP/man" && grep -q -- '--output-limit SIZE' "$TMP/man"
ok $? "the rendered page has NAME, HUSK_IMAGES, husk images and the options"

# The bash completion.
COMP=$DEST/usr/share/bash-completion/completions/husk
bash -n "$COMP"
ok $? "the completion file is valid bash"
comp() { # comp LINE: what the completion offers for LINE
	(cd "$TMP" && PATH=$DEST/usr/bin:$PATH bash -c '. "$1"; COMP_LINE=$2; COMP_POINT=${#2}; _husk husk; printf "%s\n" "${COMPREPLY[@]}"' \
		sh "$COMP" "$1") | sort | tr '\n' ' '
}
is "$(comp 'husk po')" "policy " "it completes commands"
is "$(comp 'husk run py')" "python python3 python3.11 " "it completes image names and aliases"
is "$(comp 'husk run --time')" "--timeout " "it completes run's options"

inst uninstall
is "$?" 0 "make uninstall DESTDIR=... PREFIX=/usr succeeds"
is "$(cd "$DEST" && find . \( -type f -o -type l -o -name '*husk*' \) | tr '\n' ' ')" "" \
	"uninstall leaves no husk file (nor usr/lib/husk) behind"
done_testing
