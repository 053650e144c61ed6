#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: the vRSS experiment in a guest.  Boots Debian's 6.12 kernel
# under QEMU (CPUS vCPUs: 4 when the host has 4 cores, else as many as it
# has), loads vrss on a veth lower whose far end sits in a sender
# namespace, floods it with STREAMS streams (vrss-ttcp) with vRSS off,
# then on, and prints the comparison and draws build/demo/demo.png.
#
# Environment: CPUS, STREAMS (8), SECONDS_PER_RUN (10), KERNEL (6.12),
# PROTO (udp: 256-byte datagrams in bursts of 64; or tcp).
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
host_cpus=$(nproc)
cpus=${CPUS:-$((host_cpus < 4 ? host_cpus : 4))}
streams=${STREAMS:-8}
secs=${SECONDS_PER_RUN:-10}
series=${KERNEL:-6.12}
proto=${PROTO:-udp}
out=build/demo

tools/scripts/deps.sh
kver=$(tools/scripts/kernels.sh | awk -v s="$series" '$1 == s { print $2 }')
[ -n "$kver" ] || { echo "demo: no Debian $series kernel installed" >&2; exit 1; }
tools/scripts/build-module.sh "$kver"
make -s tools

rm -rf "$out"
mkdir -p "$out"
echo "demo: guest with $cpus vCPUs ($series), $streams TCP streams, $secs s per run"
tools/vm/run --kernel "$series" --cpus "$cpus" --timeout $((4 * secs + 300)) -- \
	tools/demo/guest.sh "$out" "$secs" "$streams" "$proto"
python3 tools/demo/report.py "$out"
