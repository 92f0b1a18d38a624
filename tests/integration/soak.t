#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The soak (bench/soak, the full size: 10,000 sequential runs and 100
# concurrent ones with a workdir each): every output right, nothing leaked.
. "$(dirname "$0")/../lib.sh"
need_kvm
plan 1
TMPDIR=$TMP "$ROOT/bench/soak" 10000 100 > "$TMP/soak" 2>&1
st=$?
sed 's/^/# /' "$TMP/soak"
ok $st "bench/soak 10000 100: every output right, no process, file handle, image or memory leaked"
done_testing
