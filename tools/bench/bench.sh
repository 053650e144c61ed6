#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: vrss against what a user would pick instead, in guests of 2
# and 4 vCPUs (tools/bench/guest.sh: ROUNDS alternating rounds of six
# receive configurations, UDP and TCP, plus a light load), then the Toeplitz
# microbenchmark on the host; medians, spreads and derived ratios in
# bench/results.json and bench/results.md.
#
# Then the same on the NIC a KVM guest has: a 2-vCPU guest with a
# virtio-net NIC of 1 and of 2 queue pairs, the sender on the host
# (tools/vm/run --nic); and colliding heavy flows (rebalancing) in a
# 4-vCPU guest with a 1-queue NIC.
#
# Then the load sweep: the receive-bound guest (tools/bench/firewall.sh)
# as the offered load steps up, plain, RPS and gated: bench/sweep.png.
#
# Then instructions, not time (tools/vm/run --count-insns, the meter):
# per frame under the light load and per byte under the floods, every
# configuration, in guests of their own (the meter slows TCG down):
# INSN_GUESTS names them, nic1 and nic2 (virtio-net, 2 vCPUs) and veth2.
# Those whole windows spread between rounds; what a frame pays more
# through vrss on its own path, the budgeted figure, comes from cost.sh
# (make check's selftest, call by call from the meter's profile) on
# veth and on the NIC with 2 queue pairs and 1: COST_ROUNDS rounds, with
# a frame's cost handed to another vCPU by vrss (spread) and by RPS.
#
# Environment: ROUNDS (5), SECONDS_PER_RUN (5), CPU_COUNTS ("2 4", veth
# guests), NICS ("1 2", queue pairs of the virtio-net guests),
# INSN_GUESTS ("nic1 nic2 veth2"), COST_ROUNDS (5; 0 skips cost.sh),
# SWEEP_ROUNDS (2; 0 skips the sweep),
# SWEEP_MBIT (the sweep's offered loads, Mbit/s in total), KERNEL (6.12),
# VRSS_BENCH_RULES (1000, the receive-bound guest's firewall rules).  An empty CPU_COUNTS, NICS or
# INSN_GUESTS skips those guests.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
rounds=${ROUNDS:-5}
secs=${SECONDS_PER_RUN:-5}
series=${KERNEL:-6.12}

tools/scripts/deps.sh
kver=$(tools/scripts/kernels.sh | awk -v s="$series" '$1 == s { print $2 }')
tools/scripts/build-module.sh "$kver"
make -s tools
rm -rf build/bench
mkdir -p build/bench
for cpus in ${CPU_COUNTS-2 4}; do
	echo "bench: veth, $cpus vCPUs, $rounds rounds of ${secs}-s runs"
	tools/vm/run --kernel "$series" --cpus "$cpus" --timeout $((rounds * 40 * (secs + 5) + 300)) -- \
		tools/bench/guest.sh "build/bench/$cpus" "$rounds" "$secs"
done
for q in ${NICS-1 2}; do
	echo "bench: virtio-net with $q queue pair(s), 2 vCPUs, host sender, $rounds rounds of ${secs}-s runs"
	tools/vm/run --kernel "$series" --cpus 2 --nic "$q" --timeout $((rounds * 40 * (secs + 5) + 300)) -- \
		tools/bench/guest.sh "build/bench/nic$q" "$rounds" "$secs"
done
# Colliding heavy flows need a vCPU to spare: 4 vCPUs, a 1-queue NIC.
if [ -n "${NICS-1 2}" ]; then
	echo "bench: virtio-net with 1 queue pair, 4 vCPUs, colliding heavy flows, $rounds rounds of ${secs}-s runs"
	tools/vm/run --kernel "$series" --cpus 4 --nic 1 --timeout $((rounds * 10 * (secs + 5) + 300)) -- \
		env VRSS_BENCH_ONLY=collide tools/bench/guest.sh build/bench/collide4 "$rounds" "$secs"
fi
# The load sweep: the receive-bound guest on the 1-queue NIC, the offered
# load stepping up (tools/bench/guest.sh, VRSS_BENCH_ONLY=sweep).
if [ "${SWEEP_ROUNDS:-2}" -gt 0 ]; then
	echo "bench: load sweep, virtio-net with 1 queue pair, 2 vCPUs, ${SWEEP_ROUNDS:-2} rounds of ${secs}-s runs"
	tools/vm/run --kernel "$series" --cpus 2 --nic 1 --timeout $((${SWEEP_ROUNDS:-2} * 30 * (secs + 5) + 300)) -- \
		env VRSS_BENCH_ONLY=sweep VRSS_SWEEP_MBIT="${SWEEP_MBIT:-}" tools/bench/guest.sh build/bench/sweep "${SWEEP_ROUNDS:-2}" "$secs"
fi
for g in ${INSN_GUESTS-nic1 nic2 veth2}; do
	case $g in
	nic[0-9]*) where=(--nic "${g#nic}" --cpus 2) ;;
	veth[0-9]*) where=(--cpus "${g#veth}") ;;
	*) echo "bench: INSN_GUESTS: no guest '$g' (nic<Q> or veth<N>)" >&2; exit 2 ;;
	esac
	echo "bench: instructions, $g, $rounds rounds of ${secs}-s runs"
	tools/vm/run --kernel "$series" "${where[@]}" --count-insns --timeout $((rounds * 40 * (secs + 5) + 300)) -- \
		env VRSS_BENCH_ONLY=insns tools/bench/guest.sh "build/bench/insns-$g" "$rounds" "$secs"
done
if [ "${COST_ROUNDS:-5}" -gt 0 ]; then
	echo "bench: the frame's path (cost.sh), veth and virtio-net with 2 and 1 queue pairs, ${COST_ROUNDS:-5} rounds"
	# A budget cost.sh finds exceeded is a result: the report says so.
	tools/vm/run --kernel "$series" --nic 2 --count-insns --timeout 1500 -- \
		env VRSS_COST_ROUNDS="${COST_ROUNDS:-5}" VRSS_COST_SPREAD=1 KSELFTEST_TIMEOUT=1400 \
		tools/scripts/ksft-run.sh cost.sh > build/bench/cost.txt 2>&1 ||
		echo "bench: cost.sh failed (build/bench/cost.txt)" >&2
fi
tools/bench/toeplitz.sh > build/bench/toeplitz.json
mkdir -p bench
python3 tools/bench/report.py build/bench bench
