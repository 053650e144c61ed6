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
skipped=0
summary=()

# A guest run that failed on a known QEMU TCG fault, in code that is not
# vrss's: a #DB with the trap flag set in kernel mode (exc_debug_kernel,
# "a known way to trigger this is through QEMU", says traps.c), an int3
# oops while the kernel patches its text, or a double fault in SLUB's
# allocation fast path with an EFLAGS no CPU pushes in long mode (VM and
# reserved bits set), which Debian 6.12 under QEMU 7.2's TCG also hits
# with no vrss loaded (RPS over veth, a UDP flood, processes forking).
# Prints the splat's first line.
emulator_fault() {
	local log=$1 line
	line=$(grep -Em1 'WARNING: .* exc_debug_kernel|Oops: int3|Oops: double fault' "$log") || return 1
	# vrss in the splat, outside the unreliable "? " frames: a real failure.
	grep -A 60 -F -- "$line" "$log" | grep -v ' ? ' | grep -q '\[vrss\]' && return 1
	echo "$line"
}

# suite NAME CMD...: run CMD with its output in the log and on stdout.
# A guest suite that hit an emulator fault runs once more.
suite() {
	local name=$1 start rc secs fault= note= skips
	shift
	echo "=== $name"
	start=$(date +%s)
	"$@" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ] && fault=$(emulator_fault "$logs/$name.log"); then
		echo "=== $name again: the guest hit a QEMU TCG fault outside vrss: $fault"
		mv "$logs/$name.log" "$logs/$name.emulator-fault.log"
		"$@" 2>&1 | tee "$logs/$name.log"
		rc=${PIPESTATUS[0]}
		note=", once more after a TCG fault: build/check/$name.emulator-fault.log"
	fi
	secs=$(($(date +%s) - start))
	# KTAP cases that skipped, at any nesting: shown, never hidden in a pass.
	skips=$(grep -cE '^(# )*ok [0-9]+ .*# SKIP' "$logs/$name.log")
	skipped=$((skipped + skips))
	[ "$skips" = 0 ] || note+=", $skips skipped"
	if [ "$rc" = 0 ]; then
		summary+=("$(printf '%-20s PASS  (%ss%s)' "$name" "$secs" "$note")")
		passed=$((passed + 1))
	else
		summary+=("$(printf '%-20s FAIL  (exit %s, %ss%s; log: build/check/%s.log)' "$name" "$rc" "$secs" "$note" "$name")")
		failed=$((failed + 1))
	fi
}

tools/scripts/deps.sh || { echo "check: installing dependencies failed" >&2; exit 1; }

suite lint tools/scripts/lint.sh
suite unit make -s -C tests/unit run
suite fuzz make -s -C tests/fuzz run FUZZ_SECONDS=60
suite tools tools/ttcp/test.sh
suite docs tools/scripts/docs.sh
suite modules make -s modules-all
suite rig tools/vm/tests/run_tests.sh
suite dkms tools/scripts/dkms-check.sh
# The kernel's YNL CLI, for the netlink statistics selftest (qstats.sh).
tools/scripts/ynl.sh || { echo "check: extracting YNL from linux-source-6.12 failed" >&2; exit 1; }
while read -r series kver; do
	suite "selftests-$series" tools/vm/run --kernel "$series" --timeout 1800 -- \
		make -s -C selftests/drivers/net/vrss run_tests
	# On the NIC a KVM guest has (virtio-net, traffic from the host), with
	# one queue pair (one delivering vCPU) and two (both deliver).
	for q in 1 2; do
		suite "selftests-$series-nic$q" tools/vm/run --kernel "$series" --nic $q --timeout 900 -- \
			make -s -C selftests/drivers/net/vrss run_tests TEST_PROGS=virtio.sh
	done
	# The steering tests and the stress suite again with 4 queues on 4 vCPUs.
	suite "selftests-$series-4cpu" tools/vm/run --kernel "$series" --cpus 4 --timeout 1800 -- \
		make -s -C selftests/drivers/net/vrss run_tests TEST_PROGS="datapath.sh rss.sh parse.sh qstats.sh gate.sh reorder.sh stress.sh"
done < <(tools/scripts/kernels.sh)

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "suites: $passed passed, $failed failed; test cases skipped: $skipped (grep '# SKIP' build/check/*.log)"
[ "$failed" = 0 ]
