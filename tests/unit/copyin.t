#!/bin/sh
exec "$(dirname "$0")/../../build/tests/unit/test_copyin"
