#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every test.  Lint, host unit tests, the rig's own tests, and
# the guest selftests on each supported kernel, veth and virtio-net lowers.
# One line per suite with its seconds, then the test cases of all suites:
# "N passed, N failed, N skipped".  Exits non-zero if any suite failed or
# any case skipped that this machine supports (see expected_skip).  Logs go
# to build/check/.  Nothing is run twice: a failure is a failure.
#
# Each veth selftest runs once per kernel: the steering ones with 4 vCPUs
# on 6.12, with 2 on 6.1; virtio.sh on a 1- and a 2-queue NIC, its
# full-ring changes shared between the two; device.sh on a 2-queue NIC
# with QEMU's RSS and, on 6.12, on igb; isolated.sh on 6.12 with 3 vCPUs,
# one isolated; cost.sh on veth (6.12: and
# the 1-queue NIC), 3 rounds; attach.sh and examples.sh (user space) on
# 6.12.  Debian's cloud kernels (6.1's and 6.12's) get one boot each, 2
# vCPUs: virtio.sh with one full-ring change, and the veth selftests that
# load and tear down vrss0.
# VRSS_CHECK_FULL=1 (make check-full) adds: the steering tests with 2 and
# with 4 vCPUs on both kernels, every full-ring change in every virtio.sh,
# device.sh on igb and isolated.sh on 6.1 too, cost.sh on the NIC with 2 queue pairs and
# with 1 on both kernels and 5 rounds, attach.sh and examples.sh on every
# kernel, every selftest on the cloud kernels, stress.sh and the fuzzer
# for longer.
# No test program or full-ring change runs only in check-full: each runs
# in make check on both kernel series (user space's on one), and every
# mutant's tests of make mutants run here on the mutant's kernel and NIC
# (6.12's steering tests with 4 vCPUs, where its mutants boot 2).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
logs=$repo/build/check
rm -rf "$logs"
mkdir -p "$logs"
full=${VRSS_CHECK_FULL:-0}
all_held="rxhash key fields down"
if [ "$full" = 1 ]; then
	fuzz_secs=60 stress_secs=90 stress_rounds=3 cost_rounds=5
	cost_nic_6_1=2 cost_nic_6_12=2 tools_6_1="attach.sh examples.sh status.sh"
	held_nic1=$all_held held_nic2=$all_held held_cloud=$all_held
	cloud_nic_progs="virtio.sh attach.sh examples.sh"
else
	# One round of 10 s (and 6 s of vrss0 deleted and recreated): a
	# round's start and stop under TCG cost more than its churn.
	fuzz_secs=10 stress_secs=10 stress_rounds=1
	# cost.sh's budgets are on the frame's path, the same to a few
	# instructions in every window, and on each configuration's least
	# window: 3 rounds hold them (make mutants' cost.sh runs 3).  On veth
	# and, on 6.12, the 1-queue NIC: vrss's part of a frame's path is
	# the same whatever the lower (check-full: veth and the NIC with 2
	# queue pairs and with 1 on both kernels).
	cost_rounds=3 cost_nic_6_1=0 cost_nic_6_12=1
	# virtio.sh's changes with a full ring, about 10 s each: every one
	# on every kernel, shared between its two boots (check-full: all in
	# each).  rxhash off while down on the 1-queue NIC, where make
	# mutants' drain-ends-while-down runs.
	held_nic1="rxhash down" held_nic2="key fields" held_cloud=rxhash
	# vrss-attach and the examples are user space: on 6.12 (check-full:
	# every kernel).
	cloud_nic_progs="virtio.sh" tools_6_1=
fi
# Debian's kernels reach CMD in about 5 s (12 beside the background
# suites or on a slow hour's 4 vCPUs), /init in about 3.  A boot that
# hangs under TCG (seen: a soft lockup in a 4-vCPU 6.1 boot, a kernel
# stuck after its MTRR lines) is retried after this (no CMD) or half of
# it (no /init), not after tools/vm/run's 120 s.
export VRSS_VM_BOOT_LIMIT=${VRSS_VM_BOOT_LIMIT:-30}
failed_suites=0
cases_pass=0
cases_fail=0
cases_skip=0
summary=()
why=()
t0=$(date +%s)

