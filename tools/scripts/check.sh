#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every test.  Lint, host unit tests, the rig's own tests, and
# the guest selftests on each supported kernel.  One summary line per suite;
# exits non-zero if any suite failed.  Logs go to build/check/.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
logs=$repo/build/check
mkdir -p "$logs"
passed=0
failed=0
summary=()

# suite NAME CMD...: run CMD with its output in the log and on stdout.
suite() {
	local name=$1 start rc secs
	shift
	echo "=== $name"
	start=$(date +%s)
	"$@" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	if [ "$rc" = 0 ]; then
		summary+=("$(printf '%-20s PASS  (%ss)' "$name" "$secs")")
		passed=$((passed + 1))
	else
		summary+=("$(printf '%-20s FAIL  (exit %s, %ss; log: build/check/%s.log)' "$name" "$rc" "$secs" "$name")")
		failed=$((failed + 1))
	fi
}

tools/scripts/deps.sh || { echo "check: installing dependencies failed" >&2; exit 1; }

suite lint tools/scripts/lint.sh
suite unit make -s -C tests/unit run
suite modules make -s modules-all
suite rig tools/vm/tests/run_tests.sh
while read -r series kver; do
	suite "selftests-$series" tools/vm/run --kernel "$series" --timeout 1800 -- \
		make -s -C selftests/drivers/net/vrss run_tests
	# The steering tests again with 4 queues on 4 vCPUs.
	suite "selftests-$series-4cpu" tools/vm/run --kernel "$series" --cpus 4 --timeout 1800 -- \
		make -s -C selftests/drivers/net/vrss run_tests TEST_PROGS="datapath.sh rss.sh parse.sh gate.sh reorder.sh"
done < <(tools/scripts/kernels.sh)

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" = 0 ]
