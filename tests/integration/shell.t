#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The python image's shell: BusyBox's ash as /bin/sh (/bin -> usr/bin, the
# system disk's /usr/bin/sh) and its tools, reached the ways Python reaches a
# shell (subprocess with shell=True, os.system, a script run with sh, a
# #!/bin/sh script executed directly) and the shell's own language; what a
# script writes in the workdir comes back; -t stops a shell that runs
# forever; a missing command is 127 and "not found".
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 31
IMG=$ROOT/build/images

# The disk: /usr/bin/busybox and one name per applet; /bin is a symlink.
got=$("$HUSK" run python -c '
import os, stat
print(sorted(os.listdir("/")), os.readlink("/bin"), stat.S_ISLNK(os.lstat("/bin").st_mode),
      stat.S_ISDIR(os.stat("/bin").st_mode), os.lstat("/bin").st_size, os.path.realpath("/bin/sh"),
      os.path.samefile("/usr/bin/sh", "/usr/bin/busybox"))
print(len([n for n in os.listdir("/usr/bin") if os.path.samefile("/usr/bin/" + n, "/usr/bin/busybox")]))')
is "$(echo "$got" | sed -n 1p)" "['bin', 'dev', 'etc', 'proc', 'tmp', 'usr', 'workdir'] usr/bin True True 7 /usr/bin/sh True" \
	"/bin is a symlink to usr/bin in the listing of /: lstat says a link of 7 bytes, stat a directory; /bin/sh is /usr/bin/sh, BusyBox"
is "$(echo "$got" | sed -n 2p)" "$(($(wc -l < "$IMG/busybox.applets") + 1))" \
	"/usr/bin has busybox and a hard link for each of its $(wc -l < "$IMG/busybox.applets") applets (busybox.applets)"

# subprocess with shell=True, os.system, a pipeline.
is "$("$HUSK" run python -c 'import subprocess; print(subprocess.run("echo $((6*7))", shell=True, capture_output=True).stdout)')" \
	"b'42\\n'" "subprocess.run(\"echo \$((6*7))\", shell=True, capture_output=True).stdout is 42 and a newline, as bytes"
is "$("$HUSK" run python -c 'import os; print(os.system("exit 3"), 3 << 8)')" "768 768" \
	"os.system(\"exit 3\") returns 3 << 8"
is "$("$HUSK" run python -c 'import subprocess; print(subprocess.run("ls /usr/bin | grep -c busybox", shell=True, capture_output=True, text=True).stdout.strip())')" \
	"1" "a pipeline through shell=True: ls /usr/bin | grep -c busybox prints 1"
is "$("$HUSK" run python -c 'import subprocess; print(subprocess.check_output("seq 100000 | sort -rn | head -n 1", shell=True).decode().strip())')" \
	"100000" "a pipeline of 100,000 lines: seq | sort -rn | head -n 1"

# A script in the workdir run with sh, and a #!/bin/sh script executed
# directly after chmod +x; what they write comes back through -w.
W=$TMP/w
mkdir -p "$W"
cat > "$W/script.sh" <<'EOF'
n=0
for f in /usr/lib/python3.11/json/*.py; do n=$((n + 1)); done
echo "json modules: $n" > result.txt
echo "script ran with $# args: $*"
EOF
cat > "$W/direct.sh" <<'EOF'
#!/bin/sh
echo "$0 says: $1" | tr a-z A-Z > direct.txt
exit 5
EOF
got=$("$HUSK" run -w "$W" python -c '
import os, subprocess
r = subprocess.run(["sh", "script.sh", "a", "b"], capture_output=True, text=True)
print(r.returncode, r.stdout.strip())
os.chmod("direct.sh", 0o755)
print(subprocess.run(["./direct.sh", "hello"]).returncode)'); st=$?
is "$st:$(echo "$got" | sed -n 1p)" "0:0 script ran with 2 args: a b" "subprocess.run([\"sh\", \"script.sh\", ...]) runs a script from the workdir"
is "$(cat "$W/result.txt" 2>&1)" "json modules: $(ls "$ROOT/build/images/python-sys/lib/python3.11/json/"*.py | wc -l)" \
	"the file the script wrote comes back to the host through -w"
is "$(echo "$got" | sed -n 2p):$(cat "$W/direct.txt" 2>&1)" "5:./DIRECT.SH SAYS: HELLO" \
	"a #!/bin/sh script executed directly after chmod +x: its exit status and the file it wrote"
[ -x "$W/direct.sh" ]; ok $? "its chmod +x comes back to the host too"

# The shell's language, one run: each line below is one feature.
cat > "$TMP/lang.sh" <<'EOF'
false; echo "status $?"
true && echo and-ran; false && echo and-wrong
false || echo or-ran; true || echo or-wrong
for i in 1 2 3; do printf "%s," "$i"; done; echo
echo "subst $(echo inner | tr a-z A-Z) $(( $(seq 10 | wc -l) * 2 ))"
cat <<END
heredoc $((1 + 1)) ${HOME}
END
echo redirected > /tmp/out.txt; echo again >> /tmp/out.txt; echo "file $(wc -l < /tmp/out.txt) $(head -n 1 /tmp/out.txt)"
f() { return 7; }; f; echo "function $?"
case "$(uname -s)" in Linux) echo case-ok ;; *) echo case-wrong ;; esac
x=abc.tar.gz; echo "params ${x%%.*} ${x#*.} ${#x}"
sh -c 'exit 9'; echo "child $?"
echo "${BASH_VERSION:-not bash}"
EOF
got=$("$HUSK" run python -c 'import subprocess, sys; sys.exit(subprocess.run(["sh", "-c", sys.stdin.read()]).returncode)' < "$TMP/lang.sh"); st=$?
line() { echo "$got" | sed -n "$1p"; }
is "$st" 0 "the language script exits 0"
is "$(line 1)" "status 1" "\$? after false"
is "$(line 2):$(line 3)" "and-ran:or-ran" "&& and ||"
is "$(line 4)" "1,2,3," "a for loop"
is "$(line 5)" "subst INNER 20" "command substitution, nested in arithmetic too"
is "$(line 6)" "heredoc 2 /tmp" "a here-document with expansions"
is "$(line 7)" "file 2 redirected" "> and >> to a file in /tmp"
is "$(line 8):$(line 9):$(line 10)" "function 7:case-ok:params abc tar.gz 10" "functions, case, parameter expansion"
is "$(line 11):$(line 12)" "child 9:not bash" "a child shell's status; sh is BusyBox's ash, not bash"

# The tools on the system disk.
got=$("$HUSK" run python -c 'import subprocess; r = subprocess.run("find /usr/lib/python3.11 -name \"*.py\" | head -3", shell=True, capture_output=True, text=True); print(r.returncode); print(r.stdout, end="")')
is "$(echo "$got" | sed -n 1p):$(echo "$got" | sed 1d | grep -c '^/usr/lib/python3\.11/.*\.py$')" "0:3" \
	"find /usr/lib/python3.11 -name '*.py' | head -3: three .py files, status 0"
got=$("$HUSK" run python -c 'import subprocess; print(subprocess.check_output("""
cd /tmp && seq 1000 > n && tar -czf t.tgz n && mkdir x && tar -xzf t.tgz -C x &&
cmp n x/n && echo "$(tail -n 1 x/n) $(sha256sum < n | cut -c1-12) $(awk "{ s += \\$1 } END { print s }" n)"
""", shell=True, text=True).strip())')
is "$got" "1000 $(seq 1000 | sha256sum | cut -c1-12) 500500" "tar and gzip, cmp, sha256sum, awk in /tmp"

# A shell on stdin, and sh -i (prompts on stderr, no line editing).
got=$(printf 'echo from stdin $((2 + 3))\nexit 4\n' | "$HUSK" run python -c 'import os; os.execv("/bin/sh", ["sh"])'); st=$?
is "$got:$st" "from stdin 5:4" "sh reading its commands from stdin (exec'd by python): output and exit status"
is "$(printf 'echo $((6 * 7))\n' | "$HUSK" run python -c 'import os; os.execv("/bin/sh", ["sh", "-i"])' 2>/dev/null)" \
	"42" "sh -i reads commands from stdin as well"

# -t stops a shell that never ends.
start=$(date +%s)
"$HUSK" run -t 2 python -c 'import subprocess; subprocess.run("while :; do :; done", shell=True)' > /dev/null 2>&1
st=$? took=$(($(date +%s) - start))
is "$st" 124 "a shell looping forever is stopped by -t 2: husk exits 124"
[ "$took" -lt 10 ]; ok $? "... within 10 s (took ${took} s)"
"$HUSK" run -t 2 python -c 'import os; os.system("sleep 1000 | cat")' > /dev/null 2>&1
is "$?" 124 "a shell waiting on a pipeline of sleep is stopped by -t 2 too: 124"

# Failure paths.
got=$("$HUSK" run python -c '
import subprocess
r = subprocess.run("nosuchcmd --flag", shell=True, capture_output=True, text=True)
print(r.returncode, repr(r.stdout), r.stderr.strip())')
is "$got" "127 '' /bin/sh: nosuchcmd: not found" "a missing command: status 127, \"not found\" on stderr"
printf '#!/bin/bash\necho never\n' > "$W/bash.sh"
got=$("$HUSK" run -w "$W" python -c '
import os, subprocess
os.chmod("bash.sh", 0o755)
try:
    subprocess.run(["./bash.sh"])
except FileNotFoundError as e:
    print("FileNotFoundError", e.errno)
r = subprocess.run("./bash.sh", shell=True, capture_output=True, text=True)
print(r.returncode, r.stderr.strip())')
is "$got" "FileNotFoundError 2
127 /bin/sh: ./bash.sh: not found" "a #!/bin/bash script: ENOENT (no bash in the image), and 127 from sh"
got=$("$HUSK" run python -c 'import subprocess; r = subprocess.run("echo x > /usr/x", shell=True, capture_output=True, text=True); print(r.returncode, r.stderr.strip())')
is "$got" "1 /bin/sh: can't create /usr/x: Read-only file system" "redirection into the read-only /usr fails with the shell's message, status 1 (ash's, as on Linux)"
got=$("$HUSK" run python -c 'import subprocess; r = subprocess.run("mkdir -p /tmp/x/y /workdir/a/b && ls -d /tmp/x/y /workdir/a/b; mkdir /usr/z", shell=True, capture_output=True, text=True); print(r.returncode, r.stdout.split(), r.stderr.strip())')
is "$got" "1 ['/tmp/x/y', '/workdir/a/b'] mkdir: can't create directory '/usr/z': Read-only file system" \
	"mkdir -p of absolute paths works (mkdir(\"/\") is EEXIST before EROFS, as Linux); a new directory on /usr is EROFS"
got=$("$HUSK" run python -c '
import subprocess
script = "\n".join(["sleep 30 & s=$!", "ps -o pid,comm | grep -c sleep", "pgrep sleep | grep -c \"^$s$\"",
    "pidof sleep >/dev/null && echo pidof", "free | grep -c Mem",
    "mkfifo /tmp/f && (echo through > /tmp/f &) && cat /tmp/f", "nice -n 5 sh -c \"echo niced\"",
    "kill $s; wait $s; echo \"status $?\""])
print(subprocess.run(script, shell=True, capture_output=True, text=True).stdout, end="")' 2>&1 | tr '\n' '|')
is "$got" "1|1|pidof|1|through|niced|status 143|" \
	"BusyBox's ps, pgrep, pidof and free read the guest's /proc; mkfifo, nice; a killed child's status 143"
done_testing
