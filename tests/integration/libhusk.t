#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# libhusk's C API (tests/lib/test_libhusk.c, built with ASan and UBSan):
# options, bad inputs, streams, husk's errors, 16 threads, 1,000 runs in one
# process leaking nothing (fds and children counted, memory by LeakSanitizer).
. "$(dirname "$0")/../lib.sh"
need_kvm
export HUSK_BIN=$HUSK HUSK_CACHE=$TMP/cache
mkdir -m 700 "$HUSK_CACHE"
exec "$ROOT/build/tests/lib/test_libhusk" "$TMP" 1000
