#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrss0 where eth0 was, as macvlan passthru would be: its receive filters
# (promiscuity, allmulti, multicast and unicast lists) reach the lower and
# are taken back when it goes down; the MAC address is the lower's and no
# other; the MTU is checked against the lower's at creation and follows it
# up and down; ip and ethtool show the lower, its speed and duplex; the
# lower or vrss0 can move to another namespace and traffic still flows;
# deleting the namespace that holds the lower takes vrss0 with it.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
for t in ethtool bridge modinfo; do
	command -v $t > /dev/null || ktap_skip_all "$t not installed"
done

ktap_plan 30

LOWER_NS=vrss-lower
UPPER_NS=vrss-upper
cleanup() {
	ip netns del $UPPER_NS 2>/dev/null
	ip netns del $LOWER_NS 2>/dev/null
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)
vrss_klog_mark

# The veth pair of lib.sh, vrss0 not yet on it.
modprobe veth
vrss_load
ip netns add $VRSS_PEER
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip netns exec $VRSS_PEER sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1
ip link add veth0 type veth peer name veth1 netns $VRSS_PEER
ip link set veth0 up
ip -n $VRSS_PEER link set veth1 up
ip -n $VRSS_PEER addr add $VRSS_PEER_IP/24 dev veth1
lower_mac=$(< /sys/class/net/veth0/address)
peer_mac=$(vrss_peer_mac veth1)
ip -n $VRSS_PEER neigh replace $VRSS_IP dev veth1 nud permanent lladdr "$lower_mac"

# vrss0_addr [NETNS]: vrss0 up with its address and the peer's neighbour.
vrss0_addr() {
	local ns=()
	[ -z "${1:-}" ] || ns=(-n "$1")
	ip "${ns[@]}" -b - <<-EOF
		link set vrss0 up
		addr add $VRSS_IP/24 dev vrss0
		neigh replace $VRSS_PEER_IP dev vrss0 nud permanent lladdr $peer_mac
	EOF
}
# ping_both SIZE [NETNS]: the peer pings vrss0 and vrss0 the peer, SIZE
# bytes of payload, not fragmented.
ping_both() {
	local ns=()
	[ -z "${2:-}" ] || ns=(ip netns exec "$2")
	ip netns exec $VRSS_PEER ping -q -c 2 -i 0.2 -W 2 -M do -s "$1" $VRSS_IP > /dev/null &&
	"${ns[@]}" ping -q -c 2 -i 0.2 -W 2 -M do -s "$1" $VRSS_PEER_IP > /dev/null
}

# --- address, queues and MTU at creation -------------------------------------

vrss_expect_refusal "an address other than the lower's refused at creation" \
	"MAC address is the lower device's" \
	ip link add link veth0 name vrss-bad address 02:00:00:00:00:99 type vrss
possible=$(($(cut -d- -f2 /sys/devices/system/cpu/possible) + 1))
vrss_expect_refusal "numrxqueues above the possible CPUs ($possible) refused" \
	"above the number of possible CPUs" \
	ip link add link veth0 name vrss-bad numrxqueues $((possible + 1)) type vrss
vrss_expect_refusal "numtxqueues 2 refused (transmit goes through the lower's queues)" \
	"one transmit queue" \
	ip link add link veth0 name vrss-bad numtxqueues 2 type vrss
vrss_expect_refusal "an MTU above the lower's refused at creation" "MTU outside" \
	ip link add link veth0 name vrss-bad mtu 1600 type vrss
