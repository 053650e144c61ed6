#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device mode: on a NIC with an RSS table the guest writes (virtio-net with
# RSS in QEMU, igb), vrss steers by writing the NIC's own table.  Run under
# `tools/vm/run --nic 2 --nic-model virtio-rss` (or igb).  It checks that:
#  - the mode is auto: device mode on this NIC, software on veth (no
#    table); software when asked for, where vrss leaves the NIC's table
#    alone; device is refused on a lower without a table, while rxhash is
#    on, and for a name it does not know;
#  - with vrss0 up and rxhash on (auto), vrss holds the NIC's table: every entry
#    on ring 0 below the threshold, its key vrss0's (where the NIC shows
#    one: igb's is its own), and the host's flows
#    all arrive on ring 0;
#  - spread (threshold 0), the NIC's table is the table in effect, the
#    flows arrive on both rings and vrss0's queues count what each ring
#    delivered, with no IPI;
#  - a NIC that stops following vrss's table (here: the table rewritten
#    behind vrss's back) gets it again once frames come on rings their
#    buckets are not on, counted late;
#  - no flow is reordered while the width goes back and forth (buckets
#    moving between the rings in the NIC's table): a moved bucket's
#    frames on its new ring are held for the old one;
#  - the user's own table and key are back in the NIC after rxhash off,
#    after vrss0 goes down and after it is deleted.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
[ -n "${VRSS_NIC:-}" ] && [ "${VRSS_NIC_QUEUES:-0}" -ge 2 ] ||
	ktap_skip_all "no NIC from the host with 2 queues: run under tools/vm/run --nic 2 --nic-model virtio-rss"
nic=$VRSS_NIC
ethtool -x "$nic" > /dev/null 2>&1 ||
	ktap_skip_all "$nic (${VRSS_NIC_MODEL:-virtio}) has no RSS table: run with --nic-model virtio-rss or igb"

GUEST=198.51.100.1
HOST=198.51.100.2
tmp=$(mktemp -d)

ktap_plan 16

