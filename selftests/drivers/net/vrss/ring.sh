#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The spread queues' rings: ethtool -g/-G rx, and a full ring drops and
# counts, never blocks: with 1-slot rings, a table that names only spread
# queues and senders on every CPU, what the lower received = delivered +
# counted drops, drops > 0.  The primary has no ring: with rxhash off the
# same flood into 1-slot rings drops nothing.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"

ktap_plan 12

cleanup() {
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

rx_ring() {
	ethtool -g vrss0 | awk '/^RX:/ { print $2 }' | tr '\n' ' '
}

setup() {
	vrss_load threshold=0 && vrss_net_setup
}
ktap_check "vrss0 on veth0, threshold 0" setup
ktap_check "ethtool -g: rx max 4096, 1024 in use" test "$(rx_ring)" = "4096 1024 "
ktap_check "ethtool -G rx 1 refused while up, nothing changed" sh -c \
	'! ethtool -G vrss0 rx 1 2>/dev/null && [ "$(ethtool -g vrss0 | awk "/^RX:/ { print \$2 }" | tail -n 1)" = 1024 ]'
ip link set vrss0 down
ktap_check "ethtool -G rx 0 refused" sh -c '! ethtool -G vrss0 rx 0 2>/dev/null'
ktap_check "ethtool -G rx 5000 (over the max) refused" sh -c '! ethtool -G vrss0 rx 5000 2>/dev/null'
ktap_check "ethtool -G rx 1 while down" sh -c \
	'ethtool -G vrss0 rx 1 && [ "$(ethtool -g vrss0 | awk "/^RX:/ { print \$2 }" | tail -n 1)" = 1 ]'
ip link set vrss0 up
sleep 0.5

# flood NAME: senders on every CPU; the lower's rx, vrss0's delivered and
# dropped, and the queues' drops over it.
flood() {
	local lower0 pkts0 drop0 qdrop0
	lower0=$(< /sys/class/net/veth0/statistics/rx_packets)
	pkts0=$(< /sys/class/net/vrss0/statistics/rx_packets)
	drop0=$(< /sys/class/net/vrss0/statistics/rx_dropped)
	qdrop0=$(vrss_stat_sum vrss0 drops)
	# The frames freed as dropped (skb:kfree_skb) by where, in a
	# histogram (no trace buffer to overflow under a flood): those freed
	# by vrss's own code, independently of its counters.
	vrss_hist_on skb/kfree_skb location.sym
	vrss_send_from_every_cpu "$2" 250
	sleep 0.5
	freed=$(vrss_hist_off skb/kfree_skb location.sym | awk '/\[vrss\]/ { n += $NF } END { print n + 0 }')
	lower=$(($(< /sys/class/net/veth0/statistics/rx_packets) - lower0))
	pkts=$(($(< /sys/class/net/vrss0/statistics/rx_packets) - pkts0))
	drops=$(($(< /sys/class/net/vrss0/statistics/rx_dropped) - drop0))
	qdrops=$(($(vrss_stat_sum vrss0 drops) - qdrop0))
	echo "# $1: lower received $lower, vrss0 delivered $pkts, dropped $drops (queues: $qdrops; freed by vrss: $freed)"
}

# rxhash off: everything up inline on the primary, which has no ring.
flood "rxhash off, 1-slot rings" 60
ktap_check "rxhash off: no ring, no drop, lower's rx = delivered" \
	test "$drops" = 0 -a "$lower" = "$pkts" -a "$lower" -gt 0

# rxhash on, every bucket on a spread queue: 1-slot rings overflow.
spread() {
	local w
	w="0$(for ((i = 1; i < $(nproc); i++)); do printf ' 1'; done)"
	ethtool -K vrss0 rxhash on && ethtool -X vrss0 weight $w
}
ktap_check "rxhash on, threshold 0, a table of spread queues only" spread
flood "rxhash on, 1-slot rings" 120
ktap_check "full rings drop: some frames dropped" test "$drops" -gt 0
ktap_check "lower's rx = delivered + dropped, each drop a frame vrss freed (skb:kfree_skb)" \
	test "$lower" = $((pkts + drops)) -a "$qdrops" = "$drops" -a "$freed" = "$drops"
ktap_check "the primary dropped nothing" test "$(vrss_stat vrss0 rx_queue_0_drops)" = 0

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
