#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The bundled Python's everyday stdlib in the microVM: ctypes (libffi, and
# dlopen(NULL)/dlsym over the binary's own symbols), readline (libedit),
# curses (ncursesw and the system disk's terminfo), zoneinfo (the system
# disk's tzdata) and source lines in tracebacks (the stdlib sources beside
# the zip's .pyc).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 15
export HUSK_CACHE="$TMP/cache"
py() { "$HUSK" run python "$@"; }

# --- ctypes ---------------------------------------------------------------
got=$(py -c '
import ctypes
class Point(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_double), ("tag", ctypes.c_char * 4)]
p = Point(3, 0.5, b"ab")
b = ctypes.create_string_buffer(b"husk", 8)
ctypes.memmove(ctypes.byref(b, 4), b"!", 1)
print(ctypes.sizeof(Point), p.x + p.y, p.tag, b.raw, ctypes.string_at(ctypes.addressof(b)))' 2>&1)
is "$got" "24 3.5 b'ab' b'husk!\\x00\\x00\\x00' b'husk!'" "ctypes: a Structure and a string buffer"

got=$(py -c '
import ctypes
libc = ctypes.CDLL(None)
seen = []
@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
def cmp(a, b):
    seen.append(1)
    return a[0] - b[0]
arr = (ctypes.c_int * 8)(42, 7, -3, 19, 0, 7, 100, 1)
libc.qsort(arr, len(arr), ctypes.sizeof(ctypes.c_int), cmp)
print(list(arr), len(seen) > 0, ctypes.CDLL("libc.so.6").strlen(b"husk"))' 2>&1)
is "$got" "[-3, 0, 1, 7, 7, 19, 42, 100] True 4" \
	"ctypes: libc's qsort by name (CDLL(None), and libc.so.6) calls a Python comparison back"

got=$(py -c '
import ctypes
for name in ("libfoo.so.1", None):
    try:
        lib = ctypes.CDLL(name)
        lib.no_such_function_in_husk
        print("found?")
    except (OSError, AttributeError) as e:
        print(type(e).__name__, "static binary" in str(e))' 2>&1)
is "$got" "OSError True
AttributeError True" "ctypes: another library, or a symbol not linked in, fails and says why"

# --- readline (libedit) ---------------------------------------------------
got=$(py -c '
import readline
readline.parse_and_bind("bind ^I rl_complete")
readline.add_history("first"); readline.add_history("second")
print("libedit" in readline.__doc__, readline.get_current_history_length(), readline.get_history_item(2))' 2>&1)
is "$got" "True 2 second" "readline: built on libedit, with history"

# --- curses ---------------------------------------------------------------
got=$(py -c '
import curses
curses.setupterm("xterm")
print(curses.tigetstr("clear"), curses.tigetnum("colors"), curses.tigetflag("am"))' 2>&1)
is "$got" "b'\\x1b[H\\x1b[2J' 8 1" "curses: setupterm(\"xterm\") and tigetstr(\"clear\") from /usr/share/terminfo"

bad=
for t in xterm-256color linux vt100 screen tmux dumb screen-256color tmux-256color; do
	r=$(py -c 'import curses, sys
curses.setupterm(sys.argv[1])
print(curses.tigetnum("cols"), curses.tigetnum("colors"))' "$t" 2>&1) || bad="$bad $t($r)"
done
is "${bad:-none}" "none" "curses: terminfo entries for xterm-256color linux vt100 screen tmux dumb ..."

got=$(py -c '
import curses, sys
try:
    curses.setupterm("no-such-terminal", sys.stdout.fileno())
except curses.error as e:
    print("error")' 2>&1)
is "$got" "error" "curses: an unknown terminal is an error, not a crash"

# --- zoneinfo ---------------------------------------------------------------
got=$(py -c '
import zoneinfo, datetime
d = datetime.datetime(2024, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
w = datetime.datetime(2024, 1, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
print(zoneinfo.TZPATH[0], d.isoformat(), w.utcoffset(), d.tzname())' 2>&1)
is "$got" "/usr/share/zoneinfo 2024-07-01T12:00:00+02:00 1:00:00 CEST" \
	"zoneinfo: Europe/Paris is +02:00 on 2024-07-01 (TZPATH /usr/share/zoneinfo)"

got=$(py -c '
import zoneinfo, datetime
print(len(zoneinfo.available_timezones()) > 400,
      datetime.datetime(2024, 7, 1, tzinfo=zoneinfo.ZoneInfo("US/Eastern")).utcoffset(),
      datetime.datetime(2024, 7, 1, tzinfo=zoneinfo.ZoneInfo("UTC")).utcoffset())' 2>&1)
is "$got" "True -1 day, 20:00:00 0:00:00" "zoneinfo: the zone list, and zones that are symlinks (US/Eastern, UTC)"

got=$("$HUSK" run -e TZ=Asia/Tokyo python -c '
import time
print(time.strftime("%H:%M %Z", time.localtime(0)))' 2>&1)
is "$got" "09:00 JST" "TZ=Asia/Tokyo: libc's localtime reads the same zoneinfo"

# --- tracebacks show the stdlib's source lines --------------------------------
py -c 'import json; json.loads("{bad json")' >/dev/null 2>"$TMP/tb"
grep -q '^json.decoder.JSONDecodeError: Expecting property name' "$TMP/tb"
ok $? "a traceback through json.loads"
# Each stdlib frame: the file under /usr/lib/python3.11 and, on the next line,
# that file's line as the source tree has it.
SRC=$ROOT/build/images/python-src
res=$(awk -v src="$SRC" '
	prev != "" { want = ""; f = src "/" prev; n = 0
		while ((getline l < f) > 0) if (++n == line) { want = l; break }
		close(f); gsub(/^ +| +$/, "", want); got = $0; gsub(/^ +| +$/, "", got)
		if (want == "" || got != want) bad = bad " " prev ":" line; else good++; prev = "" }
	match($0, /^  File "\/usr\/lib\/python3\.11\/[^"]+", line [0-9]+/) {
		s = substr($0, 1, RLENGTH); sub(/^  File "\/usr\/lib\/python3\.11\//, "", s)
		prev = s; sub(/".*/, "", prev); line = s; sub(/.*line /, "", line); line += 0 }
	END { print good + 0, (bad == "" ? "ok" : "bad:" bad) }' "$TMP/tb")
case $res in
0\ *|*bad*) false ;;
*) true ;;
esac
ok $? "the traceback shows source lines from /usr/lib/python3.11/json/decoder.py ($res)"
grep -q 'File "/usr/lib/python3.11/json/decoder.py", line' "$TMP/tb"
ok $? "json/decoder.py is among the frames"

# The modules still come from the zip's .pyc, compiled at build time.
got=$(py -c '
import json.decoder, sys, zipimport
m = sys.modules["json.decoder"]
print(m.__file__, isinstance(m.__loader__, zipimport.zipimporter), sys.path[1:3],
      m.JSONDecoder.raw_decode.__code__.co_filename)' 2>&1)
is "$got" "/usr/lib/python311.zip/json/decoder.pyc True ['/usr/lib/python311.zip', '/usr/lib/python3.11'] /usr/lib/python3.11/json/decoder.py" \
	"imports still read the .pyc from /usr/lib/python311.zip, whose code names the source"
# --- sys.executable ----------------------------------------------------------
is "$(py -c 'import os, sys; print(sys.executable, os.path.samefile(sys.executable, "/usr/bin/python3.11"))' 2>&1) $("$HUSK" run python3 -c 'import sys; print(sys.executable)' 2>&1)" \
	"/usr/bin/python True /usr/bin/python3" "sys.executable: the interpreter on the system disk, as it was named"
done_testing