v6_sysctls="net.ipv6.conf.all.disable_ipv6 net.ipv6.conf.default.disable_ipv6 net.ipv6.conf.$nic.disable_ipv6"
v6_saved=$(for s in $v6_sysctls; do echo "$s=$(sysctl -n "$s")"; done)
cleanup() {
	ip link del vrss0 2> /dev/null
	ip link del vrssd-veth0 2> /dev/null
	ethtool -X "$nic" default 2> /dev/null
	vrss_unload 2> /dev/null
	# shellcheck disable=SC2086 # one NAME=VALUE a word
	sysctl -qw $v6_saved
	rm -rf "$tmp"
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

host() {
	"$VRSS_REPO/tools/vm/host" run "$@"
}

# The NIC's table: its entries on one line (ethtool -x).
nic_table() {
	ethtool -x "$nic" | awk '/^ +[0-9]+: / { for (i = 2; i <= NF; i++) printf "%s ", $i }' |
		sed 's/ $//'
}
# Its key, as ethtool -x prints it; nothing if it has none to show (igb).
nic_key() {
	ethtool -x "$1" | awk '/RSS hash key:/ { getline; if ($0 ~ /^[0-9a-f][0-9a-f](:[0-9a-f][0-9a-f])+$/) print; exit }'
}
# Packets received on the NIC's ring N: ethtool -S where the driver
# counts per ring (igb, 6.1's virtio_net), else netdev netlink's qstats.
ring_packets() {
	local v
	v=$(vrss_stat "$nic" "rx_queue_$1_packets") && { echo "$v"; return; }
	"$VRSS_DIR/vrss_ynl.py" qstats-queues "$nic" | awk -v q="$1" '$1 == q { print $2 }'
}
rings() { echo "$(ring_packets 0) $(ring_packets 1)"; }

setup() {
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		net.ipv6.conf.$nic.disable_ipv6=1 &&
	vrss_load &&
	ip link set "$nic" up &&
	# The user's own table and key (where it has one) on the NIC, to be
	# found again.  UDP hashed on its ports too, as vrss0 hashes it
	# (igb's default is on the addresses alone).
	ethtool -N "$nic" rx-flow-hash udp4 sdfn &&
	if [ -n "$(nic_key "$nic")" ]; then
		ethtool -X "$nic" hkey "$(vrss_random_key)" weight 1 3
	else
		ethtool -X "$nic" weight 1 3
	fi &&
	ip link add link "$nic" name vrss0 type vrss &&
	[ "$(vrss_sys mode)" = device ]
}
# ktap_check runs its command in a subshell: what it leaves is read here.
ktap_check "vrss0 on $nic (${VRSS_NIC_MODEL:-virtio}); the user's table on it; mode auto reads device" setup
user_table=$(nic_table)
user_key=$(nic_key "$nic")

refusals() {
	ip link add vrssd-veth0 type veth peer name vrssd-veth1 &&
	ip link add link vrssd-veth0 name vrssd0 type vrss || return 1
	! echo device > /sys/class/net/vrssd0/vrss/mode 2> /dev/null &&
		[ "$(cat /sys/class/net/vrssd0/vrss/mode)" = software ] || { echo "# veth: device accepted"; return 1; }
	ip link del vrssd-veth0
	! vrss_sys_set mode fast 2> /dev/null || { echo "# 'fast' accepted"; return 1; }
	vrss_sys_set mode software && [ "$(vrss_sys mode)" = software ] &&
	ip link set vrss0 up && ethtool -K vrss0 rxhash on || return 1
	! vrss_sys_set mode device 2> /dev/null || { echo "# accepted with rxhash on"; return 1; }
	echo "# mode $(vrss_sys mode); the NIC's table the user's: $([ "$(nic_table)" = "$user_table" ] && echo yes || echo no)"
	[ "$(vrss_sys mode)" = software ] && [ "$(nic_table)" = "$user_table" ] &&
		ethtool -K vrss0 rxhash off && ip link set vrss0 down
}
ktap_check "software mode leaves the NIC's table alone; device refused on veth (no table), for an unknown mode, and with rxhash on" \
	refusals

held() {
	vrss_sys_set mode auto && [ "$(vrss_sys mode)" = device ] &&
	ip link set vrss0 up && ip addr add $GUEST/24 dev vrss0 &&
	ip neigh replace $HOST dev vrss0 nud permanent \
		lladdr "$(host cat /sys/class/net/vrsstap0/address)" &&
	ethtool -K vrss0 rxhash on || return 1
	local t i
	# vrss's key goes in once the table settled: a moment later.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -z "$user_key" ] || [ "$(nic_key "$nic")" = "$(nic_key vrss0)" ] && break
		sleep 0.1
	done
	t=$(nic_table)
	echo "# NIC's table: $(tr ' ' '\n' <<< "$t" | sort | uniq -c | xargs); tables written $(vrss_stat vrss0 device_tables)"
	[ -z "$(tr ' ' '\n' <<< "$t" | grep -vx 0)" ] && [ "$(wc -w <<< "$t")" -ge 64 ] &&
		{ [ -z "$user_key" ] || [ "$(nic_key "$nic")" = "$(nic_key vrss0)" ]; } &&
		[ "$(vrss_stat vrss0 device_tables)" -ge 1 ]
}
ktap_check "mode auto, up, rxhash on: the NIC's table is vrss's, every entry on ring 0, its key (if it has one) vrss0's" held

N=400
coalesced() {
	local r0 r1 before after
	# Threshold 100 never spreads: the test is the table, not TCG's load.
	vrss_sys_set threshold 100 || return 1
	before=$(rings)
	r0=$(vrss_rx_packets)
	host "$VRSS_TRAFFIC" pace $GUEST 16 $((N / 16)) 0.002 > /dev/null || return 1
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r0 + N)) || return 1
	after=$(rings)
	read -r r0 r1 <<< "$(vrss_queue_delta "$before" "$after")"
	echo "# $N datagrams on 16 flows, below the threshold: ring 0 +$r0, ring 1 +$r1; state $(vrss_sys state)"
	[ "$r0" -ge $N ] && [ "$r1" = 0 ] && [ "$(vrss_sys state)" = single ]
}
ktap_check "below the threshold, the host's flows all arrive on ring 0, none on ring 1" coalesced

