#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each test program like the kernel's kselftest runner: top-level KTAP,
# each test's own KTAP indented as diagnostics, the per-test timeout from
# `settings`, exit 4 counted as a skip.  Exits non-zero if any test failed.
cd "$(dirname "$0")" || exit 1
# KSELFTEST_TIMEOUT overrides it (slow kernels: make check-debug).
timeout=${KSELFTEST_TIMEOUT:-$(sed -n 's/^timeout=//p' settings)}
suite=selftests:drivers/net/vrss
n=0
fail=0
pass=0
skip=0

echo "TAP version 13"
echo "1..$#"
for t in "$@"; do
	n=$((n + 1))
	echo "# $suite: $t"
	start=$EPOCHSECONDS
	timeout -k 10 "${timeout:-45}" "./$t" 2>&1 | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	echo "# $suite: $t: $((EPOCHSECONDS - start)) s"
	case $rc in
	0) echo "ok $n $suite: $t"; pass=$((pass + 1)) ;;
	4) echo "ok $n $suite: $t # SKIP"; skip=$((skip + 1)) ;;
	124) echo "not ok $n $suite: $t # TIMEOUT ${timeout}s"; fail=$((fail + 1)) ;;
	*) echo "not ok $n $suite: $t # exit=$rc"; fail=$((fail + 1)) ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail -eq 0 ]