# KTAP results of a log, at any nesting ("# " per level): the leaves only
# (a test program's own line sums up its cases), as "PASS", "FAIL" or
# "SKIP <line>".  A test program that skipped as a whole is one leaf.
ktap_leaves() {
	awk '
	{
		line = $0; d = 0
		while (substr(line, 1, 2) == "# ") { line = substr(line, 3); d++ }
		if (line !~ /^(not )?ok [0-9]+/)
			next
		if (!deeper[d]) {
			if (line ~ /^not ok/) print "FAIL"
			else if (line ~ /# SKIP/) print "SKIP " line
			else print "PASS"
		}
		deeper[d] = 0
		for (k = 0; k < d; k++) deeper[k] = 1
	}' "$1"
}

# expected_skip SUITE LINE: a skip this machine cannot avoid.  Debian's
# 6.1 has no netdev qstats (queue statistics over netlink came in 6.9).
expected_skip() {
	case $1 in
	selftests-6.1|selftests-6.1-*)
		[[ $2 == *" needs netdev netlink qstats (6.9+) # SKIP" ]] && return 0 ;;
	esac
	# hotplug.sh's part for 3 vCPUs or more and gate.sh's progressive
	# width (4) run in the 4-vCPU boots (gate.sh: 6.12's, or make
	# check-full's).
	case $1 in
	*-4cpu) return 1 ;;
	selftests-*) [[ $2 == *" (needs 3 vCPUs) # SKIP" || $2 == *" (needs 4 vCPUs) # SKIP" ]] ;;
	*) return 1 ;;
	esac
}

# stamp NAME: stdin to build/check/NAME.log (and to stdout unless
# $quiet), and to NAME.times the moment each top-level KTAP result came
# ("SECONDS LINE"), for where_time.
stamp() {
	local line
	: > "$logs/$1.times"
	# A last line without its newline (a guest that died mid-line) too.
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		[[ $line =~ ^(not\ )?ok\ [0-9]+\  ]] &&
			printf '%s %s\n' "$EPOCHREALTIME" "$line" >> "$logs/$1.times"
	done | if [ -n "${quiet:-}" ]; then cat > "$logs/$1.log"; else tee "$logs/$1.log"; fi
}

# run_suite NAME CMD...: run CMD with its output in build/check/NAME.log
# (and on stdout unless $quiet), its exit status and seconds in NAME.status.
run_suite() {
	local name=$1 start rc
	shift
	start=$(date +%s)
	[ -n "${quiet:-}" ] || echo "=== $name"
	echo "$EPOCHREALTIME start" > "$logs/$name.start"
	"$@" 2>&1 | stamp "$name"
	rc=${PIPESTATUS[0]}
	echo "$rc $(($(date +%s) - start))" > "$logs/$name.status"
}

