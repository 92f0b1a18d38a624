# TAP helpers for the integration tests (POSIX sh).  Source it, then call
# plan N, and ok/is for each check.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HUSK=$ROOT/husk
PROGS=$ROOT/build/tests/progs
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0
failed=0

plan() { echo "1..$1"; }
ok() { # ok CONDITION-STATUS DESCRIPTION  (status 0 = pass)
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
is() { # is GOT EXPECTED DESCRIPTION
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2"
		failed=$((failed + 1))
	fi
}
# Tests that boot a VM need /dev/kvm: fail loudly, never skip.
need_kvm() {
	if [ ! -c /dev/kvm ]; then
		echo "Bail out! /dev/kvm is missing: these tests need KVM"
		exit 1
	fi
	if [ ! -x "$HUSK" ]; then
		echo "Bail out! $HUSK is not built (run make)"
		exit 1
	fi
}
# same_lines WANT GOT N: an `is` for each of the first N lines of file GOT
# against WANT's (a script's output in husk against its native run's).
same_lines() {
	i_=0
	while [ $i_ -lt "$3" ]; do
		i_=$((i_ + 1))
		want_=$(sed -n "${i_}p" "$1")
		is "$(sed -n "${i_}p" "$2")" "$want_" "as natively: ${want_%%:*}"
	done
}
# debian_image NAME PACKAGE...: the Debian image NAME in build/test-cache
# (HUSK_CACHE, exported), built unless it is there and up to date; bails out
# when it cannot be built.
debian_image() {
	export HUSK_CACHE=$ROOT/build/test-cache
	mkdir -p "$HUSK_CACHE" && chmod 700 "$HUSK_CACHE"
	if ! "$HUSK" image build "$@" >"$TMP/image-build" 2>&1; then
		sed 's/^/# /' "$TMP/image-build"
		echo "Bail out! the Debian image $1 did not build"
		exit 1
	fi
}
done_testing() { [ "$failed" -eq 0 ]; exit $?; }
