#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: the vRSS off/on experiment, in a guest.  Boots Debian's
# 6.12 kernel under QEMU with 2 vCPUs and the NIC a KVM guest has: a
# virtio-net NIC with one queue pair, whose far end is a tap on the host
# (tools/vm/run --nic 1).  vrss0 sits on it; vrss-ttcp on the host, like
# the remote sender of a receive benchmark, sends STREAMS TCP streams
# (PROTO=udp: paced UDP, 256-byte datagrams) into the guest, with vRSS
# off and on, ROUNDS times, alternating which goes first; the medians are
# printed and build/demo/demo.png drawn (from the run of each whose
# throughput is the median).
#
# The guest is receive-bound, like a guest on a fast link whose softirq
# work caps one vCPU: a firewall ruleset of RULES rules on input
# (tools/bench/firewall.sh) that every packet walks makes the receive
# path, not the receiving application, what one vCPU cannot keep up with.
# Without it (RULES=0) a TCG guest's application copy costs as much as the
# receive path, both vCPUs saturate whatever spreads, and there is nothing
# for vRSS to win.
#
# Environment: CPUS (2), STREAMS (8), SECONDS_PER_RUN (10), ROUNDS (3),
# RULES (1000), KERNEL (6.12), PROTO (tcp, or udp), UDP_MBIT (10 per
# stream).
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
cpus=${CPUS:-2}
streams=${STREAMS:-8}
secs=${SECONDS_PER_RUN:-10}
series=${KERNEL:-6.12}
proto=${PROTO:-tcp}
rounds=${ROUNDS:-3}
rules=${RULES:-1000}
out=build/demo

tools/scripts/deps.sh
kver=$(tools/scripts/kernels.sh | awk -v s="$series" '$1 == s { print $2 }')
[ -n "$kver" ] || { echo "demo: no Debian $series kernel installed" >&2; exit 1; }
tools/scripts/build-module.sh "$kver"
make -s tools

rm -rf "$out"
mkdir -p "$out"
echo "demo: guest with $cpus vCPUs ($series), virtio-net (1 queue pair), $streams $proto streams from the host, $secs s per run, $rounds rounds"
VRSS_DEMO_UDP_MBIT=${UDP_MBIT:-10} \
tools/vm/run --kernel "$series" --cpus "$cpus" --nic 1 --timeout $((rounds * 2 * (secs + 10) + 300)) -- \
	tools/demo/guest.sh "$out" "$secs" "$streams" "$proto" "$rounds" "$rules"
python3 tools/demo/report.py "$out"