ip link set veth0 mtu 9000
ip -n $VRSS_PEER link set veth1 mtu 9000
ktap_check "mtu 9000 on a 9000-byte lower, the lower's own address given" sh -c \
	"ip link add link veth0 name vrss0 address $lower_mac mtu 9000 type vrss &&
	 [ \"\$(cat /sys/class/net/vrss0/mtu)\" = 9000 ]"
vrss0_addr
ktap_check "jumbo frames both ways (8972 bytes of ICMP payload, DF)" ping_both 8972
ip link del vrss0
ip link set veth0 mtu 1500
ip link add link veth0 name vrss0 type vrss
ip link set veth0 mtu 9000
ktap_check "lower raised to 9000: vrss0 follows up to it, not beyond" sh -c \
	'ip link set vrss0 mtu 9000 && ! ip link set vrss0 mtu 9001 2>/dev/null &&
	 [ "$(cat /sys/class/net/vrss0/mtu)" = 9000 ]'
ktap_check "ip link set vrss0 address refused, the address unchanged" sh -c \
	"! ip link set vrss0 address 02:00:00:00:00:99 2>/dev/null &&
	 [ \"\$(cat /sys/class/net/vrss0/address)\" = $lower_mac ]"

# --- what ip and ethtool show ----------------------------------------------

vrss0_addr
ktap_check "ip link shows the lower (vrss0@veth0)" sh -c "ip -o link show vrss0 | grep -q 'vrss0@veth0:'"
speed() {
	local k v out=
	while IFS=: read -r k v; do
		case $k in *Speed | *Duplex) out+="${v# } " ;; esac
	done < <(ethtool "$1")
	echo "$out"
}
ktap_check "ethtool vrss0: the lower's speed and duplex ($(speed veth0))" \
	test "$(speed vrss0)" = "$(speed veth0)"
drvinfo() {
	local info nl=$'\n'
	info=$nl$(ethtool -i vrss0)$nl
	[[ $info == *"${nl}driver: vrss$nl"* ]] &&
		[[ $info == *"${nl}version: $(modinfo -F version "$VRSS_KO")$nl"* ]] &&
		[[ $info == *"${nl}bus-info: veth0$nl"* ]]
}
ktap_check "ethtool -i vrss0: driver vrss, the module's version, the lower as bus-info" drvinfo

# --- receive filters -------------------------------------------------------

promiscuity() {
	vrss_promiscuity "$1"
}
flag_set() {	# flag_set DEV BIT
	[ $(($(< /sys/class/net/$1/flags) & $2)) != 0 ]
}
IFF_PROMISC=0x100
IFF_ALLMULTI=0x200
promisc() {
	local p
	ip link set veth0 promisc on
	ip link set vrss0 promisc on
	p="$(promiscuity veth0)"
	ip link set vrss0 down
	p+=" $(promiscuity veth0)"
	ip link set vrss0 up
	p+=" $(promiscuity veth0)"
	ip link set vrss0 promisc off
	p+=" $(promiscuity veth0)"
	ip link set veth0 promisc off
	p+=" $(promiscuity veth0)"
	echo "# the lower's promiscuity: admin and vrss0 on $p (want 2 1 2 1 0)"
	[ "$p" = "2 1 2 1 0" ]
}
ktap_check "promisc on vrss0 holds one promiscuity count on the lower while up" promisc
allmulti() {
	ip link set vrss0 allmulticast on &&
	flag_set veth0 $IFF_ALLMULTI &&
	ip link set vrss0 down && ! flag_set veth0 $IFF_ALLMULTI &&
	ip link set vrss0 up && flag_set veth0 $IFF_ALLMULTI &&
	ip link set vrss0 allmulticast off && ! flag_set veth0 $IFF_ALLMULTI
}
ktap_check "allmulticast on vrss0 sets it on the lower while up" allmulti
GROUP=01:00:5e:01:02:03
lower_has() {	# lower_has ADDR: in the lower's uc or mc list
	local fdb nl=$'\n'
	fdb=$nl$(bridge fdb show dev veth0)
	[[ ${fdb,,} == *"$nl${1,,} "* ]]
}
mclist() {
	ip maddr add $GROUP dev vrss0 && lower_has $GROUP &&
	ip link set vrss0 down && ! lower_has $GROUP &&
	ip link set vrss0 up && lower_has $GROUP &&
	ip maddr del $GROUP dev vrss0 && ! lower_has $GROUP
}
ktap_check "a multicast address on vrss0 is on the lower's list while up" mclist
join() {
	ip addr add 239.1.2.3/32 dev vrss0 autojoin && lower_has $GROUP &&
	ip addr del 239.1.2.3/32 dev vrss0 && ! lower_has $GROUP
}
ktap_check "an IPv4 group joined on vrss0 is on the lower's list" join
UC=02:11:22:33:44:55
uclist() {
	bridge fdb add $UC dev vrss0 self permanent && lower_has $UC &&
	! flag_set vrss0 $IFF_PROMISC &&
	bridge fdb del $UC dev vrss0 self && ! lower_has $UC
}
ktap_check "a unicast address on vrss0 is on the lower's list, vrss0 not promiscuous" uclist
ktap_check "traffic after the filter changes" ping_both 56

# Frames for vrss0 while it is down: counted, and freed with a reason.
drops() {
	local d0 d n ev=$VRSS_TRACING/events/skb/kfree_skb
	[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING || return 1
	# record-cmd off: see vrss_trace_on.
	echo 0 > $VRSS_TRACING/options/record-cmd &&
	echo 1 > $ev/enable && echo > $VRSS_TRACING/trace || return 1
	d0=$(vrss_stat vrss0 rx_dropped_down)
	ip link set vrss0 down
	ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" send $VRSS_IP 1 10
	sleep 0.3
	n=$(grep -c 'reason: DEV_READY' $VRSS_TRACING/trace)
	echo 0 > $ev/enable
	echo > $VRSS_TRACING/trace
	ip link set vrss0 up
	d=$(($(vrss_stat vrss0 rx_dropped_down) - d0))
	echo "# vrss0 down, the peer sent 10: rx_dropped_down +$d, kfree_skb reason DEV_READY $n"
	[ "$d" = 10 ] && [ "$n" = 10 ]
}
ktap_check "frames while vrss0 is down: counted in rx_dropped_down, freed as DEV_READY" drops
up_again() {
	ip neigh replace $VRSS_PEER_IP dev vrss0 nud permanent lladdr "$peer_mac" && ping_both 56
}
ktap_check "... and vrss0 up again carries traffic" up_again

# The lower's own looped-back frames (PACKET_LOOPBACK: a multicast copy of
# what a socket sends out of veth0) stay the lower's, as on macvlan: taken
# by vrss0, they would arrive where nobody joined the group.
loopback() {
	local r0 out
	r0=$(vrss_sys_stat vrss0 rx_packets)
	out=$("$VRSS_DIR/vrss_udp.py" mcloop 239.1.2.4 veth0 20) || return 1
	echo "# $out; vrss0 rx_packets +$(($(vrss_sys_stat vrss0 rx_packets) - r0))"
	[ "$out" = "looped 20 of 20 on veth0" ] && [ $(($(vrss_sys_stat vrss0 rx_packets) - r0)) -lt 20 ]
}
ktap_check "the lower's looped-back frames stay the lower's" loopback

# NET_XMIT_CN from the lower's qdisc is not a drop: sfq under a slow tbf
# (100 kbit/s: two of these datagrams per 100 ms) returns it for every
# datagram past its limit of 4, and vrss0 counts them all as sent, as the
# stack does (net_xmit_eval()).
congested() {
	local t0 d0 t d q
	modprobe -a sch_tbf sch_sfq &&
	tc qdisc add dev veth0 root handle 1: tbf rate 100kbit burst 1600 limit 100000 &&
	tc qdisc add dev veth0 parent 1:1 handle 10: sfq limit 4 || return 1
	t0=$(vrss_sys_stat vrss0 tx_packets)
	d0=$(vrss_sys_stat vrss0 tx_dropped)
	"$VRSS_TRAFFIC" send $VRSS_PEER_IP 1 100 600 > /dev/null
	t=$(($(vrss_sys_stat vrss0 tx_packets) - t0))
	d=$(($(vrss_sys_stat vrss0 tx_dropped) - d0))
	q=$(tc -s qdisc show dev veth0 handle 10: | sed -n 's/.*dropped \([0-9]*\).*/\1/p')
	tc qdisc del dev veth0 root
	echo "# 100 datagrams of 600 bytes through vrss0: tx_packets +$t, tx_dropped +$d; sfq dropped ${q:-?}"
	[ "$t" = 100 ] && [ "$d" = 0 ] && [ "${q:-0}" -gt 0 ]
}
ktap_check "NET_XMIT_CN from the lower's qdisc: sent, not a drop" congested

# --- namespaces ------------------------------------------------------------

ip netns add $LOWER_NS
ip netns add $UPPER_NS
move_lower() {
	ip maddr add $GROUP dev vrss0 &&
	ip link set veth0 netns $LOWER_NS && ip -n $LOWER_NS link set veth0 up &&
	ip -d link show vrss0 | grep -q 'link-netns' || return 1
	# The move flushed the lower's lists: vrss0's group is back on them.
	ip netns exec $LOWER_NS bridge fdb show dev veth0 | grep -qi "^$GROUP " || {
		echo "# $GROUP not on the lower's list after its move"
		return 1
	}
}
ktap_check "the lower moved to another namespace: vrss0 stays, shows its link-netns, its group on the lower" \
	move_lower
ktap_check "... and traffic flows" ping_both 56
move_up() {
	ip link set vrss0 netns $UPPER_NS && vrss0_addr $UPPER_NS
}
ktap_check "vrss0 moved to another namespace, set up there" move_up
ktap_check "... traffic flows there" ping_both 56 $UPPER_NS
ktap_check "... ethtool -S works there" sh -c \
	"ip netns exec $UPPER_NS ethtool -S vrss0 | grep -q rx_queue_0_packets"
gone() {
	local i
	ip netns del $LOWER_NS
	for ((i = 0; i < 50; i++)); do
		ip netns exec $UPPER_NS ip link show vrss0 > /dev/null 2>&1 || return 0
		sleep 0.1
	done
	echo "# vrss0 still there 5 s after its lower's namespace went"
	return 1
}
ktap_check "deleting the lower's namespace deletes vrss0" gone
ktap_check "rmmod vrss" vrss_unload
ktap_check "no lockdep or KASAN report in the kernel log (a WARN or BUG panics the guest)" vrss_klog_clean
ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
