#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The per-queue rings (SPEC section 3): ethtool -g/-G rx, and a full ring
# drops and counts, never blocks: with 1-slot rings and senders on every
# CPU, what the lower received = delivered + counted drops, drops > 0.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"

ktap_plan 9

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
	vrss_load && vrss_net_setup
}
ktap_check "vrss0 on veth0" setup
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

# Senders on every CPU into 1-slot rings.
lower0=$(cat /sys/class/net/veth0/statistics/rx_packets)
pkts0=$(cat /sys/class/net/vrss0/statistics/rx_packets)
drop0=$(cat /sys/class/net/vrss0/statistics/rx_dropped)
vrss_send_from_every_cpu 120 250
sleep 0.5
lower=$(($(cat /sys/class/net/veth0/statistics/rx_packets) - lower0))
pkts=$(($(cat /sys/class/net/vrss0/statistics/rx_packets) - pkts0))
drops=$(($(cat /sys/class/net/vrss0/statistics/rx_dropped) - drop0))
qdrops=0
for ((i = 0; i < $(nproc); i++)); do
	qdrops=$((qdrops + $(vrss_stat vrss0 rx_queue_${i}_drops)))
done
echo "# lower received $lower, vrss0 delivered $pkts, dropped $drops (queues: $qdrops)"
ktap_check "full rings drop: some frames dropped" test "$drops" -gt 0
ktap_check "lower's rx = delivered + dropped, queue drops = device drops" \
	test "$lower" = $((pkts + drops)) -a "$qdrops" = "$drops"

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