spread() {
	vrss_sys_set threshold 0 || return 1
	host "$VRSS_TRAFFIC" pace $GUEST 16 50 0.002 > /dev/null &
	local pid=$! t eff
	vrss_wait_count /sys/class/net/vrss0/vrss/width 2 3000
	wait $pid
	# The NIC's table follows from a work item: a moment later.
	for t in 1 2 3 4 5 6 7 8 9 10; do
		eff=$(vrss_sys effective_indir)
		t=$(nic_table)
		[ "$t" != "$eff" ] || break
		sleep 0.2
	done
	echo "# width $(vrss_sys width); NIC's table: $(tr ' ' '\n' <<< "$t" | sort | uniq -c | xargs)"
	[ "$(vrss_sys width)" = 2 ] && [ "$(vrss_sys state)" = spread ] && [ "$t" = "$eff" ]
}
ktap_check "threshold 0: spread to both rings, the NIC's table is the table in effect" spread

# TCP SYNs, each answered by a reset: every NIC hashes TCP on its ports.
SYNS=64
both_rings() {
	local r0 r1 before q0 q r l0
	before=$(rings)
	q0=$(vrss_queue_packets vrss0)
	l0=$(vrss_stat vrss0 device_late_frames)
	r=$(vrss_rx_packets)
	host "$VRSS_TRAFFIC" syn $GUEST 16 $((SYNS / 16)) > /dev/null || return 1
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + SYNS))
	read -r r0 r1 <<< "$(vrss_queue_delta "$before" "$(rings)")"
	q=$(vrss_queue_delta "$q0" "$(vrss_queue_packets vrss0)")
	# Where the 16 flows' buckets fall is the key's doing (the NIC's own
	# for igb): both rings usually, one now and then.
	echo "# $SYNS SYNs on 16 flows, spread: ring 0 +$r0, ring 1 +$r1; vrss0's queues $q;" \
	     "late $(($(vrss_stat vrss0 device_late_frames) - l0)); IPIs $(vrss_stat_sum vrss0 ipis)"
	[ $((r0 + r1)) -ge $SYNS ] && [ "$q" = "$r0 $r1" ] &&
		[ "$(vrss_stat vrss0 device_late_frames)" = "$l0" ] &&
		[ "$(vrss_stat_sum vrss0 ipis)" = 0 ]
}
ktap_check "... each flow on the ring the NIC's table names, vrss0's queues count what each ring delivered, no IPI" \
	both_rings

# syns: SYNS SYNs from the host, once vrss0 has taken them all in.
syns() {
	local r
	r=$(vrss_rx_packets)
	host "$VRSS_TRAFFIC" syn $GUEST 16 $((SYNS / 16)) > /dev/null || return 1
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + SYNS))
}
recommit() {
	local l0 t0 l1 t1 l2 t
	l0=$(vrss_stat vrss0 device_late_frames)
	t0=$(vrss_stat vrss0 device_tables)
	# Every entry on ring 0, or, if the flows' buckets were all there,
	# on ring 1.
	ethtool -X "$nic" weight 1 0 || return 1
	syns || return 1
	l1=$(vrss_stat vrss0 device_late_frames)
	if [ "$l1" = "$l0" ]; then
		sleep 0.2
		ethtool -X "$nic" weight 0 1 || return 1
		syns || return 1
		l1=$(vrss_stat vrss0 device_late_frames)
	fi
	# vrss writes its table again within 100 ms of the first late frame.
	for t in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(nic_table)" = "$(vrss_sys effective_indir)" ] && break
		sleep 0.1
	done
	t1=$(vrss_stat vrss0 device_tables)
	syns || return 1
	l2=$(vrss_stat vrss0 device_late_frames)
	echo "# NIC's table rewritten, every entry on one ring: $((l1 - l0)) SYNs late;" \
	     "tables written +$((t1 - t0)); the next $SYNS SYNs: $((l2 - l1)) late"
	[ $((l1 - l0)) -gt 0 ] && [ $((t1 - t0)) -ge 1 ] && [ "$l2" = "$l1" ] &&
		[ "$(nic_table)" = "$(vrss_sys effective_indir)" ]
}
ktap_check "a NIC table rewritten behind vrss: frames counted late, vrss's table written again, none late after" \
	recommit