# where_time: the guest boots (tools/vm/run's "boot to CMD" in a suite's
# log), and the slowest test programs (or cases, where a suite's results
# are its cases): the seconds from the result before it (or the suite's
# start, a boot included) to each top-level KTAP result.
where_time() {
	local f name
	echo "=== where the time went (s): the boots, and the 12 slowest tests"
	for f in "$logs"/*.start; do
		name=$(basename "$f" .start)
		awk -v n="$name" '/^vm: .*boot to CMD/ { printf "  boot %-22s %s\n", n, $(NF - 1) }' \
			"$logs/$name.log"
	done | sort -k3 -rn | awk '{ s += $3 } NR <= 3 { print }
		END { printf "  %d boots, %.0f s in all\n", NR, s }'
	for f in "$logs"/*.start; do
		name=$(basename "$f" .start)
		cat "$f" "$logs/$name.times" 2> /dev/null | awk -v n="$name" '
			NR > 1 {
				r = substr($0, length($1) + 2)
				sub(/^(not )?ok [0-9]+ (selftests: )?/, "", r)
				printf "%7.1f %-22s %s\n", $1 - t, n, r
			}
			{ t = $1 }'
	done | sort -rn | head -n 12
}

# failure_lines NAME: what a failed suite's log says of the failure, in a
# few lines for the end of make check's output (CI shows little more):
# the failed cases, the rig's verdict, and the top of the oops that
# tools/vm/run quotes after it (the kernel's trouble, or the console of a
# guest that never reported).
failure_lines() {
	local log=$logs/$1.log
	echo "=== $1:"
	grep -E '^(# )*not ok [0-9]+' "$log" | head -n 4
	grep -E '^vm: ' "$log" | grep -v 'boot to CMD' | head -n 3
	awk '/^vm: / && !/boot to CMD/ { quoted = 1 } quoted' "$log" |
		grep -E 'BUG|WARNING|Oops|fault|panic|Comm:|[a-z_0-9.]+\+0x[0-9a-f]+/' | head -n 10
}

# suite NAME CMD...: run CMD with its output in the log and on stdout,
# and count its cases.
suite() {
	run_suite "$@"
	account "$1"
}

# account NAME: the cases of a suite run_suite ran, into the totals and
# the summary.
account() {
	local name=$1 rc secs note= leaves p f s bad=0 l
	read -r rc secs < "$logs/$name.status"
	leaves=$(ktap_leaves "$logs/$name.log")
	p=$(grep -c '^PASS' <<< "$leaves")
	f=$(grep -c '^FAIL' <<< "$leaves")
	s=$(grep -c '^SKIP' <<< "$leaves")
	# No KTAP (lint, unit, fuzz, docs, modules): the suite is one case.
	if [ $((p + f + s)) = 0 ]; then
		if [ "$rc" = 0 ]; then p=1; else f=1; fi
	fi
	# A failure the KTAP did not name (a crash, a timeout) is one more.
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	while read -r l; do
		[ -n "$l" ] || continue
		expected_skip "$name" "$l" || { bad=1; echo "=== $name: unexpected skip: ${l#SKIP }"; }
	done < <(grep '^SKIP' <<< "$leaves")
	cases_pass=$((cases_pass + p))
	cases_fail=$((cases_fail + f))
	cases_skip=$((cases_skip + s))
	note="$p passed, $f failed, $s skipped"
		# The KTAP counts, whatever the exit status.
	if [ "$rc" = 0 ] && [ "$f" = 0 ] && [ "$bad" = 0 ]; then
		summary+=("$(printf '%-20s PASS  %5ss  %s' "$name" "$secs" "$note")")
	else
		[ "$bad" = 0 ] || note+="; a skip this machine supports is a failure"
		summary+=("$(printf '%-20s FAIL  %5ss  %s (exit %s; log: build/check/%s.log)' \
			"$name" "$secs" "$note" "$rc" "$name")")
		failed_suites=$((failed_suites + 1))
		why+=("$(failure_lines "$name")")
	fi
}

tools/scripts/deps.sh || { echo "check: installing dependencies failed" >&2; exit 1; }
# The kernels the guest suites boot, 6.1's and 6.12's (with their headers).
kernels=$(tools/scripts/kernels.sh) || { echo "check: no kernels to test on" >&2; exit 1; }
cloud=$(tools/scripts/kernels.sh --cloud) || { echo "check: no cloud kernels to test on" >&2; exit 1; }
# The tools the rig's tests use (the instruction meter) before anything
# runs beside them: the background's make of them is then a no-op.
make -s tools || { echo "check: building the tools failed" >&2; exit 1; }
# The kernel's YNL CLI, for the netlink statistics selftest (qstats.sh).
tools/scripts/ynl.sh || { echo "check: extracting YNL from linux-source-6.12 failed" >&2; exit 1; }

# The suites that boot no guest run in the background, niced, while
# guests run: a guest leaves a host core idle most of the time, and
# niced they take what the guests leave, not the guests' CPU.  Their logs
# are shown when they are done.  The modules, the selftests' tree, lint,
# unit, fuzz, ttcp and docs beside the rig (which needs none of them);
# DKMS's builds beside the first selftests boot (its modules are
# loaded later, in the 4-vCPU boots: dkms-guest.sh).  lint builds in a
# tree of its own (build/lint/), not in the one the guests load vrss.ko
# from.
# background NAME... -- : run_suite each (NAME CMD... separated by --),
# one after the other, in a niced background subshell; $! is its pid.
background() {
	(
		renice -n 10 "$BASHPID" > /dev/null
		quiet=1
		local c=()
		for a; do
			if [ "$a" = -- ]; then
				[ ${#c[@]} = 0 ] || run_suite "${c[@]}"
				c=()
			else
				c+=("$a")
			fi
		done
		[ ${#c[@]} = 0 ] || run_suite "${c[@]}"
	) &
}
# collect NAME...: the logs and cases of background suites, once done.
collect() {
	local name
	for name; do
		echo "=== $name (in the background)"
		cat "$logs/$name.log"
		[ -e "$logs/$name.status" ] || echo "1 0" > "$logs/$name.status"
		account "$name"
	done
}
background modules make -s modules-all tools ksft -- \
	lint tools/scripts/lint.sh -- unit make -s -C tests/unit run -- \
	fuzz make -s -C tests/fuzz run FUZZ_SECONDS=$fuzz_secs -- \
	tools tools/ttcp/test.sh -- docs tools/scripts/docs.sh
host_job=$!
suite rig tools/vm/tests/run_tests.sh
wait "$host_job"
collect modules lint unit fuzz tools docs
# DKMS's builds, beside the first selftests boot (collected before the
# first 4-vCPU boot, which loads what they installed).  No stdin: the
# kernels' list below is read from it.
background dkms env VRSS_DKMS_GUEST=0 tools/scripts/dkms-check.sh < /dev/null
dkms_job=$!
# collect_dkms: wait for DKMS's builds and count them, once.
collect_dkms() {
	[ -n "$dkms_job" ] || return 0
	wait "$dkms_job"
	collect dkms
	dkms_job=
}
# Each veth selftest runs once per kernel: the ones that steer flows over
# the queues (and stress.sh) in a 4-vCPU guest on 6.12 and in the 2-vCPU
# one on 6.1, the others with 2 vCPUs on both (make check-full: the
# steering ones with 2 and with 4 vCPUs on both).  The list is the
# kselftest Makefile's TEST_PROGS, as make reads it.
steering="datapath.sh rss.sh parse.sh qstats.sh gate.sh reorder.sh stress.sh"
all_progs=$(make -s -C build/ksft/tools/testing/selftests/drivers/net/vrss \
	--eval 'vrss-progs: ; @echo $(TEST_PROGS)' vrss-progs 2> /dev/null)
for p in $steering; do
	grep -qw -- "$p" <<< "$all_progs" || {
		echo "check: $p is not in the selftests' TEST_PROGS ('$all_progs'): make ksft failed?" >&2
		exit 1
	}
done
ksft="tools/scripts/ksft-run.sh"
while read -r series kver; do
	two=$all_progs four="hotplug.sh rebalance.sh" drv=() drv_veth=()
	# User space's tests, and cost.sh's NIC (queue pairs, 0: none).
	tools="attach.sh examples.sh status.sh" q=$cost_nic_6_12 cost_nic=
	if [ "$series" = 6.1 ]; then
		tools=$tools_6_1 q=$cost_nic_6_1
	fi
	[ "$q" = 0 ] || cost_nic="--nic $q"
	# hotplug.sh first: it counts frames exactly, and stress.sh's
	# leftovers have sent a few strays into the next test.
	if [ "$full" = 1 ] || [ "$series" = 6.12 ]; then
		four="hotplug.sh $steering rebalance.sh"
	fi
	if [ "$full" = 0 ] && [ "$series" = 6.12 ]; then
		two=$(tr ' ' '\n' <<< "$all_progs" | grep -vxF -f <(tr ' ' '\n' <<< "$steering") | xargs)
	fi
	# The kernel's own drivers/net tests against vrss0 (6.12's), in the
	# same boots as ours: on veth0 and on the NIC.
	if [ "$series" = 6.12 ]; then
		drv=(-- tools/scripts/ksft-drv.sh)
		drv_veth=(-- env -u VRSS_NIC tools/scripts/ksft-drv.sh)
	fi
	# One boot for the veth selftests and virtio.sh on the NIC a KVM
	# guest has (virtio-net, traffic from the host) with one queue pair
	# (one delivering vCPU).  The veth tests and the kernel's tests on
	# veth0 run without $VRSS_NIC: the NIC is not theirs.
	suite "selftests-$series" tools/vm/run --kernel "$series" --nic 1 --timeout 1800 -- \
		tools/scripts/guest-all.sh env -u VRSS_NIC VRSS_STRESS_SECONDS=$stress_secs \
		VRSS_STRESS_ROUNDS=$stress_rounds $ksft $two "${drv_veth[@]}" \
		-- env VRSS_HELD_CHANGES="$held_nic1" $ksft virtio.sh $tools "${drv[@]}"
	# Two queue pairs: both vCPUs deliver.
	suite "selftests-$series-nic2" tools/vm/run --kernel "$series" --nic 2 --timeout 900 -- \
		tools/scripts/guest-all.sh env VRSS_HELD_CHANGES="$held_nic2" $ksft virtio.sh
	# Device mode, in the table of virtio-net with QEMU's RSS and (on
	# 6.12; check-full: both kernels) of igb, 2 queues each.
	suite "device-$series" tools/vm/run --kernel "$series" --nic 2 --nic-model virtio-rss \
		--timeout 900 -- $ksft device.sh
	if [ "$full" = 1 ] || [ "$series" = 6.12 ]; then
		suite "device-$series-igb" tools/vm/run --kernel "$series" --nic 2 --nic-model igb \
			--timeout 900 -- $ksft device.sh
		# Spread queues keep off an isolated vCPU (3 vCPUs, CPU 2
		# isolated; check-full: both kernels).
		suite "isolated-$series" tools/vm/run --kernel "$series" --cpus 3 \
			--append isolcpus=2 --append nohz_full=2 --timeout 600 -- $ksft isolated.sh
	fi
	# What vrss costs below the threshold, in instructions (the meter
	# slows the guest: a boot of its own), on veth and the NIC above; 3
	# rounds, about 2 minutes.
	suite "cost-$series" tools/vm/run --kernel "$series" $cost_nic --count-insns --timeout 900 -- \
		env VRSS_COST_ROUNDS=$cost_rounds KSELFTEST_TIMEOUT=800 $ksft cost.sh
	collect_dkms
	# With 4 vCPUs (2 host cores: slow): rebalancing, which needs them,
	# and on 6.12 (check-full: both) the steering tests.  First, what the
	# dkms suite installed: modprobe from its trees, vrss0 up.
	suite "selftests-$series-4cpu" tools/vm/run --kernel "$series" --cpus 4 --timeout 1800 -- \
		tools/scripts/guest-all.sh tools/scripts/dkms-guest.sh --ktap \
		"$series guest: modprobe vrss from DKMS and from make install, vrss0 up, rxhash on" \
		"$repo/build/dkms/root" "$repo/build/dkms/inst" -- \
		env VRSS_STRESS_SECONDS=$stress_secs VRSS_STRESS_ROUNDS=$stress_rounds $ksft $four
done <<< "$kernels"
collect_dkms
# The cloud kernels: the module built for them (make modules-all, and
# DKMS's builds above), loaded from DKMS's tree, virtio.sh (the data path
# on the NIC, steering, order, teardown) and the veth selftests that load
# and tear down vrss0 (about 2 minutes a kernel; check-full: every veth
# selftest, attach.sh and examples.sh, about 9).  The rig shares the
# host's files over virtio-fs with them (no 9p).
cloud_progs="load.sh teardown.sh"
[ "$full" = 0 ] || cloud_progs=$all_progs
while read -r series kver; do
	suite "selftests-$series" tools/vm/run --kernel "$series" --nic 1 --timeout 1800 -- \
		tools/scripts/guest-all.sh tools/scripts/dkms-guest.sh --ktap \
		"$series guest: modprobe vrss from DKMS and from make install, vrss0 up, rxhash on" \
		"$repo/build/dkms/root" "$repo/build/dkms/inst" -- \
		env -u VRSS_NIC VRSS_STRESS_SECONDS=$stress_secs VRSS_STRESS_ROUNDS=$stress_rounds \
		$ksft $cloud_progs -- env VRSS_HELD_CHANGES="$held_cloud" $ksft $cloud_nic_progs
done <<< "$cloud"
# The Debian package, last: it installs into this machine's /lib/modules
# (DKMS, from apt) what the guests before must not load, boots a guest of
# each kernel to load it, and purges it.
suite deb tools/scripts/deb-check.sh

echo
echo "=== summary ($(($(date +%s) - t0)) s)"
printf '%s\n' "${summary[@]}"
echo "test cases: $cases_pass passed, $cases_fail failed, $cases_skip skipped" \
     "(skipped: grep -h '# SKIP' build/check/*.log)"
# Every guest suite, 5 a kernel, igb's and isolated's, 1 a cloud kernel:
# one missing is a failure too.
guest_suites=$(printf '%s\n' "${summary[@]}" | grep -cE '^(selftests|cost|device|isolated)-')
# Per kernel: selftests, nic2, cost, 4cpu, device; igb's and isolated's on
# 6.12 (check-full: each).
igb_suites=$(grep -c '^6\.12 ' <<< "$kernels")
[ "$full" = 0 ] || igb_suites=$(wc -l <<< "$kernels")
want_suites=$((5 * $(wc -l <<< "$kernels") + 2 * igb_suites + $(wc -l <<< "$cloud")))
echo "guest suites: $guest_suites run of $want_suites ($(awk '{ printf "%s%s", s, $1; s = ", " }' <<< "$kernels
$cloud"))"
where_time
# Last, what each failed suite's log says: CI shows the end of this.
[ ${#why[@]} = 0 ] || printf '%s\n' "${why[@]}"
[ "$failed_suites" = 0 ] && [ "$guest_suites" = "$want_suites" ]
