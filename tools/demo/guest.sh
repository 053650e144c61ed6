#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the demo guest (tools/demo/demo.sh boots it): the vRSS experiment.
# vrss0 sits on the guest's virtio-net NIC ($VRSS_NIC, tools/vm/run --nic);
# a multi-stream sender on the host (tools/vm/host), outside the guest,
# sends to it: with vRSS off (rxhash off: every frame is received on the
# vCPU the NIC's interrupt lands on), then on (rxhash on, default
# threshold: spreading once that vCPU is busy), ROUNDS times in turn, the
# odd rounds off first, the even ones on first.
# With RULES > 0 the guest is receive-bound: that many firewall rules on
# input (tools/bench/firewall.sh).  Writes off-R.json and on-R.json
# (vrss-ttcp's report, the receiver's side) and the width changes traced
# during each run (vrss:vrss_width_change, CLOCK_MONOTONIC time stamps like
# vrss-ttcp's) to OUT, and the firewall's size to OUT/rules.txt.
#
#   guest.sh OUT SECONDS STREAMS [tcp|udp] [ROUNDS [RULES]]

set -e
out=$1 secs=$2 streams=$3 proto=${4:-tcp} rounds=${5:-1} rules=${6:-0}
rx_opts= tx_opts=
if [ "$proto" = udp ]; then
	# Paced: an unpaced UDP flood into a saturated guest is receive
	# livelock, whatever spreads it.
	rx_opts=-u
	tx_opts="-u -l ${VRSS_DEMO_LEN:-256} -b ${VRSS_DEMO_UDP_MBIT:-10}"
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
ttcp=$repo/build/tools/vrss-ttcp
source "$repo/selftests/drivers/net/vrss/lib.sh"
mkdir -p "$out"

[ -n "${VRSS_NIC:-}" ] || { echo "demo: no virtio-net NIC (tools/vm/run --nic 1)" >&2; exit 1; }
GUEST=198.51.100.1
HOST=198.51.100.2
trap '"$repo/tools/bench/firewall.sh" 0 2> /dev/null; ip link del vrss0 2> /dev/null; vrss_unload' EXIT
vrss_load
echo "$rules" > "$out/rules.txt"
if [ "$rules" -gt 0 ]; then
	"$repo/tools/bench/firewall.sh" "$rules"
	echo "demo: a receive-bound guest: $rules firewall rules on input, walked by every packet, so that the receive path, not the application, is what one vCPU cannot keep up with (as in a guest on a fast link, whose softirq caps one vCPU; RULES=0: none)"
fi
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
	net.ipv6.conf.$VRSS_NIC.disable_ipv6=1
ip link set "$VRSS_NIC" up
ip link add link "$VRSS_NIC" name vrss0 numrxqueues "$(nproc)" type vrss
ip link set vrss0 up
ip addr add $GUEST/24 dev vrss0
ip neigh replace $HOST dev vrss0 nud permanent \
	lladdr "$("$repo/tools/vm/host" run cat /sys/class/net/vrsstap0/address)"
vdev=$(basename "$(readlink -f /sys/class/net/$VRSS_NIC/device)")
irq=$(awk -v d="^$vdev-input" '$NF ~ d { sub(":", "", $1); print $1; exit }' /proc/interrupts)
echo "demo: $VRSS_NIC's receive interrupt goes to vCPU(s) $(cat /proc/irq/$irq/effective_affinity_list 2>/dev/null || echo '?')"

run() {
	local name=$1
	"$ttcp" -r $rx_opts -m "$streams" -t "$secs" -W 0 --json > "$out/$name.json" &
	local rx=$!
	sleep 0.5
	vrss_trace_on vrss_width_change
	"$repo/tools/vm/host" run "$ttcp" -s $GUEST $tx_opts -m "$streams" -t $((secs + 1)) -W 0 > /dev/null
	wait $rx
	grep ' vrss_width_change: ' $VRSS_TRACING/trace > "$out/$name-widths.txt" || true
	vrss_trace_off
}
[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING
echo mono > $VRSS_TRACING/trace_clock

off() {
	echo "demo: round $r of $rounds: vRSS off (rxhash off), $streams $proto streams, $secs s"
	ethtool -K vrss0 rxhash off
	run "off-$r"
}
on() {
	echo "demo: round $r of $rounds: vRSS on (rxhash on, threshold $(vrss_sys threshold) %)"
	ethtool -K vrss0 rxhash on
	run "on-$r"
}
# Alternated, and which goes first too: a guest that warms up or slows
# down over the runs favours neither.
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then off; on; else on; off; fi
done
ethtool -S vrss0 | grep -E 'spread_events|contract_events|rebalance_events|bucket_moves|rx_held' > "$out/on-stats.txt"
