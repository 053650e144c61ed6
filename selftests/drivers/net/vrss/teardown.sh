#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Teardown under traffic: deleting the lower, deleting vrss0 and rmmod
# while UDP floods and a TCP transfer run, with rxhash on so that IPIs are
# in flight.  Nothing may oops, WARN or hang (the rig fails the run on any
# of those), and the module's refcount returns to 0.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"

ktap_plan 8

cleanup() {
	kill $flood 2>/dev/null
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

# Traffic from every CPU for up to 20 s, until killed.
flood_start() {
	vrss_send_from_every_cpu 20 100000 2>/dev/null &
	flood=$!
	local r0 i
	# Python takes a second or two to start in the guest: wait for it.
	for ((i = 0; i < 50; i++)); do
		[ "$(< /sys/class/net/vrss0/statistics/rx_packets)" -gt 100 ] && break
		sleep 0.2
	done
	r0=$(< /sys/class/net/vrss0/statistics/rx_packets)
	sleep 0.3
	rates+=" $(($(< /sys/class/net/vrss0/statistics/rx_packets) - r0))"
}
rates=
flood_stop() {
	kill $flood 2>/dev/null
	wait $flood 2>/dev/null
	pkill -f "vrss_traffic send" 2>/dev/null
	sleep 0.2
}

refcount() {
	awk '$1 == "vrss" { print $3 }' /proc/modules
}

setup() {
	vrss_load threshold=0 && vrss_net_setup && ethtool -K vrss0 rxhash on
}

setup
flood_start
ktap_check "delete the lower under traffic: vrss0 goes with it" timeout 10 sh -c \
	'ip link del veth0 && ! ip link show vrss0 2>/dev/null'
flood_stop
vrss_net_cleanup
ktap_check "module refcount back to 0" test "$(refcount)" = 0

setup
flood_start
ktap_check "delete vrss0 under traffic" timeout 10 ip link del vrss0
ktap_check "the lower works on its own again (ping)" \
	sh -c "ip addr add $VRSS_IP/24 dev veth0 && ip netns exec $VRSS_PEER ping -c 2 -i 0.2 -W 2 $VRSS_IP > /dev/null"
flood_stop
vrss_net_cleanup

setup
flood_start
ktap_check "rmmod under traffic removes vrss0 and the module" timeout 20 sh -c \
	'rmmod vrss && ! ip link show vrss0 2>/dev/null && ! grep -q "^vrss " /proc/modules'
flood_stop
ktap_check "insmod again after rmmod under traffic" vrss_load

echo "# packets reaching vrss0 in the 0.3 s before each teardown:$rates"
ok=0
for r in $rates; do [ "$r" -gt 0 ] || ok=1; done
ktap_result "traffic was flowing at each of the 3 teardowns" $ok

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
