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
# plus a light paced UDP load (8 x 0.25 Mbit/s of 1400-byte datagrams, about
# 180 a second: a few percent of a TCG vCPU) on plain, rps and gated, for
# the cost below the threshold.  And the receive-bound guest (fw): the same
# 8 TCP streams into a guest whose input chain holds a firewall ruleset of
# VRSS_BENCH_RULES rules (1000; tools/bench/firewall.sh) that every packet
# walks, so that one vCPU's receive work, not the application, is the
# limit (plain's interrupt vCPU spends nearly all its time in softirq
# while the other has time to spare).  vrss-ttcp's JSON goes to OUT/; the
# width changes of gated runs to OUT/*-widths.txt; what vrss did in a run
# (its IPIs, packets per queue, rebalances) to
# OUT/*-vrss.txt, and for TCP runs through vrss0, half-way through, the
# width, the table in effect and the streams' ports (OUT/*-flows.txt:
# which queue each stream was on; the key is in OUT/rxfh.txt); 64-flow
# balance to OUT/balance.txt.
#
# VRSS_BENCH_ONLY narrows a boot to one workload: collide, fw, latency,
# sweep (the offered load stepping up, see below) or insns (under
# --count-insns: every window's instructions, OUT/*-insns.txt, and an
# idle window a round).
#
# Under `tools/vm/run --nic Q` ($VRSS_NIC set) the lower is that
# virtio-net NIC and the sender is outside the guest, on the host behind
# its tap (tools/vm/host), like the remote sender of a receive benchmark:
# TCP only (the host's UDP is capped by QEMU's tap backend, not by the
# guest), 8 streams, and the light load as the same paced UDP, plus
# request/response latency at a light rate (sockperf, OUT/latency-*.txt);
# with one queue pair all six configurations, with two (static
# multi-queue, what users pick today) plain, off, gated and rps.  With one
# queue pair also colliding heavy flows: 4 TCP streams from the host whose
# source ports are chosen so that Toeplitz (Microsoft's key) and the
# default table put all of them on queue 1, through vrss at the default
# threshold with rebalancing on (collide-rebal) and off (collide-static),
# and through RPS (collide-rps; RPS hashes them its own way).
#
#   guest.sh OUT ROUNDS SECONDS
set -eu
out=$1 rounds=$2 secs=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
ttcp=$repo/build/tools/vrss-ttcp
idle=
source "$repo/selftests/drivers/net/vrss/lib.sh"
mkdir -p "$out"
nq=$(nproc)
last=$((nq - 1))
mask=$(printf '%x' $(((1 << nq) - 1)))

