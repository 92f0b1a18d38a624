#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Image names users type (aliases from NAME.info), `husk images`, the
# unknown-image message, and where husk looks for its images.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 28
unset HUSK_IMAGES
IMG=$ROOT/build/images

# Aliases: the names from build/images/NAME.info.
is "$("$HUSK" run python3 -c 'print(1+1)')" "2" "husk run python3 -c 'print(1+1)' prints 2"
is "$("$HUSK" run python3.11 -c 'import sys; print(sys.version_info[:2])')" "(3, 11)" "python3.11 is the python image"
is "$("$HUSK" run lua5.4 -e 'print(_VERSION)')" "Lua 5.4" "lua5.4 is the lua image"
is "$("$HUSK" run python3 -c 'import os; print(os.environ["PYTHONHOME"])')" "/usr" \
	"an alias gets the image's system disk and NAME.env"

# Aliases are data: any image directory's .info files.
mkdir "$TMP/imgs"
ln -s "$IMG/lua" "$TMP/imgs/lua"
printf '# test\nversion=9.9\naliases=mylua, other\ndescription=a test image\n' > "$TMP/imgs/lua.info"
is "$(HUSK_IMAGES=$TMP/imgs "$HUSK" run mylua -e 'print(3)')" "3" "an alias from a .info file in \$HUSK_IMAGES"
is "$(HUSK_IMAGES=$TMP/imgs "$HUSK" run other -e 'print(4)')" "4" "aliases may be separated by commas"
HUSK_IMAGES=$TMP/imgs "$HUSK" run mylu -e '' > /dev/null 2> "$TMP/err"
is "$?:$(grep -c "unknown image 'mylu' (images in $TMP/imgs: lua (mylua, other);" "$TMP/err")" "125:1" \
	"an alias matches exactly, not by prefix"

# husk images
"$HUSK" images > "$TMP/list" 2> "$TMP/err"
is "$?" 0 "husk images exits 0"
is "$(head -n 1 "$TMP/list" | awk '{print $1, $2, $3, $4, $5}')" "NAME ALIASES VERSION SIZE CONTENTS" \
	"husk images has a heading"
lua_v=$("$IMG/lua" -v | awk '{print $2}')
py_v=$("$IMG/python" -I -S --version 2>&1 | awk '{print $2}')
is "$(awk '$1 == "lua" {print $2, $3}' "$TMP/list")" "lua5.4 $lua_v" "lua: its alias and version ($lua_v, as the binary says)"
is "$(awk '$1 == "python" {print $2, $3}' "$TMP/list")" "python3,python3.11 $py_v" \
	"python: its aliases and version ($py_v)"
awk '$1 == "python" && $4 ~ /^[0-9.]+M$/ && /CPython/' "$TMP/list" | grep -q .
ok $? "python: its size in MiB and what it contains"
awk '$1 == "lua" && $4 ~ /^[0-9.]+K$/ && /Lua/' "$TMP/list" | grep -q .
ok $? "lua: its size in KiB and what it contains"
is "$(awk 'NR > 1 {print $1}' "$TMP/list" | tr '\n' ' ')" "lua python " \
	"only images are listed (not python-lib/, python-sys/, python-stdlib.zip or .disk/.env/.info files)"
# The size is the program and its system disk, on disk.
want=$(( ($(stat -c %b "$IMG/python") + $(stat -c %b "$IMG/python.disk")) * 512 / 1048576 ))
got=$(awk '$1 == "python" {sub(/M$/, "", $4); printf "%d", $4}' "$TMP/list")
[ "$got" -ge $((want - 1)) ] && [ "$got" -le $((want + 1)) ]
ok $? "python's size is the program and python.disk ($got M, du says $want M)"
is "$(HUSK_IMAGES=$TMP/imgs "$HUSK" images | awk 'NR == 2 {print $1, $2, $3}')" "lua mylua,other 9.9" \
	"husk images shows what the .info file says"

# Errors: one line, exit 125.
check() { # check DESCRIPTION PATTERN COMMAND...
	desc=$1 pattern=$2
	shift 2
	"$@" > /dev/null 2> "$TMP/err"
	is "$?" 125 "$desc: exit 125"
	[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q -- "$pattern" "$TMP/err"
	ok $? "$desc: one line ($(head -c 200 "$TMP/err"))"
}
check "unknown image" "unknown image 'nosuch' (images in $IMG: lua (lua5.4), python (python3, python3.11);" \
	"$HUSK" run nosuch
check "husk images, \$HUSK_IMAGES missing" "image directory $TMP/none (from \$HUSK_IMAGES) is not a directory" \
	env HUSK_IMAGES="$TMP/none" "$HUSK" images
check "husk run, \$HUSK_IMAGES missing" "unknown image 'lua': image directory $TMP/none" \
	env HUSK_IMAGES="$TMP/none" "$HUSK" run lua -e ''
check "husk images with an argument" "takes no arguments" "$HUSK" images lua

# Where husk looks: build/images beside the binary, else ../lib/husk from
# its real path (an installed husk), from any current directory.
mkdir -p "$TMP/prefix/bin" "$TMP/prefix/lib/husk" "$TMP/elsewhere"
cp "$HUSK" "$TMP/prefix/bin/husk"
for f in lua lua.info; do ln -s "$IMG/$f" "$TMP/prefix/lib/husk/$f"; done
ln -s "$TMP/prefix/bin/husk" "$TMP/elsewhere/husk"
is "$(cd / && "$TMP/prefix/bin/husk" run lua5.4 -e 'print(5)')" "5" "PREFIX/bin/husk finds PREFIX/lib/husk from /"
is "$(cd / && "$TMP/elsewhere/husk" images | awk 'NR > 1 {print $1}')" "lua" \
	"through a symlink to husk, the images of the husk it points to"
rm "$TMP/prefix/lib/husk/lua" "$TMP/prefix/lib/husk/lua.info"
rmdir "$TMP/prefix/lib/husk"
check "no image directory" "no image directory: neither $TMP/prefix/bin/build/images nor $TMP/prefix/lib/husk exists" \
	"$TMP/prefix/bin/husk" images
done_testing
