#!/bin/sh
exec "$(dirname "$0")/../../build/tests/unit/test_guest_abi"
