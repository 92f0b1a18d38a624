#!/bin/sh
# The VMM confines itself before the first KVM_RUN: no new privileges, a
# seccomp allowlist that kills on violation, no inherited file descriptors.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 5

exec 9>"$TMP/inherited"
"$HUSK" run -t 20 python -c 'import time; time.sleep(3)' &
pid=$!
sleep 1.5
grep -q '^Seccomp:[[:space:]]*2$' /proc/$pid/status; ok $? "a running husk is in seccomp filter mode (Seccomp: 2)"
grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$pid/status; ok $? "and has NoNewPrivs: 1"
[ ! -e /proc/$pid/fd/9 ]; ok $? "an fd inherited from the caller is closed"
wait $pid
exec 9>&-

HUSK_TEST_SECCOMP_TRIGGER=1 "$HUSK" run lua -e 'print(1)' > /dev/null 2>&1
is "$?" 159 "a system call outside the allowlist kills husk with SIGSYS (test-only trigger)"
is "$("$HUSK" run lua -e 'print(1+1)')" "2" "without the trigger the confined VMM runs normally"
done_testing
