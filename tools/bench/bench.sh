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
# Environment: ROUNDS (5), SECONDS_PER_RUN (5), CPU_COUNTS ("2 4", veth
# guests), NICS ("1 2", queue pairs of the virtio-net guests), KERNEL
# (6.12).  An empty CPU_COUNTS or NICS skips those guests.
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
tools/bench/toeplitz.sh > build/bench/toeplitz.json
mkdir -p bench
python3 tools/bench/report.py build/bench bench
