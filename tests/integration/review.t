#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Human review (--review) and the file policy (--files-*): a run's workdir
# changes staged beside the workdir, shown with diffs, applied all, none or
# file by file on a terminal (a pseudo-terminal here), or later with husk
# review|apply|discard; never applied where the host changed a path since,
# nor where the file policy refuses them (an audit record each).
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 55
ANSWER="/usr/bin/python3 $ROOT/tests/integration/pty_answer.py"
export HUSK_CACHE=$TMP/cache
mkdir -m 700 "$HUSK_CACHE"

# A workdir with text files, a binary one, one to delete and one to rename.
fresh() {
	rm -rf "$TMP/wd" "$TMP"/wd.husk-stage-*
	mkdir -p "$TMP/wd/sub" "$TMP/wd/old"
	printf 'one\ntwo\n' >"$TMP/wd/a.txt"
	printf 'b\n' >"$TMP/wd/b.txt"
	printf 'c\n' >"$TMP/wd/c.txt"
	printf 'bin\000ary' >"$TMP/wd/blob.bin"
	printf 'gone\n' >"$TMP/wd/gone.txt"
	printf 'moved\n' >"$TMP/wd/sub/from.txt"
	printf 'x\n' >"$TMP/wd/old/x"
}
PROG='
import os, shutil
for n in "a.txt", "b.txt", "c.txt":
    open(n, "a").write("more\n")
open("new.txt", "w").write("hello\n")
open("blob.bin", "wb").write(bytes(range(256)) * 4)
os.remove("gone.txt")
os.rename("sub/from.txt", "sub/to.txt")
shutil.rmtree("old")
os.symlink("new.txt", "link")
print("the program ran")'
stage() { ls -d "$TMP"/wd.husk-stage-* 2>/dev/null; }

# --- without a terminal: staged, nothing applied, where it is said ---------
fresh
setsid "$HUSK" run --review -w "$TMP/wd" python -c "$PROG" </dev/null >"$TMP/out" 2>"$TMP/err"
is "$?:$(cat "$TMP/out")" "0:the program ran" "--review without a terminal: the program's status and output"
S=$(stage)
[ -d "$S" ] && [ "$(stat -c %a "$S")" = 700 ]
ok $? "the changes are staged beside the workdir, in a directory of the user's alone"
grep -q "husk: workdir $TMP/wd: 10 changes staged in $S: husk review|apply|discard $S" "$TMP/err"
ok $? "where they are, and what to do with them, on stderr"
is "$(cat "$TMP/wd/a.txt"):$(ls "$TMP/wd" | tr '\n' ' ')" "one
two:a.txt b.txt blob.bin c.txt gone.txt old sub " "nothing was applied to the workdir"
"$HUSK" review "$S" >"$TMP/rev" 2>&1
is "$?" 0 "husk review STAGE: status 0"
grep -q '^  modified  a.txt  (8 bytes -> 13 bytes)$' "$TMP/rev" && grep -q '^    +more$' "$TMP/rev" &&
	grep -q '^    --- a/a.txt$' "$TMP/rev"
ok $? "a modified text file: its sizes and a unified diff"
grep -q '^  created   new.txt  (6 bytes, -rw-r--r--)$' "$TMP/rev" && grep -q '^    +hello$' "$TMP/rev"
ok $? "a created file: size, mode and contents"
grep -Eq '^    binary: 7 bytes, sha256 [0-9a-f]{16}\.\.\. -> 1K, sha256 [0-9a-f]{16}\.\.\.$' "$TMP/rev"
ok $? "a binary file: sizes and digests, no diff"
grep -q '^  deleted   gone.txt  (5 bytes)$' "$TMP/rev" && grep -q '^  deleted   old/  (with the 1 entry in it)$' "$TMP/rev"
ok $? "deleted files and directories (one line for a directory and what it held)"
grep -q '^  renamed   sub/to.txt  (from sub/from.txt)$' "$TMP/rev" && grep -q '^  created   link -> new.txt$' "$TMP/rev"
ok $? "a rename, and a symlink with its target"
grep -q '^  the run: exit, status 0$' "$TMP/rev"
ok $? "how the run ended"
"$HUSK" review "$S" --diff a.txt >"$TMP/diff"
is "$(cat "$TMP/diff")" "--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,3 @@
 one
 two
+more" "husk review STAGE --diff PATH: one change's diff, as diff wrote it"
"$HUSK" review "$S" --json | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)
assert m["husk_stage"] == 1 and len(m["changes"]) == 10, m
assert {c["action"] for c in m["changes"]} == {"modify", "create", "delete", "rename"}'
ok $? "husk review STAGE --json: the manifest, as data"

