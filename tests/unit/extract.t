#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The write-back rules and hostile images (test_extract.c); mkbomb makes
# the directory bombs.
UNIT_DIR="$(cd "$(dirname "$0")/../../build/tests/unit" && pwd)" exec "$(dirname "$0")/../../build/tests/unit/test_extract"
