#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the bench guest (tools/bench/bench.sh boots it).  In one boot,
# ROUNDS alternating rounds (ABAB...) of every receive configuration:
#   plain   the lower (veth0) alone, addresses on it
#   rps     the same with RPS over every vCPU
#   off     vrss0, rxhash off
#   single  vrss0, rxhash on, threshold 100 (never spreads)
#   spread  vrss0, rxhash on, threshold 0 (plain RSS)
#   gated   vrss0, rxhash on, threshold 80 (the default)
# each flooded for SECONDS with UDP (8 streams of 256-byte datagrams sent 64
# per system call) and with TCP (8 streams), the sender on the last vCPU;
# plus a light paced UDP load (8 x 2 Mbit/s) on plain, rps and gated, for
# the cost below the threshold.  vrss-ttcp's JSON goes to OUT/; the width
# changes of gated runs to OUT/*-widths.txt; 64-flow balance to
# OUT/balance.txt.
#
#   guest.sh OUT ROUNDS SECONDS
set -eu
out=$1 rounds=$2 secs=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
ttcp=$repo/build/tools/vrss-ttcp
source "$repo/selftests/drivers/net/vrss/lib.sh"
mkdir -p "$out"
nq=$(nproc)
last=$((nq - 1))
mask=$(printf '%x' $(((1 << nq) - 1)))

cleanup() {
	vrss_trace_off
	ip link del vrss0 2> /dev/null || true
	ip link del veth0 2> /dev/null || true
	ip netns del $VRSS_PEER 2> /dev/null || true
	vrss_unload
}
trap cleanup EXIT
vrss_load
modprobe veth
ip netns add $VRSS_PEER
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip netns exec $VRSS_PEER sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip link add veth0 type veth peer name veth1 netns $VRSS_PEER
ip link set veth0 up
ip netns exec $VRSS_PEER ip link set lo up
ip netns exec $VRSS_PEER ip link set veth1 up
ip netns exec $VRSS_PEER ip addr add $VRSS_PEER_IP/24 dev veth1
ip netns exec $VRSS_PEER ethtool -K veth1 gso off tx-udp-segmentation off > /dev/null
# vrss0 takes veth0's MAC: one neighbour entry on the peer serves both.
ip netns exec $VRSS_PEER ip neigh replace $VRSS_IP dev veth1 nud permanent \
	lladdr "$(cat /sys/class/net/veth0/address)"
peer_mac=$(ip netns exec $VRSS_PEER cat /sys/class/net/veth1/address)
[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING
echo mono > $VRSS_TRACING/trace_clock

on() {
	ip addr replace $VRSS_IP/24 dev "$1"
	ip neigh replace $VRSS_PEER_IP dev "$1" nud permanent lladdr "$peer_mac"
}
use() {
	echo 0 > /sys/class/net/veth0/queues/rx-0/rps_cpus
	case $1 in
	plain|rps)
		ip link del vrss0 2> /dev/null || true
		on veth0
		[ "$1" = plain ] || echo "$mask" > /sys/class/net/veth0/queues/rx-0/rps_cpus
		;;
	*)
		ip addr flush dev veth0
		[ -e /sys/class/net/vrss0 ] ||
			ip link add link veth0 name vrss0 numrxqueues "$nq" type vrss
		ip link set vrss0 up
		on vrss0
		case $1 in
		off)	ethtool -K vrss0 rxhash off ;;
		single)	vrss_sys_set threshold 100; ethtool -K vrss0 rxhash on ;;
		spread)	vrss_sys_set threshold 0; ethtool -K vrss0 rxhash on ;;
		gated)	vrss_sys_set threshold 80; ethtool -K vrss0 rxhash on ;;
		esac
		;;
	esac
	sleep 0.3
}

# run NAME PROTO [paced]: one measurement, vrss-ttcp JSON to OUT/NAME.json.
run() {
	local name=$1 proto=$2 rx=() tx=()
	[ "$proto" = udp ] && { rx=(-u); tx=(-u -l 256 -g 64); }
	[ "${3:-}" = paced ] && tx=(-u -l 256 -b 2)
	"$ttcp" -r "${rx[@]}" -m 8 -t "$secs" -W 1 --json > "$out/$name.json" &
	local pid=$!
	sleep 0.3
	[ -e /sys/class/net/vrss0 ] && vrss_trace_on vrss_width_change
	ip netns exec $VRSS_PEER "$ttcp" -s $VRSS_IP "${tx[@]}" -m "8,$last" -t $((secs + 2)) -W 0
	wait $pid
	if [ -e /sys/class/net/vrss0 ]; then
		grep ' vrss_width_change: ' $VRSS_TRACING/trace > "$out/$name-widths.txt" || true
		vrss_trace_off
	fi
}

configs=(plain rps off single spread gated)
for ((r = 1; r <= rounds; r++)); do
	for proto in udp tcp; do
		for c in "${configs[@]}"; do
			use "$c"
			run "$proto-$c-$r" "$proto"
		done
	done
	for c in plain rps gated; do
		use "$c"
		run "light-$c-$r" udp paced
	done
	echo "bench: round $r of $rounds done"
done

# Balance of 64 flows over the queues at full width.
use spread
b=$(vrss_queue_packets vrss0)
ip netns exec $VRSS_PEER "$VRSS_DIR/vrss_udp.py" send $VRSS_IP 64 20
sleep 0.5
vrss_queue_delta "$b" "$(vrss_queue_packets vrss0)" > "$out/balance.txt"
