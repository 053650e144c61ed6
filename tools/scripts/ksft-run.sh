#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksft-run.sh [TEST_PROG...]: the vrss selftests (all of TEST_PROGS, or
# those named) through the kernel's kselftest runner, in the kselftest
# tree of make ksft, as root in a guest.  The kernel's lib.mk exits 0
# whatever its tests did: this exits 1 if any test failed or none passed.
# KSELFTEST_TIMEOUT overrides the per-test timeout of `settings`.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
export kselftest_override_timeout=${KSELFTEST_TIMEOUT:-}
args=(TARGETS=drivers/net/vrss)
[ $# = 0 ] || args+=("TEST_PROGS=$*")
make -s -C "$repo/build/ksft/tools/testing/selftests" "${args[@]}" run_tests 2>&1 | tee "$out"
[ "${PIPESTATUS[0]}" = 0 ] && ! grep -q '^not ok ' "$out" && grep -q '^ok ' "$out"