# The threshold 0 and 100 by turns, every 50 ms, sampled every 20 ms: the
# width (and so the NIC's table) goes back and forth under the host's
# sequenced flows.
flipper() {
	local i=0
	until [ -e "$tmp/stop" ]; do
		vrss_sys_set threshold $(((i++ % 2) * 100))
		sleep 0.05
	done
	echo "$i" > "$tmp/flips"
}
FLOWS=16
COUNT=6000
in_order() {
	local t0 h0 l0 received reordered foreign tables held late r0 q0 d0 r q d
	vrss_sys_set interval_ms 20 || return 1
	rm -f "$tmp/stop" "$tmp/recv" "$tmp/flips"
	r0=$(rings)
	q0=$(vrss_queue_packets vrss0)
	d0=$(vrss_stat_sum vrss0 drops)
	t0=$(vrss_stat vrss0 device_tables)
	h0=$(vrss_stat vrss0 rx_held_for_order)
	l0=$(vrss_stat vrss0 device_late_frames)
	"$VRSS_TRAFFIC" seqrecv $GUEST $FLOWS $COUNT > "$tmp/recv" &
	local receiver=$!
	vrss_wait_ready "$tmp/recv" || return 1
	flipper &
	local flip=$!
	host "$VRSS_TRAFFIC" seqsend $GUEST $FLOWS $COUNT 1 0.004
	touch "$tmp/stop"
	wait $flip $receiver
	vrss_sys_set threshold 0
	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	tables=$(($(vrss_stat vrss0 device_tables) - t0))
	held=$(($(vrss_stat vrss0 rx_held_for_order) - h0))
	late=$(($(vrss_stat vrss0 device_late_frames) - l0))
	r=$(vrss_queue_delta "$r0" "$(rings)")
	q=$(vrss_queue_delta "$q0" "$(vrss_queue_packets vrss0)")
	d=$(($(vrss_stat_sum vrss0 drops) - d0))
	echo "# host sent $COUNT on $FLOWS flows: received $received, reordered $reordered, foreign" \
	     "$foreign; threshold flips $(cat "$tmp/flips"), tables written $tables, frames held" \
	     "for order $held, late $late; the NIC's rings $r, vrss0's queues $q, dropped $d"
	# Held frames too: counted on their ring's queue, and up to the socket.
	[ "${reordered:-1}" = 0 ] && [ "${foreign:-1}" = 0 ] && [ "$d" = 0 ] && [ "$q" = "$r" ] &&
		[ "${received:-0}" = $(($(tr ' ' '+' <<< "$r"))) ] &&
		[ "$tables" -ge 2 ] && [ "$held" -gt 0 ]
}
ktap_check "no flow reordered, none lost, while the width goes back and forth in the NIC's table (frames held)" in_order