# --- applying later: a path, then the rest; the host's change refused --------
"$HUSK" apply "$S" b.txt 2>"$TMP/err"
is "$?:$(cat "$TMP/wd/b.txt" | tr '\n' ' '):$(cat "$TMP/wd/c.txt")" "0:b more :c" "husk apply STAGE PATH: that path alone"
printf 'the host wrote this\n' >"$TMP/wd/a.txt"
"$HUSK" review "$S" | grep -q '^  modified  a.txt.*\[the host has changed it since the run: applying it will be refused\]$'
ok $? "the review marks a file the host changed after staging"
"$HUSK" apply "$S" >"$TMP/out" 2>"$TMP/err"
is "$?" 123 "husk apply: status 123 when a change was refused"
grep -qx 'husk: apply: a.txt: the host has changed it since the run started; left staged' "$TMP/err"
ok $? "one clear line for the refusal"
is "$(cat "$TMP/wd/a.txt")" "the host wrote this" "the host's version is kept"
cmp -s "$TMP/wd/blob.bin" /dev/stdin <<EOF2
$(/usr/bin/python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 4)')
EOF2
/usr/bin/python3 -c 'import sys; assert open(sys.argv[1], "rb").read() == bytes(range(256)) * 4' "$TMP/wd/blob.bin"
ok $? "the binary file applied byte for byte"
[ ! -e "$TMP/wd/gone.txt" ] && [ ! -e "$TMP/wd/old" ] && [ "$(cat "$TMP/wd/sub/to.txt")" = moved ] &&
	[ ! -e "$TMP/wd/sub/from.txt" ] && [ "$(readlink "$TMP/wd/link")" = new.txt ]
ok $? "deletions, the rename and the symlink applied"
[ -d "$S" ] && "$HUSK" review "$S" --json | grep -c '"state": "staged"' | grep -qx 1
ok $? "the refused change stays staged (nothing lost)"
"$HUSK" discard "$S"
is "$?:$(stage)" "0:" "husk discard: the stage is gone"
is "$(cat "$TMP/wd/a.txt")" "the host wrote this" "discard touches nothing in the workdir"

# --- on a terminal: all, none, one file of three -----------------------------
fresh
$ANSWER a "$HUSK" run --review -w "$TMP/wd" python -c "$PROG" >"$TMP/tty"
is "$?" 0 "--review on a terminal: status 0"
grep -q 'apply \[a\]ll 10, \[n\]one (discard them), \[f\]ile by file, or \[k\]eep them staged? ' "$TMP/tty"
ok $? "the question, with its keys"
is "$(tr '\n' ' ' <"$TMP/wd/a.txt")|$(stage)" "one two more |" "all: applied, and nothing left staged"
grep -q '^husk: 10 applied to .*, 0 refused; nothing left staged' "$TMP/tty"
ok $? "what was done, said on the terminal"

fresh
$ANSWER n "$HUSK" run --review -w "$TMP/wd" python -c "$PROG" >"$TMP/tty"
is "$?:$(tr '\n' ' ' <"$TMP/wd/a.txt")|$(stage)|$(ls "$TMP/wd" | tr '\n' ' ')" \
	"0:one two ||a.txt b.txt blob.bin c.txt gone.txt old sub " "none: nothing applied, nothing left staged"

fresh
THREE='
for n in "a.txt", "b.txt", "c.txt":
    open(n, "a").write("more\n")'
$ANSWER f,n,y,n "$HUSK" run --review -w "$TMP/wd" python -c "$THREE" >"$TMP/tty"
is "$?" 0 "file by file: status 0"
is "$(grep -c 'apply this change: \[y\]es, \[n\]o, or \[q\]uit and keep the rest staged? ' "$TMP/tty")" 3 \
	"file by file: asked once per file, each after its diff"
is "$(cat "$TMP/wd/a.txt" "$TMP/wd/b.txt" "$TMP/wd/c.txt" | tr '\n' ' ')|$(stage)" "one two b more c |" \
	"one file of three applied (the second), the others dropped"

fresh
$ANSWER f,y,q "$HUSK" run --review -w "$TMP/wd" python -c "$THREE" >"$TMP/tty"
S=$(stage)
is "$(tr '\n' ' ' <"$TMP/wd/a.txt")|$("$HUSK" review "$S" --json | grep -c '"state": "staged"')" "one two more |2" \
	"quit: what was answered is done, the rest stays staged"
