#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the demo guest (tools/demo/demo.sh boots it): the vRSS experiment.
# A multi-stream sender in the peer namespace floods vrss0; first with
# vRSS off (rxhash off: one queue, one vCPU does all the receive work), then
# on (rxhash on, default threshold: spreading once that vCPU is busy).
# Writes off.json and on.json (vrss-ttcp's report) and the width changes
# traced during each run (vrss:vrss_width_change, CLOCK_MONOTONIC time
# stamps like vrss-ttcp's) to OUT.
#
#   guest.sh OUT SECONDS STREAMS [tcp|udp]

set -e
out=$1 secs=$2 streams=$3 proto=${4:-tcp}
# The sender plays the remote host on the last vCPU; receivers go where
# the scheduler puts them unless VRSS_DEMO_RX_CPU pins them.
tx_cpu=${VRSS_DEMO_TX_CPU:-$(($(nproc) - 1))}
rx_pin=${VRSS_DEMO_RX_CPU:+,$VRSS_DEMO_RX_CPU}
rx_opts= tx_opts=
if [ "$proto" = udp ]; then
	# Small datagrams, 64 per system call, segmented before the wire.
	rx_opts=-u
	tx_opts="-u -l ${VRSS_DEMO_LEN:-256} -g 64"
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
ttcp=$repo/build/tools/vrss-ttcp
source "$repo/selftests/drivers/net/vrss/lib.sh"
mkdir -p "$out"

trap 'vrss_net_cleanup; vrss_unload' EXIT
vrss_load
vrss_net_setup numrxqueues "$(nproc)"
ip netns exec $VRSS_PEER ip link set lo up
ip netns exec $VRSS_PEER ethtool -K veth1 gso off tx-udp-segmentation off > /dev/null

run() {
	local name=$1
	"$ttcp" -r $rx_opts -m "$streams$rx_pin" -t "$secs" -W 0 --json > "$out/$name.json" &
	local rx=$!
	sleep 0.5
	vrss_trace_on vrss_width_change
	ip netns exec $VRSS_PEER "$ttcp" -s $VRSS_IP $tx_opts -m "$streams,$tx_cpu" -t $((secs + 1)) -W 0
	wait $rx
	grep ' vrss_width_change: ' $VRSS_TRACING/trace > "$out/$name-widths.txt" || true
	vrss_trace_off
}
[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING
echo mono > $VRSS_TRACING/trace_clock

echo "demo: vRSS off (rxhash off), $streams $proto streams, $secs s"
ethtool -K vrss0 rxhash off
run off
echo "demo: vRSS on (rxhash on, threshold $(vrss_sys threshold) %)"
ethtool -K vrss0 rxhash on
run on
ethtool -S vrss0 | grep -E 'spread_events|contract_events|bucket_moves|rx_held' > "$out/on-stats.txt"