cleanup() {
	vrss_trace_off
	"$repo/tools/bench/firewall.sh" 0 2> /dev/null || true
	ip link del vrss0 2> /dev/null || true
	ip link del veth0 2> /dev/null || true
	ip netns del $VRSS_PEER 2> /dev/null || true
	vrss_unload
}
trap cleanup EXIT
vrss_load
[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING
echo mono > $VRSS_TRACING/trace_clock

if [ -n "${VRSS_NIC:-}" ]; then
	lower=$VRSS_NIC
	GUEST=198.51.100.1
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		net.ipv6.conf.$lower.disable_ipv6=1
	ip link set "$lower" up
	peer_mac=$("$repo/tools/vm/host" run cat /sys/class/net/vrsstap0/address)
	rxqs=$(ls -d /sys/class/net/$lower/queues/rx-* | wc -l)
	# The sender, on the host: NAME PROTO-ARGS...
	send() {
		"$repo/tools/vm/host" run "$ttcp" -s $GUEST "$@" -m 8 -t $((secs + 2)) -W 0 > /dev/null
	}
	protos=(tcp fw)
	if [ "$rxqs" -gt 1 ]; then
		configs=(plain rps off gated)
	else
		configs=(plain rps off single spread gated)
	fi
	light_configs=(plain rps off gated)
	latency_configs=(plain rps off gated)
	collide_configs=()
	[ "$rxqs" -gt 1 ] || collide_configs=(collide-static collide-rebal collide-rps)
	# VRSS_BENCH_ONLY=collide: that case alone (make bench's 4-vCPU guest).
	if [ "${VRSS_BENCH_ONLY:-}" = collide ]; then
		protos=()
		light_configs=()
		latency_configs=()
	fi
else
	lower=veth0
	GUEST=$VRSS_IP
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
	rxqs=1
	send() {
		ip netns exec $VRSS_PEER "$ttcp" -s $VRSS_IP "$@" -m "8,$last" -t $((secs + 2)) -W 0
	}
	protos=(udp tcp fw)
	configs=(plain rps off single spread gated)
	light_configs=(plain rps gated)
	latency_configs=()
	collide_configs=()
fi
# VRSS_BENCH_ONLY=fw: the receive-bound workload alone.
if [ "${VRSS_BENCH_ONLY:-}" = fw ]; then
	protos=(fw)
	light_configs=()
	latency_configs=()
	collide_configs=()
fi
# VRSS_BENCH_ONLY=insns (under tools/vm/run --count-insns): instructions
# per frame and per byte, each configuration on the light load and the
# two floods, and an idle window a round.
if [ "${VRSS_BENCH_ONLY:-}" = insns ]; then
	[ -n "${VRSS_INSNS:-}" ] || { echo "guest.sh: insns needs the meter (tools/vm/run --count-insns)" >&2; exit 1; }
	protos=(tcp fw)
	light_configs=("${configs[@]}")
	latency_configs=()
	collide_configs=()
	idle=1
fi
# VRSS_BENCH_ONLY=sweep: the load sweep, in the receive-bound guest: 8 TCP
# streams from the host whose offered load steps up from light to beyond
# what plain takes (VRSS_SWEEP_MBIT, in total), plain, RPS and gated at each
# step in turn.
sweep_steps=()
sweep_configs=()
if [ "${VRSS_BENCH_ONLY:-}" = sweep ]; then
	protos=()
	light_configs=()
	latency_configs=()
	collide_configs=()
	read -r -a sweep_steps <<< "${VRSS_SWEEP_MBIT:-100 200 400 600 800 1000 1200 1500 2000 2500}"
	sweep_configs=(plain rps gated)
fi
# VRSS_BENCH_ONLY=latency: the round trips alone.
if [ "${VRSS_BENCH_ONLY:-}" = latency ]; then
	protos=()
	light_configs=()
	collide_configs=()
fi
rules=${VRSS_BENCH_RULES:-1000}
echo "$rules" > "$out/rules.txt"
MSKEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa
cbase=
peer_ip=$(awk -F. -v OFS=. '{ $4 = ($4 == 1 ? 2 : 1); print }' <<< "$GUEST")

on() {
	ip addr replace $GUEST/24 dev "$1"
	ip neigh replace "$peer_ip" dev "$1" nud permanent lladdr "$peer_mac"
}
rps() {
	local q
	for q in /sys/class/net/$lower/queues/rx-*; do
		echo "$1" > "$q/rps_cpus"
	done
}
use() {
	rps 0
	case $1 in
	plain|rps|collide-rps)
		ip link del vrss0 2> /dev/null || true
		on $lower
		[ "$1" = plain ] || rps "$mask"
		;;
	*)
		ip addr flush dev $lower
		[ -e /sys/class/net/vrss0 ] ||
			ip link add link $lower name vrss0 numrxqueues "$nq" type vrss
		ip link set vrss0 up
		on vrss0
		vrss_sys_set rebalance 1
		case $1 in
		collide-*)
			vrss_sys_set threshold 80
			[ "$1" = collide-rebal ] || vrss_sys_set rebalance 0
			ethtool -X vrss0 hkey $MSKEY
			ethtool -K vrss0 rxhash on
			# Source ports whose 4 streams all hash to queue 1.
			[ -n "$cbase" ] || read -r cbase cstep cport cbuckets < <("$repo/selftests/drivers/net/vrss/vrss_udp.py" \
				pickbase "$peer_ip" $GUEST vrss0 1 4 5001)
			;;
		off)	ethtool -K vrss0 rxhash off ;;
		single)	vrss_sys_set threshold 100; ethtool -K vrss0 rxhash on ;;
		spread)	vrss_sys_set threshold 0; ethtool -K vrss0 rxhash on ;;
		gated)	vrss_sys_set threshold 80; ethtool -K vrss0 rxhash on ;;
		esac
		;;
	esac
	sleep 0.3
	# Gated starts from a quiet SINGLE: the setup's execs (40-140 ms of a
	# vCPU each under TCG) must not be what spreads it.
	if [ "$1" = gated ]; then
		vrss_wait_state single 5 50 > /dev/null ||
			echo "bench: vrss0 not quiet after 5 s ($(vrss_sys state), primary_load $(vrss_sys primary_load))" >&2
	fi
}

