#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What gets hashed: IPv6 4-tuples, VLAN-tagged frames, IP fragments
# (addresses only, every fragment of a flow on one queue), non-IP and
# truncated frames (primary queue, counted as rx_nohash); TCP over IPv4
# and IPv6, and each of tcp4, tcp6 and udp6 hashed on addresses only
# (rx-flow-hash sd) without changing the others; no hash at all with
# rxhash off.  Each IP case is checked against the Toeplitz reference: the
# queue each flow lands on, and the skb hash a packet socket sees.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs for 2 queues"

ktap_plan 25

cleanup() {
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT

taint0=$(vrss_taint_other)
P6=2001:db8::1
L6=2001:db8::2
PV=198.51.100.1
LV=198.51.100.2
peer() {
	vrss_peer "$@"
}

setup() {
	vrss_load threshold=0 && vrss_net_setup numrxqueues 2 && ethtool -K vrss0 rxhash on || return 1
	# IPv6 on the test link only, no link-local address, no DAD: after the
	# MLD reports of the address setup, the link is quiet again.  The
	# reports' repeats 10 ms apart, not up to a second: quiet sooner.
	sysctl -qw net.ipv6.conf.vrss0.addr_gen_mode=1 \
		net.ipv6.conf.vrss0.mldv2_unsolicited_report_interval=10 \
		net.ipv6.conf.vrss0.disable_ipv6=0
	peer sysctl -qw net.ipv6.conf.veth1.addr_gen_mode=1 \
		net.ipv6.conf.veth1.mldv2_unsolicited_report_interval=10 \
		net.ipv6.conf.veth1.disable_ipv6=0
	ip addr add $L6/64 dev vrss0 nodad
	peer ip addr add $P6/64 dev veth1 nodad
	peer ip -6 neigh replace $L6 dev veth1 nud permanent lladdr "$(< /sys/class/net/vrss0/address)"
	ip -6 neigh replace $P6 dev vrss0 nud permanent \
		lladdr "$(vrss_peer_mac veth1)"
	# VLAN 10 on both ends: tagged frames on the wire.
	modprobe 8021q
	ip link add link vrss0 name vrss0.10 type vlan id 10 && ip link set vrss0.10 up
	ip addr add $LV/24 dev vrss0.10
	peer ip link add link veth1 name veth1.10 type vlan id 10 && peer ip link set veth1.10 up
	peer ip addr add $PV/24 dev veth1.10
	peer ip neigh replace $LV dev veth1.10 nud permanent lladdr "$(< /sys/class/net/vrss0/address)"
	ip neigh replace $PV dev vrss0.10 nud permanent \
		lladdr "$(vrss_peer_mac veth1)"
	sleep 0.5
}
ktap_check "vrss0 with 2 queues, rxhash on, IPv6 and VLAN 10 on the link" setup

vrss_check_steering "IPv6 UDP: every flow on its predicted queue" $P6 $L6
vrss_check_steering "VLAN-tagged IPv4 UDP: every flow on its predicted queue" $PV $LV
vrss_check_steering "IPv4 fragments (3000-byte datagrams): hashed on addresses, all on one queue" \
	$VRSS_PEER_IP $VRSS_IP --no-ports --frags 3 3000
vrss_check_steering "IPv6 fragments: hashed on addresses, all on one queue" \
	$P6 $L6 --no-ports --frags 3 3000

# hashcheck NAME SRC DST FLOWS PER_FLOW [OPTION...] (vrss_udp.py's)
hashcheck() {
	ktap_check "$1" "$VRSS_DIR/vrss_udp.py" hashcheck "$2" "$3" "$4" "$5" \
		vrss0 $VRSS_PEER "${@:6}"
}
hashes_on() {
	ethtool -n vrss0 rx-flow-hash "$1" | grep -q "L4 bytes 0 & 1"
}
# sd TYPE: TYPE hashed on addresses only, ethtool -n shows it, no other
# type changed.
sd() {
	local t others=0
	ethtool -N vrss0 rx-flow-hash "$1" sd || return 1
	hashes_on "$1" && return 1
	for t in tcp4 udp4 tcp6 udp6; do
		[ "$t" = "$1" ] || hashes_on "$t" || others=1
	done
	return $others
}

vrss_check_steering "IPv4 TCP: every flow on its predicted queue" $VRSS_PEER_IP $VRSS_IP --tcp
hashcheck "IPv4 TCP: skb hash = Toeplitz of the 4-tuple" $VRSS_PEER_IP $VRSS_IP 32 2 --tcp
ktap_check "rx-flow-hash tcp4 sd: addresses only, udp4/tcp6/udp6 unchanged" sd tcp4
vrss_check_steering "tcp4 sd: TCP flows differing only in ports share one queue" \
	$VRSS_PEER_IP $VRSS_IP --tcp --no-ports
hashcheck "tcp4 sd: skb hash = Toeplitz of the addresses" $VRSS_PEER_IP $VRSS_IP 32 2 --tcp --no-ports
vrss_check_steering "tcp4 sd: IPv4 UDP still hashed on its ports" $VRSS_PEER_IP $VRSS_IP
ethtool -N vrss0 rx-flow-hash tcp4 sdfn

vrss_check_steering "IPv6 TCP: every flow on its predicted queue" $P6 $L6 --tcp
hashcheck "IPv6 TCP: skb hash = Toeplitz of the 4-tuple" $P6 $L6 32 2 --tcp
ktap_check "rx-flow-hash tcp6 sd: addresses only, the others unchanged" sd tcp6
hashcheck "tcp6 sd: skb hash = Toeplitz of the addresses" $P6 $L6 32 2 --tcp --no-ports
vrss_check_steering "tcp6 sd: IPv6 UDP still hashed on its ports" $P6 $L6
ethtool -N vrss0 rx-flow-hash tcp6 sdfn
ktap_check "rx-flow-hash udp6 sd: addresses only, the others unchanged" sd udp6
vrss_check_steering "udp6 sd: flows differing only in ports share one queue" $P6 $L6 --no-ports
hashcheck "udp6 sd: skb hash = Toeplitz of the addresses" $P6 $L6 32 2 --no-ports
vrss_check_steering "udp6 sd: IPv6 TCP still hashed on its ports" $P6 $L6 --tcp
ethtool -N vrss0 rx-flow-hash udp6 sdfn

# raw_frames NAME ETHERTYPE LEN: 50 such frames all on queue 0, counted.
raw_frames() {
	local name=$1 before nohash0 got r
	before=$(vrss_queue_packets vrss0)
	nohash0=$(vrss_stat vrss0 rx_nohash)
	r=$(vrss_rx_packets)
	peer "$VRSS_TRAFFIC" raw veth1 "$(< /sys/class/net/vrss0/address)" "$2" "$3" 50
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + 50))
	got=$(vrss_queue_delta "$before" "$(vrss_queue_packets vrss0)")
	echo "# per-queue packets $got, rx_nohash +$(($(vrss_stat vrss0 rx_nohash) - nohash0))"
	ktap_result "$name" "$([ "$got" = "50 0" ] &&
		[ $(($(vrss_stat vrss0 rx_nohash) - nohash0)) = 50 ]; echo $?)"
}
raw_frames "non-IP frames (ethertype 88b5): primary queue, counted as rx_nohash" 88b5 46
raw_frames "truncated IPv4 headers: primary queue, counted as rx_nohash" 0800 10
raw_frames "truncated IPv6 headers: primary queue, counted as rx_nohash" 86dd 20

# Receive hashing off: vrss computes no hash (the peer's UDP frames come
# through veth with none).
ethtool -K vrss0 rxhash off
hashcheck "rxhash off: no skb hash on any packet" $VRSS_PEER_IP $VRSS_IP 32 2 --none

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
