#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed frames: runts, bad IPv4 header and total lengths, a bad
# checksum, truncated IPv6 headers and extension chains, fragments, VLAN
# and QinQ tags, non-IP, and frames over the MTU, injected with a packet
# socket on the lower's far end, with rxhash on.  For each: the lower
# received every copy, vrss0 delivered every copy (to the primary queue,
# counted as rx_nohash, when there is no whole IP header to hash), and the
# stack then dropped or took them as it does for any device, counted in
# its own counters.  Nothing crashes (the rig fails the run on any oops or
# WARN).

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs for 2 queues"

N=40
ktap_plan 24

frames=
cleanup() {
	[ -z "$frames" ] || rm -rf "$frames"
	vrss_net_cleanup
	vrss_unload 2> /dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

peer() {
	vrss_peer "$@"
}

setup() {
	vrss_load threshold=0 && vrss_net_setup numrxqueues 2 && ethtool -K vrss0 rxhash on || return 1
	# IPv6 on vrss0 only, quiet (no link-local address, no DAD).
	sysctl -qw net.ipv6.conf.vrss0.addr_gen_mode=1 net.ipv6.conf.vrss0.disable_ipv6=0
	ip addr add 2001:db8::2/64 dev vrss0 nodad
	# Room for jumbo frames up to vrss0, which stays at 1500.
	peer ip link set veth1 mtu 9000 && ip link set veth0 mtu 9000 && ip link set vrss0 mtu 1500
}
ktap_check "vrss0 with 2 queues, rxhash on, IPv4 and IPv6, lower MTU 9000, vrss0 1500" setup
frames=$(mktemp -d)
peer "$VRSS_DIR/vrss_udp.py" malformed veth1 "$(< /sys/class/net/vrss0/address)" "$frames"

# snmp NAME: a stack counter, PROTO:FIELD from /proc/net/snmp or netstat
# (Ip:InHdrErrors, IpExt:InCsumErrors), or an Ip6*/Udp6* one of snmp6.
# Read by bash: every case reads a few.
snmp() {
	local k v
	case $1 in
	*:*)
		vrss_field "${1%%:*}:" "${1#*:}" < /proc/net/snmp ||
			vrss_field "${1%%:*}:" "${1#*:}" < /proc/net/netstat ;;
	*)
		while read -r k v; do
			[ "$k" = "$1" ] && { echo "$v"; return 0; }
		done < /proc/net/snmp6
		return 1 ;;
	esac
}

# delivered: frames vrss0's queues handed to the stack, per queue.
delivered() {
	vrss_queue_packets vrss0
}

# acct: vrss0's rx_nohash, then the frames its queues handed to the stack,
# per queue: "NOHASH Q0 Q1 ...", from one ethtool -S.
acct() {
	local k v nohash=0 q=
	while read -r k v; do
		[[ $k =~ ^rx_queue_[0-9]+_packets:$ ]] && q+=" $v"
		[ "$k" = rx_nohash: ] && nohash=$v
	done < <(ethtool -S vrss0)
	echo "$nohash$q"
}

# check CASE NOHASH STACK_COUNTER: send N copies of CASE from the peer.
# NOHASH 1: nothing to hash, all on queue 0.  STACK_COUNTER: the stack's
# counter that must grow by N ("-" for none: the stack drops them without
# a counter of its own, e.g. a VLAN no device takes).
check() {
	local name=$1 nohash=$2 counter=$3 l0 q0 h0 c0 l q q1 h c= sum=0 d desc ok=0 r
	l0=$(vrss_sys_stat veth0 rx_packets)
	read -r h0 q0 < <(acct)
	r=$(vrss_rx_packets)
	[ "$counter" = - ] || c0=$(snmp "$counter")
	peer "$VRSS_TRAFFIC" frame veth1 "$frames/$name" $N
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + N))
	l=$(($(vrss_sys_stat veth0 rx_packets) - l0))
	read -r h q1 < <(acct)
	h=$((h - h0))
	q=$(vrss_queue_delta "$q0" "$q1")
	for d in $q; do sum=$((sum + d)); done
	[ "$counter" = - ] || c=$(($(snmp "$counter") - c0))
	echo "# $name: lower $l, vrss0 per queue $q, rx_nohash +$h${c:+, $counter +$c}"
	[ "$l" = $N ] && [ "$sum" = $N ] || ok=1
	if [ "$nohash" = 1 ]; then
		[ "$h" = $N ] && [ "$q" = "$N 0" ] || ok=1
		desc="$name: all delivered, unhashed on queue 0"
	else
		[ "$h" = 0 ] || ok=1
		desc="$name: all delivered, hashed"
	fi
	[ "$counter" = - ] || [ "$c" = $N ] || ok=1
	[ "$counter" = - ] || desc+=", the stack counts $counter"
	ktap_result "$desc" $ok
}