# flows NAME: half-way through a TCP run through vrss0, the width, the
# table in effect and the TCP sockets (/proc/net/tcp{,6}: the host's source
# ports are ephemeral) to OUT/NAME-flows.txt, for the report to say which
# queue each stream was on.
flows() {
	sleep $((secs / 2 + 1))
	{
		echo "width $(< /sys/class/net/vrss0/vrss/width)"
		echo "indir $(< /sys/class/net/vrss0/vrss/effective_indir)"
		echo "$(< /proc/net/tcp)"
		echo "$(< /proc/net/tcp6)"
	} > "$out/$1-flows.txt"
}

# meter NAME: with the instruction meter on (tools/vm/run --count-insns),
# from 1.5 s into a run to 0.5 s before the receiver's end, every vCPU's
# kernel and user instructions (two marks, lines "a ..." and "b ...": SEQ
# VCPU K0 U0 K1 U1 ...) and the frames and bytes the lower received in
# between, to OUT/NAME-insns.txt.  Without traffic: an idle window.
meter() {
	local a b p0 p1 b0 b1 t0
	sleep 1.5
	p0=$(< /sys/class/net/$lower/statistics/rx_packets)
	b0=$(< /sys/class/net/$lower/statistics/rx_bytes)
	t0=${EPOCHREALTIME/[.,]/}
	a=$("$VRSS_INSN" mark)
	sleep $((secs - 2))
	b=$("$VRSS_INSN" mark)
	echo "us $((${EPOCHREALTIME/[.,]/} - t0))" \
	     "packets $(($(< /sys/class/net/$lower/statistics/rx_packets) - p0))" \
	     "bytes $(($(< /sys/class/net/$lower/statistics/rx_bytes) - b0))" > "$out/$1-insns.txt"
	echo "a $a" >> "$out/$1-insns.txt"
	echo "b $b" >> "$out/$1-insns.txt"
}

# run NAME PROTO [paced | MBIT]: one measurement, vrss-ttcp JSON to
# OUT/NAME.json; paced: the light UDP load; MBIT: TCP, each stream paced
# to MBIT Mbit/s.
run() {
	local name=$1 proto=$2 rx=() tx=() ipis0 pkts0 q0 r0 sampler= metering=
	[ "$proto" = udp ] && { rx=(-u); tx=(-u -l 256 -g 64); }
	case ${3:-} in
	paced) tx=(-u -l 1400 -b 0.25) ;;
	[0-9]*) tx=(-b "$3") ;;
	esac
	"$ttcp" -r "${rx[@]}" -m 8 -t "$secs" -W 1 --json > "$out/$name.json" &
	local pid=$!
	sleep 0.3
	if [ -e /sys/class/net/vrss0 ]; then
		vrss_trace_on vrss_width_change
		ipis0=$(vrss_stat_sum vrss0 ipis)
		pkts0=$(vrss_stat_sum vrss0 packets)
		q0=$(vrss_queue_packets vrss0)
		r0=$(vrss_stat vrss0 rebalance_events)
		if [ "$proto" != udp ]; then
			flows "$name" &
			sampler=$!
		fi
	fi
	if [ -n "${VRSS_INSNS:-}" ]; then
		meter "$name" &
		metering=$!
	fi
	send "${tx[@]}"
	wait $pid
	[ -z "$sampler" ] || wait $sampler
	[ -z "$metering" ] || wait $metering
	if [ -e /sys/class/net/vrss0 ]; then
		# The IPIs vrss itself sent (the JSON's count is every IPI).
		local q
		q=$(vrss_queue_delta "$q0" "$(vrss_queue_packets vrss0)")
		echo "ipis $(($(vrss_stat_sum vrss0 ipis) - ipis0))" \
		     "packets $(($(vrss_stat_sum vrss0 packets) - pkts0))" \
		     "rebalances $(($(vrss_stat vrss0 rebalance_events) - r0))" \
		     "queue_packets ${q// /,}" > "$out/$name-vrss.txt"
		grep ' vrss_width_change: ' $VRSS_TRACING/trace > "$out/$name-widths.txt" || true
		vrss_trace_off
	fi
}

