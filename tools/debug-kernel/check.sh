#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the whole selftest suite, the stress suite included,
# on the debug kernel (tools/debug-kernel/build.sh, built once and cached):
# lockdep, KASAN, debug objects and panic_on_warn make any splat fail the
# run (tools/vm/run fails on any in the guest's kernel log), and kmemleak
# is scanned at the end, where any report fails it too.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
start=$(date +%s)

image=$(tools/debug-kernel/build.sh)
out=$(dirname "$image")
kver=$(cat "$out/kver")
echo "  BUILD   vrss.ko for $kver"
KDIR=$out/build tools/scripts/build-module.sh "$kver"
tools/scripts/ynl.sh
make -s tools ksft
# TCG runs the KASAN/lockdep kernel several times slower than Debian's:
# more memory for the KASAN shadow and quarantine, and a long bound.
tools/vm/run --kernel "$image" --cpus "${VRSS_DEBUG_CPUS:-2}" --mem 3G --timeout 7200 -- \
	tools/debug-kernel/guest.sh
echo "  CHECK-DEBUG passed in $(( $(date +%s) - start ))s"