$ANSWER ^C "$HUSK" run --review -w "$TMP/wd" python -c 'open("c.txt", "a").write("ctrl-c\n")' >"$TMP/tty"
is "$?:$(ls -d "$TMP"/wd.husk-stage-* | wc -l):$(tr '\n' ' ' <"$TMP/wd/c.txt")" "0:2:c " \
	"Ctrl-C at the question: nothing applied, the changes kept staged (no hang)"
rm -rf $(ls -d "$TMP"/wd.husk-stage-* | grep -v "$S")
$ANSWER k "$HUSK" review "$S" >"$TMP/tty"
is "$?:$(stage)" "0:$S" "husk review on a terminal, keep: the stage stays"
$ANSWER a "$HUSK" review "$S" >"$TMP/tty"
is "$(cat "$TMP/wd/b.txt" "$TMP/wd/c.txt" | tr '\n' ' ')|$(stage)" "b more c more |" "husk review, all: the rest applied"

# --- the file policy ---------------------------------------------------------
fresh
mkdir "$TMP/wd/src" && echo 'int x;' >"$TMP/wd/src/x.c"
A=$TMP/policy.jsonl
cat >"$TMP/policy.json" <<'EOF2'
{"files": {"allow": ["src/**", "!**/*.bak"], "max_size": "1K", "refuse": ["hidden", "executables"]}}
EOF2
"$HUSK" run --policy "$TMP/policy.json" --audit "$A" -w "$TMP/wd" --timeout 1 python -c '
import os
open("src/x.c", "a").write("int y;\n")
open("src/new.c", "w").write("int z;\n")
open("src/keep.bak", "w").write("no")
open("src/big.c", "w").write("x" * 5000)
open("src/.env", "w").write("SECRET=1")
open("src/run.sh", "w").write("#!/bin/sh\n"); os.chmod("src/run.sh", 0o755)
open("a.txt", "w").write("outside\n")
os.sync()
while True: pass' >/dev/null 2>"$TMP/err"
is "$?" 124 "a run under a file policy that ends by its time limit"
is "$(cat "$TMP/wd/src/x.c" "$TMP/wd/src/new.c" | tr '\n' ' ')" "int x; int y; int z; " "changes the policy allows are applied"
is "$(ls -A "$TMP/wd/src" | tr '\n' ' ')|$(tr '\n' ' ' <"$TMP/wd/a.txt")|$(stage)" "new.c x.c |one two |" \
	"changes outside it never are (no stage kept for them)"
grep -q "husk: workdir $TMP/wd: 5 changes refused by the file policy (never applied; recorded in the audit)" "$TMP/err"
ok $? "the refusals counted on stderr"
is "$(grep -c '"kind":"file policy"' "$A")" 5 "an audit denial record for each"
grep -q '"what":"modify","path":"a.txt","why":"outside --files-allow"' "$A" &&
	grep -q '"path":"src/keep.bak","why":"outside --files-allow"' "$A" &&
	grep -q '"path":"src/big.c","why":"larger than --files-max-size"' "$A" &&
	grep -q '"path":"src/.env","why":"a hidden file: --files-refuse hidden"' "$A" &&
	grep -q '"path":"src/run.sh","why":"an executable: --files-refuse executables"' "$A"
ok $? "each record names the path and the rule"
"$HUSK" audit show "$A" >"$TMP/show"
grep -q 'denied by the file policy: modify a.txt (outside --files-allow)' "$TMP/show" && grep -q 'limit: timeout' "$TMP/show" &&
	grep -q 'file policy: allow src/\*\*, !\*\*/\*.bak; refuse executables, hidden; largest file 1K, in all any' "$TMP/show" &&
	grep -q '5 change(s) refused by the file policy, never applied' "$TMP/show"
ok $? "husk audit show: the policy, its denials and the limit hit"

fresh
"$HUSK" run --review --files-allow '*.txt' -w "$TMP/wd" python -c "$PROG" </dev/null >/dev/null 2>&1
S=$(stage)
"$HUSK" review "$S" >"$TMP/rev"
grep -q '^  DENIED    blob.bin  (modified file: outside --files-allow; never applied)$' "$TMP/rev"
ok $? "the review shows a refused change as DENIED"
"$HUSK" apply "$S" 2>/dev/null
is "$(od -c "$TMP/wd/blob.bin" | head -1 | tr -s ' ')|$(cat "$TMP/wd/new.txt")" "0000000 b i n \\0 a r y|hello" \
	"husk apply never applies it"

