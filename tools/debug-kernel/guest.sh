#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the debug-kernel guest (tools/debug-kernel/check.sh): every selftest,
# then a kmemleak scan.  Leak suspects from before the tests (boot, the
# rig's mounts) are cleared first, so what is left is the tests' doing.
set -u
leaks=/sys/kernel/debug/kmemleak
[ -w "$leaks" ] || { echo "guest.sh: no $leaks: not the debug kernel?" >&2; exit 1; }
echo scan > "$leaks"
echo clear > "$leaks"

# Several times slower than Debian's kernels under TCG: longer bounds,
# longer stress rounds (the senders alone take seconds to start).
export KSELFTEST_TIMEOUT=${KSELFTEST_TIMEOUT:-2400}
export VRSS_STEP_TIMEOUT=${VRSS_STEP_TIMEOUT:-60}
export VRSS_STRESS_SECONDS=${VRSS_STRESS_SECONDS:-90}

tools/scripts/ksft-run.sh ${VRSS_TEST_PROGS:-}
rc=$?

# Two scans: an object freed late (RCU, deferred work) is not reported by
# the second one; a leak is reported by both.
echo scan > "$leaks"
sleep 5
echo scan > "$leaks"
report=$(cat "$leaks")
if [ -n "$report" ]; then
	echo "kmemleak: unreferenced objects after the tests:"
	echo "$report"
	rc=1
else
	echo "kmemleak: no unreferenced objects after the tests"
fi
echo "lockdep: $(grep -E 'lock-classes|direct dependencies|debug_locks' /proc/lockdep_stats 2>/dev/null | tr -s ' ' | paste -sd, -)"
exit $rc
