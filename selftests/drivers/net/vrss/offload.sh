#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Offloads as on macvlan (ethtool -k/-K): receive hashing off by default
# and switchable; scatter-gather, checksum and segmentation offered on
# transmit (the lower's dev_queue_xmit does in software what it cannot)
# and switchable; GRO on; the lower's GSO limits inherited.  TCP through
# vrss0 works with transmit offloads on and off.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
command -v iperf3 > /dev/null || ktap_skip_all "iperf3 not installed"

ktap_plan 9

cleanup() {
	ip netns exec $VRSS_PEER pkill iperf3 2>/dev/null
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

setup() {
	vrss_load && vrss_net_setup
}
ktap_check "vrss0 on veth0" setup

feature() {
	local k v
	while read -r k v _; do
		[ "$k" = "$1:" ] && { echo "$v"; return; }
	done < <(ethtool -k vrss0)
}
defaults() {
	local f rc=0
	for f in receive-hashing:off scatter-gather:on tx-checksumming:on \
		 tcp-segmentation-offload:on generic-segmentation-offload:on \
		 generic-receive-offload:on; do
		[ "$(feature "${f%%:*}")" = "${f#*:}" ] || { echo "${f%%:*}: $(feature "${f%%:*}")"; rc=1; }
	done
	return $rc
}
ktap_check "defaults: rxhash off; sg, tx csum, tso, gso, gro on" defaults

gso() {
	ip -d link show "$1" | grep -o 'gso_max_size [0-9]*'
}
ktap_check "GSO limit inherited from the lower ($(gso veth0))" \
	test "$(gso vrss0)" = "$(gso veth0)"

tcp() {
	local tx0 drop0
	tx0=$(< /sys/class/net/vrss0/statistics/tx_packets)
	drop0=$(< /sys/class/net/vrss0/statistics/tx_dropped)
	ip netns exec $VRSS_PEER iperf3 -s -1 -D -B $VRSS_PEER_IP > /dev/null || return 1
	sleep 0.5
	iperf3 -c $VRSS_PEER_IP -t 1 -P 2 > /dev/null || return 1
	echo "tx packets +$(($(< /sys/class/net/vrss0/statistics/tx_packets) - tx0))"
	[ "$(< /sys/class/net/vrss0/statistics/tx_dropped)" = "$drop0" ]
}
ktap_check "TCP out through vrss0 with offloads on, nothing dropped" tcp

off() {
	ethtool -K vrss0 tso off gso off tx off sg off &&
		[ "$(feature tcp-segmentation-offload) $(feature tx-checksumming) $(feature scatter-gather)" = "off off off" ]
}
ktap_check "ethtool -K vrss0 tso off gso off tx off sg off" off
ktap_check "TCP out through vrss0 with offloads off, nothing dropped" tcp
ktap_check "offloads back on" sh -c \
	'ethtool -K vrss0 sg on tx on tso on gso on && ethtool -k vrss0 | grep -qx "tcp-segmentation-offload: on"'
ktap_check "ethtool -K vrss0 gro off; rxhash on" sh -c \
	'ethtool -K vrss0 gro off rxhash on && ethtool -k vrss0 | grep -qx "generic-receive-offload: off"'
ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
