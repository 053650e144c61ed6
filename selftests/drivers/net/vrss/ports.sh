#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrss0 among the kernel's other stacked devices: what works (vrss0 as a
# bridge port or an active-backup bond slave; a bridge, a bond or a macvlan
# as the lower: traffic flows through each) and what is refused, saying
# why (a balance-rr bond, which must set its slaves' MAC; a lower that is
# already a bridge, bond, macvlan or ipvlan port, whose rx_handler is
# taken; an ipvlan device, which takes no rx_handler).

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
for m in bridge bonding macvlan ipvlan; do
	modprobe $m || ktap_skip_all "no $m module"
done

ktap_plan 14

cleanup() {
	local d
	for d in vrss-bad vrss0 br0 bond0 mv0 ipv0; do
		ip link del $d 2> /dev/null
	done
	vrss_net_cleanup
	vrss_unload 2> /dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)
ktap_check "insmod vrss.ko" vrss_load

peer() {
	vrss_peer "$@"
}
promiscuity() {
	vrss_promiscuity "$1"
}

# ping_via DEV: $VRSS_IP moves to DEV, static neighbours both ways for it;
# then 3 pings from the peer must be answered.
ping_via() {
	local dev=$1
	ip addr flush dev vrss0 2> /dev/null
	ip link set "$dev" up
	ip addr replace $VRSS_IP/24 dev "$dev" || return 1
	peer ip neigh replace $VRSS_IP dev veth1 nud permanent \
		lladdr "$(< /sys/class/net/"$dev"/address)"
	ip neigh replace $VRSS_PEER_IP dev "$dev" nud permanent \
		lladdr "$(vrss_peer_mac veth1)"
	peer ping -c 3 -i 0.2 -W 2 $VRSS_IP > /dev/null
}
rx() {
	vrss_read /sys/class/net/vrss0/statistics/rx_packets
}

# --- vrss0 as a port ---------------------------------------------------------

vrss_net_setup
bridge_port() {
	local r0 p
	ip link add br0 type bridge && ip link set vrss0 master br0 || return 1
	r0=$(rx)
	ping_via br0 || { echo "# no answer through br0"; return 1; }
	p=$(promiscuity veth0)
	echo "# vrss0 delivered $(($(rx) - r0)) frames to br0; veth0 promiscuity $p"
	[ $(($(rx) - r0)) -ge 3 ] && [ "$p" = 1 ]
}
ktap_check "vrss0 as a bridge port: the peer's pings answered through br0, the lower promiscuous" \
	bridge_port
ip link del br0
ktap_check "... br0 deleted: the lower's promiscuity back to 0" test "$(promiscuity veth0)" = 0

bond_ab() {
	local r0
	ip link add bond0 type bond mode active-backup && ip link set vrss0 down &&
		ip link set vrss0 master bond0 || return 1
	r0=$(rx)
	ping_via bond0 || { echo "# no answer through bond0"; return 1; }
	echo "# vrss0 delivered $(($(rx) - r0)) frames to bond0"
	[ $(($(rx) - r0)) -ge 3 ]
}
ktap_check "vrss0 as an active-backup bond slave (fail_over_mac active): pings answered through bond0" \
	bond_ab
ip link del bond0

# Round robin makes every slave take the bond's MAC: vrss0's is the
# lower's, so the bond refuses it and says why in the kernel log.
bond_rr() {
	local out k0
	k0=$(dmesg | wc -l)
	ip link add bond0 type bond mode balance-rr && ip link set vrss0 down || return 1
	if out=$(ip link set vrss0 master bond0 2>&1); then
		echo "# enslaved to a balance-rr bond"
		return 1
	fi
	echo "# ip link set vrss0 master bond0: $out"
	dmesg | tail -n +$((k0 + 1)) | grep -F 'vrss0' | grep -F 'does not support setting the MAC address' &&
		[ ! -e /sys/class/net/vrss0/master ]
}
ktap_check "vrss0 refused by a balance-rr bond, which must set its MAC: the kernel log says so" bond_rr
ip link del bond0
vrss_net_cleanup

# --- other devices as the lower --------------------------------------------

# lower_case NAME SETUP...: SETUP builds a lower "low" over veth0 (a fresh
# veth pair), vrss0 goes on it, and the peer's pings reach vrss0.
lower_case() {
	local name=$1 r0
	shift
	modprobe veth && ip netns add $VRSS_PEER &&
		ip link add veth0 type veth peer name veth1 netns $VRSS_PEER || return 1
	peer ip link set veth1 up && peer ip addr add $VRSS_PEER_IP/24 dev veth1 || return 1
	"$@" || { echo "# could not build the $name lower"; return 1; }
	ip link set veth0 up
	ip link add link "$low" name vrss0 type vrss || return 1
	r0=$(rx)
	ping_via vrss0 || { echo "# no answer through vrss0 on $low"; return 1; }
	echo "# vrss0 on $low delivered $(($(rx) - r0)) frames"
	[ $(($(rx) - r0)) -ge 3 ]
}
mk_bridge() {
	low=br0
	ip link add br0 type bridge && ip link set veth0 master br0 && ip link set br0 up
}
mk_bond() {
	low=bond0
	ip link add bond0 type bond mode active-backup && ip link set veth0 master bond0 &&
		ip link set bond0 up
}
mk_macvlan() {
	low=mv0
	ip link add link veth0 name mv0 type macvlan mode bridge && ip link set mv0 up
}
for kind in bridge bond macvlan; do
	ktap_check "a $kind as the lower: the peer's pings answered through vrss0" \
		lower_case $kind mk_$kind
	# (ktap_check ran the case in a subshell: $low is not set here.)
	for d in vrss0 br0 bond0 mv0; do
		ip link del $d 2> /dev/null
	done
	vrss_net_cleanup
done

# refused NAME MESSAGE LOWER: vrss on LOWER fails saying MESSAGE.
refused() {
	vrss_expect_refusal "$1" "$2" ip link add link "$3" name vrss-bad type vrss
}
busy="already has an rx_handler (a bridge, bond, team, macvlan, ipvlan or vrss port)"
ip link add veth0 type veth peer name veth1
ip link add br0 type bridge && ip link set veth0 master br0
refused "a bridge port as the lower refused: its rx_handler is the bridge's" "$busy" veth0
ip link del br0
ip link add bond0 type bond mode active-backup && ip link set veth0 master bond0
refused "a bond slave as the lower refused: its rx_handler is the bond's" "$busy" veth0
ip link del bond0
ip link add link veth0 name mv0 type macvlan mode bridge
refused "a macvlan port as the lower refused: its rx_handler is macvlan's" "$busy" veth0
ip link del mv0
ip link add link veth0 name ipv0 type ipvlan mode l2
refused "an ipvlan port as the lower refused: its rx_handler is ipvlan's" "$busy" veth0
refused "an ipvlan device as the lower refused: it takes no rx_handler" \
	"takes no rx_handler (an ipvlan device)" ipv0
ip link del ipv0
ip link del veth0

ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
