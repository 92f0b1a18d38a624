#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Lua in the microVM: output, exit codes, stdin, stderr, large output.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 13

is "$("$HUSK" run lua -e 'print(1+1)')" "2" "husk run lua -e 'print(1+1)' prints 2"

for code in 0 1 42; do
	"$HUSK" run lua -e "os.exit($code)"
	is "$?" "$code" "exit status $code comes back"
done

got=$(printf 'line one\nline two\n' | "$HUSK" run lua -e 'local s = io.read("a") io.write(#s, ":", s)')
is "$got" "$(printf '18:line one\nline two')" "stdin reaches the program, with end of input"

got=$("$HUSK" run lua -e 'print(io.read("l"))' < /dev/null)
is "$got" "nil" "empty stdin is end of input"
got=$("$HUSK" run lua -e 'print(io.read("l"))' <&-)
is "$got" "nil" "closed stdin is end of input"

"$HUSK" run lua -e 'io.stdout:write("out\n") io.stderr:write("err\n")' >"$TMP/out" 2>"$TMP/err"
is "$(cat "$TMP/out")" "out" "stdout carries only stdout"
is "$(cat "$TMP/err")" "err" "stderr carries only stderr"
is "$("$HUSK" run lua -e 'io.stderr:write("e\n") print("o")' 2>/dev/null)" "o" "2>/dev/null drops only stderr"

# 10 MiB in 1 MiB lines, compared with the same program run natively.
script='local s = string.rep("x", 1048575) for i = 1, 10 do io.write(s, "\n") end'
"$HUSK" run lua -e "$script" > "$TMP/big"
is "$(wc -c < "$TMP/big")" "10485760" "10 MiB of output arrives whole"
is "$(sha256sum < "$TMP/big")" "$("$ROOT/build/images/lua" -e "$script" | sha256sum)" "10 MiB of output is intact (sha256)"

# Output is streamed while the program runs: the first line is on the host
# before the program finishes its 2 s busy wait.
("$HUSK" run -t 20 lua -e 'io.stdout:setvbuf("line") print("early") local t = os.clock() while os.clock() - t < 2 do end print("late")' > "$TMP/stream" &)
sleep 1
is "$(cat "$TMP/stream")" "early" "output is streamed, not held until exit"
done_testing