# A new file may get a deleted one's inode number: a rename only with the same data.
fresh
"$HUSK" run --review -w "$TMP/wd" python -c '
import os
os.remove("gone.txt"); open("fresh.txt", "w").write("other\n")
os.rename("c.txt", "c2.txt")' </dev/null >/dev/null 2>&1
"$HUSK" review "$(stage)" >"$TMP/rev"
grep -q '^  deleted   gone.txt' "$TMP/rev" && grep -q '^  created   fresh.txt' "$TMP/rev" &&
	grep -q '^  renamed   c2.txt  (from c.txt)$' "$TMP/rev"
ok $? "a deleted file and a new one are not a rename; a moved one is"

# The review shows how the run ended, its denials and limits; the audit where the stage is.
fresh
"$HUSK" run --review --audit "$TMP/r.jsonl" --timeout 1 -w "$TMP/wd" python -c '
import os, socket
open("a.txt", "a").write("x\n")
try: socket.socket()
except OSError: pass
os.sync()
while True: pass' </dev/null >/dev/null 2>&1
S=$(stage)
"$HUSK" review "$S" >"$TMP/rev"
grep -q '^  the run: timeout, status 124$' "$TMP/rev" && grep -q '^  limit: timeout$' "$TMP/rev" &&
	grep -q '^  denied: network socket, 1 time(s) (counted by guest)$' "$TMP/rev" && grep -q '^  modified  a.txt' "$TMP/rev"
ok $? "the review: how the run ended, its limit and its denial, then the changes"
"$HUSK" audit show "$TMP/r.jsonl" | grep -q "1 change(s) staged in $S (husk review|apply|discard)"
ok $? "husk audit show says where the changes are staged"
"$HUSK" discard "$S"

# What the program wrote never reaches the terminal raw: names and diff lines escaped.
fresh
"$HUSK" run --review -w "$TMP/wd" python -c '
open("\x1b[2Jname", "w").write("a \x1b]0;title\x07 b \u00e9\n")' </dev/null >/dev/null 2>&1
"$HUSK" review "$(stage)" >"$TMP/rev"
! grep -q "$(printf '\033')" "$TMP/rev" && grep -q '^    +a \\x1b\]0;title\\x07 b é$' "$TMP/rev" &&
	grep -q '^  created   \\x1b\[2Jname' "$TMP/rev"
ok $? "control characters in names and contents are shown escaped (UTF-8 text as it is)"
"$HUSK" discard "$(stage)"

# --- bad input ----------------------------------------------------------------
"$HUSK" review "$TMP/nothing" >/dev/null 2>"$TMP/err"
is "$?:$(wc -l <"$TMP/err")" "125:1" "a missing stage: status 125, one line"
mkdir -m 700 "$TMP/bad" && echo '{"husk_stage": 1, "workdir": "/", "changes": [{"path": "../etc/passwd", "action": "create", "type": "file", "mode": 420, "size": 1, "state": "staged", "data": 0}]}' >"$TMP/bad/manifest.json"
"$HUSK" apply "$TMP/bad" >/dev/null 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: apply: $TMP/bad is not a husk stage (no readable manifest.json of this husk's)" \
	"a manifest naming a path outside the workdir is refused whole"
echo '{"husk_stage": 1, "workdir": "'"$TMP/wd"'", "workdir_dev": 1, "workdir_ino": 1, "changes": []}' >"$TMP/bad/manifest.json"
"$HUSK" apply "$TMP/bad" >/dev/null 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:husk: apply: $TMP/wd is no longer the directory this stage was made from" \
	"a stage applies only to the directory it was made from"
fresh
"$HUSK" run --review -w "$TMP/wd" python -c 'open("old/y", "w").write("y")' </dev/null >/dev/null 2>&1
S=$(stage)
mv "$TMP/wd/old" "$TMP/elsewhere" && ln -s "$TMP/elsewhere" "$TMP/wd/old"
"$HUSK" apply "$S" >/dev/null 2>"$TMP/err"
is "$?:$(ls "$TMP/elsewhere" | tr '\n' ' ')" "123:x " "a directory the host replaced by a symlink is never written through"
"$HUSK" review >/dev/null 2>&1
is "$?" 125 "husk review without a stage: usage, status 125"
"$HUSK" run --review lua -e '' >/dev/null 2>"$TMP/err"
is "$?:$(grep -c 'give one with -w DIR' "$TMP/err")" "125:1" "--review without a workdir: a usage error naming the fix"
"$HUSK" run --files-refuse devices -w "$TMP/wd" lua -e '' >/dev/null 2>"$TMP/err"
is "$?:$(grep -c "unknown kind of file 'devices'" "$TMP/err")" "125:1" "an unknown --files-refuse kind: a usage error naming it"
done_testing