# run_latency NAME: request/response round trips from the host at a light
# rate (sockperf ping-pong, UDP, 200 a second for SECONDS, 64 bytes), to
# OUT/NAME.txt: sockperf's summary (full round trips, usec), and the IPIs
# of the run: all of them (/proc/interrupts CAL) and vrss's own.
run_latency() {
	local name=$1 pid cal0 ipis0=
	sockperf server -i $GUEST -p 11111 > /dev/null 2>&1 &
	pid=$!
	sleep 0.5
	cal0=$(vrss_cal_ipis)
	[ ! -e /sys/class/net/vrss0 ] || ipis0=$(vrss_stat_sum vrss0 ipis)
	"$repo/tools/vm/host" run sockperf ping-pong -i $GUEST -p 11111 --full-rtt \
		--mps=200 -m 64 -t "$secs" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' |
		grep -E 'dropped messages|observation|percentile' > "$out/$name.txt"
	echo "cal_ipis $(($(vrss_cal_ipis) - cal0))" >> "$out/$name.txt"
	[ -z "$ipis0" ] || echo "vrss_ipis $(($(vrss_stat_sum vrss0 ipis) - ipis0))" >> "$out/$name.txt"
	kill $pid
	wait $pid 2> /dev/null || true
}

# run_collide NAME: the 4 colliding streams from the host; the rebalances
# and the streams' queues in the middle of the measurement (the table in
# effect) to OUT/NAME-vrss.txt.
run_collide() {
	local name=$1 r0 b q= sampler=
	"$ttcp" -r -m 4 -p "$cport" -t "$secs" -W 1 --json > "$out/$name.json" &
	local pid=$!
	sleep 0.3
	if [ -e /sys/class/net/vrss0 ]; then
		r0=$(vrss_stat vrss0 rebalance_events)
		{ sleep $((secs / 2 + 1)); cat /sys/class/net/vrss0/vrss/effective_indir > "$out/$name-eff.txt"; } &
		sampler=$!
	fi
	"$repo/tools/vm/host" run "$ttcp" -s $GUEST -m 4 -p "$cport" -P "$cbase,$cstep" \
		-t $((secs + 2)) -W 0 > /dev/null
	wait $pid
	if [ -n "$sampler" ]; then
		wait $sampler
		read -r -a eff < "$out/$name-eff.txt"
		for b in $cbuckets; do q+="${eff[b]},"; done
		echo "rebalances $(($(vrss_stat vrss0 rebalance_events) - r0)) queues ${q%,}" > "$out/$name-vrss.txt"
	fi
}

use gated
ethtool -x vrss0 > "$out/rxfh.txt"
for ((r = 1; r <= rounds; r++)); do
	for proto in "${protos[@]}"; do
		[ "$proto" != fw ] || "$repo/tools/bench/firewall.sh" "$rules"
		for c in "${configs[@]}"; do
			use "$c"
			run "$proto-$c-$r" "${proto/fw/tcp}"
		done
		[ "$proto" != fw ] || "$repo/tools/bench/firewall.sh" 0
	done
	if [ -n "${idle:-}" ]; then
		use plain
		meter "idle-$r"
	fi
	for c in "${light_configs[@]}"; do
		use "$c"
		run "light-$c-$r" udp paced
	done
	[ ${#sweep_steps[@]} = 0 ] || "$repo/tools/bench/firewall.sh" "$rules"
	for step in "${sweep_steps[@]}"; do
		for c in "${sweep_configs[@]}"; do
			use "$c"
			run "sweep-$c-$step-$r" tcp "$(awk -v t="$step" 'BEGIN { print t / 8 }')"
		done
	done
	[ ${#sweep_steps[@]} = 0 ] || "$repo/tools/bench/firewall.sh" 0
	for c in "${latency_configs[@]}"; do
		use "$c"
		run_latency "latency-$c-$r"
	done
	for c in "${collide_configs[@]}"; do
		use "$c"
		run_collide "$c-$r"
	done
	echo "bench: round $r of $rounds done"
done

[ -z "${VRSS_NIC:-}" ] && [ "${VRSS_BENCH_ONLY:-}" != fw ] || exit 0
# Balance of 64 flows over the queues at full width.
use spread
b=$(vrss_queue_packets vrss0)
ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" send $VRSS_IP 64 20
sleep 0.5
vrss_queue_delta "$b" "$(vrss_queue_packets vrss0)" > "$out/balance.txt"