check eth-only 1 Ip:InHdrErrors
check ipv4-runt 1 Ip:InHdrErrors
check ipv4-bad-ihl 1 Ip:InHdrErrors
check ipv4-ihl-past-end 1 Ip:InHdrErrors
check ipv4-tot-len-long 0 IpExt:InTruncatedPkts
check ipv4-tot-len-short 0 Ip:InHdrErrors
check ipv4-bad-csum 0 IpExt:InCsumErrors
check ipv4-fragment 0 Ip:ReasmReqds
check ipv6-runt 1 Ip6InHdrErrors
check ipv6-plen-long 0 Ip6InTruncatedPkts
check ipv6-ext-cut 0 Ip6InHdrErrors
# UDP checksum 0, invalid over IPv6: UDP itself counts the frame.
check ipv6-ext-chain 0 Udp6InCsumErrors
check ipv6-fragment 0 Ip6ReasmReqds
check vlan-ipv4 0 -
check qinq-ipv4 0 -
check non-ip 1 -
# Over vrss0's MTU but within the lower's: delivered, as the stack does
# not check a received frame against the MTU.
check jumbo 0 Udp:NoPorts

# A frame for another host (veth takes any MAC: a promiscuous lower) goes
# up inline on queue 0, unhashed, even where the table sends every bucket
# to queue 1: no ring slot for what the stack then drops.  The same frame
# to vrss0's MAC goes to queue 1, so the table is in effect.
to_queue() {
	local name=$1 want=$2 q0 h0 r q h
	q0=$(delivered)
	h0=$(vrss_stat vrss0 rx_nohash)
	r=$(vrss_rx_packets)
	peer "$VRSS_TRAFFIC" frame veth1 "$frames/$name" $N
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + N))
	q=$(vrss_queue_delta "$q0" "$(delivered)")
	h=$(($(vrss_stat vrss0 rx_nohash) - h0))
	echo "# $name with every bucket on queue 1: vrss0 per queue $q, rx_nohash +$h"
	[ "$q" = "$want" ] && [ "$h" = 0 ]
}
ethtool -X vrss0 weight 0 1
ktap_check "a datagram to vrss0's MAC, every bucket on queue 1: on queue 1" to_queue ipv4-udp "0 $N"
ktap_check "the same datagram to another host's MAC: up inline on queue 0, unhashed" \
	to_queue ipv4-udp-otherhost "$N 0"
ethtool -X vrss0 default

# A packet socket on the lower (tcpdump on eth0) holds a reference to each
# frame it sees: vrss gets them shared and must clone, not drop, them.
shared() {
	local r q0 q rc
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("veth0", 0))
print("ready", flush=True)
time.sleep(30)' > "$frames/tap" &
	local tap=$!
	vrss_wait_ready "$frames/tap" || { kill $tap; return 1; }
	q0=$(delivered)
	r=$(vrss_rx_packets)
	peer "$VRSS_TRAFFIC" frame veth1 "$frames/ipv4-udp" $N
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + N))
	rc=$?
	q=$(vrss_queue_delta "$q0" "$(delivered)")
	kill $tap
	wait $tap 2> /dev/null
	echo "# $N datagrams with a packet socket on veth0: vrss0 per queue $q"
	[ $rc = 0 ] && [ $(($(echo $q | tr ' ' '+'))) = $N ]
}
ktap_check "with a packet socket on the lower (frames shared): every frame cloned and delivered" shared

# Over the lower's MTU: veth drops it before the lower receives it, and
# counts it on the sending side.
jumbo_over_lower() {
	local l0 q0 d0 l q d
	ip link set veth0 mtu 1500 || return 1
	l0=$(vrss_sys_stat veth0 rx_packets)
	q0=$(delivered)
	d0=$(vrss_peer_stat veth1 tx_dropped)
	peer "$VRSS_TRAFFIC" frame veth1 "$frames/jumbo" $N
	# veth drops them as it sends: nothing to wait for but the counter.
	sleep 0.2
	l=$(($(vrss_sys_stat veth0 rx_packets) - l0))
	q=$(vrss_queue_delta "$q0" "$(delivered)")
	d=$(($(vrss_peer_stat veth1 tx_dropped) - d0))
	echo "# jumbo over the lower's MTU: lower $l, vrss0 per queue $q, peer tx_dropped +$d"
	[ "$l" = 0 ] && [ "$q" = "0 0" ] && [ "$d" = $N ]
}
ktap_check "jumbo over the lower's MTU: dropped and counted by veth, never reaches vrss0" \
	jumbo_over_lower

ktap_check "no vrss0 ring drops or down drops through all of it" sh -c \
	"[ \"\$(ethtool -S vrss0 | awk '/_drops:|rx_dropped_down:/ { s += \$2 } END { print s }')\" = 0 ]"
ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