# settled: the NIC's table is the table in effect (a work item writes it).
settled() {
	local t
	for t in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(nic_table)" = "$(vrss_sys effective_indir)" ] && return 0
		sleep 0.2
	done
	return 1
}
nic_channels() {
	ethtool -l "$nic" | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2 }'
}
# While vrss holds the table the NIC counts as configured: the ethtool
# core refuses to take away a ring the table uses.
lower_channels() {
	settled || return 1
	local t err
	t=$(nic_table)
	err=$(ethtool -L "$nic" combined 1 2>&1) && { echo "# $nic: combined 1 accepted"; return 1; }
	echo "# ethtool -L $nic combined 1: '$err'; $nic's channels $(nic_channels)," \
	     "NIC's table $(tr ' ' '\n' <<< "$t" | sort | uniq -c | xargs)"
	[ "$(nic_channels)" = 2 ] && [ "$(nic_table)" = "$t" ] &&
		[ -n "$(tr ' ' '\n' <<< "$t" | grep -vx 0)" ]
}
ktap_check "spread, ethtool -L on the NIC refused (its table is vrss's), the table unchanged" lower_channels

# vrss0's own channel count bounds the rings the NIC's table uses.
vrss_channels() {
	local one two
	ethtool -L vrss0 combined 1 && settled || return 1
	one=$(nic_table)
	ethtool -L vrss0 combined 2 || return 1
	# Frames wake the gate (threshold 0) if it slept meanwhile.
	host "$VRSS_TRAFFIC" pace $GUEST 16 50 0.002 > /dev/null &
	local pid=$!
	vrss_wait_count /sys/class/net/vrss0/vrss/width 2 3000
	wait $pid
	settled || return 1
	two=$(nic_table)
	echo "# vrss0 on 1 queue: NIC's table $(tr ' ' '\n' <<< "$one" | sort | uniq -c | xargs);" \
	     "on 2 again: $(tr ' ' '\n' <<< "$two" | sort | uniq -c | xargs)"
	[ -z "$(tr ' ' '\n' <<< "$one" | grep -vx 0)" ] && [ "$(vrss_sys width)" = 2 ] &&
		[ -n "$(tr ' ' '\n' <<< "$two" | grep -vx 0)" ]
}
ktap_check "ethtool -L vrss0 combined 1: the NIC's table all on ring 0; combined 2: spread over both again" \
	vrss_channels

# restored CHANGE...: after CHANGE, the NIC has the user's table and key.
restored() {
	"$@" || return 1
	echo "# after '$*': NIC's table $(nic_table | tr ' ' '\n' | sort | uniq -c | xargs)," \
	     "the user's $(tr ' ' '\n' <<< "$user_table" | sort | uniq -c | xargs)"
	[ "$(nic_table)" = "$user_table" ] && [ "$(nic_key "$nic")" = "$user_key" ]
}
ktap_check "rxhash off: the user's table and key back in the NIC" restored ethtool -K vrss0 rxhash off

held_again() {
	local n0
	n0=$(vrss_stat vrss0 device_tables)
	vrss_sys_set threshold 100 && ethtool -K vrss0 rxhash on || return 1
	echo "# NIC's table: $(nic_table | tr ' ' '\n' | sort | uniq -c | xargs); tables written" \
	     "+$(($(vrss_stat vrss0 device_tables) - n0)); mode $(vrss_sys mode), width $(vrss_sys width)"
	[ -z "$(nic_table | tr ' ' '\n' | grep -vx 0)" ] &&
		[ "$(vrss_stat vrss0 device_tables)" -gt "$n0" ] && [ "$(vrss_sys mode)" = device ]
}
ktap_check "rxhash on again (threshold 100): held again, every entry on ring 0" held_again
ktap_check "vrss0 down: the user's table and key back" restored ip link set vrss0 down
up_again() {
	vrss_sys_set mode device && ip link set vrss0 up || return 1
	echo "# NIC's table: $(nic_table | tr ' ' '\n' | sort | uniq -c | xargs); mode $(vrss_sys mode)"
	[ -z "$(nic_table | tr ' ' '\n' | grep -vx 0)" ] && [ "$(vrss_sys mode)" = device ]
}
ktap_check "down, rxhash on: mode settable; up again: the table held again, every entry on ring 0" up_again
ktap_check "vrss0 deleted while holding the table: the user's back" restored ip link del vrss0
ktap_check "no taint, no lockdep splat" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
