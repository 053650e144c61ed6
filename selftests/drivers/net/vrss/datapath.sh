#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The vrss link type and its receive path: creation and every refusal, one
# queue per vCPU, frames delivered up through vrss0 and out through the
# lower, all frames on the primary queue with rxhash off (inline, on the
# CPU the lower delivered them, no IPI), spread over the queues by the
# table with rxhash on, each spread queue processed on a CPU of its own,
# ethtool -L, counters that add up, teardown.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"

ktap_plan 42

cleanup() {
	vrss_net_cleanup
	ip link del vrss-tun 2>/dev/null
	ip link del vrss-ipip 2>/dev/null
	kill $iperf 2>/dev/null
	vrss_unload 2>/dev/null
}
trap cleanup EXIT

taint0=$(vrss_taint_other)
ktap_check "insmod vrss.ko threshold=0 (plain RSS once rxhash is on)" vrss_load threshold=0

modprobe veth
modprobe tun
modprobe ipip
ip link add veth0 type veth peer name veth1
ip tuntap add dev vrss-tun mode tun
ip link add vrss-ipip type ipip local 192.0.2.100 remote 192.0.2.101
vrss_expect_refusal "refused without a lower device" "needs a lower device" \
	ip link add name vrss-bad type vrss
vrss_expect_refusal "refused on loopback" "cannot be loopback" \
	ip link add link lo name vrss-bad type vrss
vrss_expect_refusal "refused on a non-Ethernet lower (tun)" "must be Ethernet" \
	ip link add link vrss-tun name vrss-bad type vrss
vrss_expect_refusal "refused on a non-Ethernet lower (ipip)" "must be Ethernet" \
	ip link add link vrss-ipip name vrss-bad type vrss
ip link add link veth0 name vrss-first type vrss
vrss_expect_refusal "refused on a lower that has an rx_handler" "already has an rx_handler" \
	ip link add link veth0 name vrss-bad type vrss
vrss_expect_refusal "refused on a vrss lower" "cannot itself be vrss" \
	ip link add link vrss-first name vrss-bad type vrss
ip link del vrss-first
ip link del veth0
ip link del vrss-tun
ip link del vrss-ipip

ktap_check "vrss0 created on veth0, MAC follows the lower" vrss_net_setup
ktap_check "vrss0 takes veth0's MAC address" test \
	"$(< /sys/class/net/vrss0/address)" = "$(< /sys/class/net/veth0/address)"

ncpu=$(nproc)
rxq=(/sys/class/net/vrss0/queues/rx-*)
nq=${#rxq[@]}
[ -e "${rxq[0]}" ] || nq=0
ktap_check "one rx queue per online vCPU by default ($nq for $ncpu)" test "$nq" = "$ncpu"
ktap_check "ethtool -l: max rx $ncpu, $ncpu in use" sh -c \
	"ethtool -l vrss0 | awk '/^RX:/ { print \$2 }' | tr '\n' ' ' | grep -qx '$ncpu $ncpu '"

ktap_check "ethtool -k: receive-hashing off by default" sh -c \
	'ethtool -k vrss0 | grep -qx "receive-hashing: off"'

ktap_check "ping from the peer answered through vrss0" \
	ip netns exec $VRSS_PEER ping -c 3 -i 0.2 -W 2 $VRSS_IP

N=640
vrss_send_and_count 64 $((N / 64))
echo "# rxhash off, $N packets on 64 flows: per-queue ${delta[*]}"
ktap_check "rxhash off: every packet on the primary queue" \
	test "${delta[0]}" = $N -a "$sum" = $N

# The lower receives on the CPU that sent (veth): pin the sender.  With
# rxhash off the primary hands every frame up inline, right there: queue 0
# counts them, on that CPU, and no IPI is sent for them.
send_pinned() {
	local r
	r=$(vrss_rx_packets)
	taskset -c "$1" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" send $VRSS_IP 64 $((N / 64))
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + N))
}
inline_on() {
	local c=$1 ipis0 q0 ipis q cpu
	ipis0=$(vrss_stat_sum vrss0 ipis)
	q0=$(vrss_stat vrss0 rx_queue_0_packets)
	send_pinned "$c"
	ipis=$(($(vrss_stat_sum vrss0 ipis) - ipis0))
	q=$(($(vrss_stat vrss0 rx_queue_0_packets) - q0))
	cpu=$(vrss_queue_cpu 0)
	echo "# sent from CPU $c: queue 0 counted $q of $N, handed up on CPU $cpu, $ipis IPIs"
	test "$q" = $N -a "$cpu" = "$c" -a "$ipis" = 0
}
ktap_check "rxhash off, received on CPU 0: handed up inline there, no IPI" inline_on 0
if [ "$ncpu" -ge 2 ]; then
	ktap_check "rxhash off, received on CPU 1: handed up inline there, no IPI" inline_on 1
	ktap_check "rxhash off, received on CPU $((ncpu - 1)) again: inline there, no IPI" \
		inline_on $((ncpu - 1))
else
	ktap_result "rxhash off, received on CPU 1: inline there # needs 2 vCPUs" 4
	ktap_result "rxhash off, received on the last CPU: inline there # needs 2 vCPUs" 4
fi

ktap_check "ethtool -K vrss0 rxhash on" sh -c \
	'ethtool -K vrss0 rxhash on && ethtool -k vrss0 | grep -qx "receive-hashing: on"'
# A key that splits the 64 flows over every queue (lib.sh).
ethtool -X vrss0 hkey $VRSS_MS_KEY

# What the spread queues hand the stack, seen by the core as it takes each
# frame (net:napi_gro_receive_entry): its skb's recorded queue
# (queue_mapping, the index + 1) and hash type.  The primary's frames go
# up inline, through no NAPI of vrss0's.
gro_keys=queue_mapping,l4_hash
gro_filter='name == "vrss0"'
vrss_hist_on net/napi_gro_receive_entry $gro_keys "$gro_filter"
vrss_send_and_count 64 $((N / 64))
gro=$(vrss_hist_off net/napi_gro_receive_entry $gro_keys "$gro_filter")
echo "# rxhash on, $N packets on 64 flows: per-queue ${delta[*]}"
echo "# taken from vrss0's NAPIs (queue_mapping l4_hash frames):" $gro
ktap_check "rxhash on: queue counters add up to the packets sent" test "$sum" = $N
used=0
for d in "${delta[@]}"; do [ "$d" -gt 0 ] && used=$((used + 1)); done
recorded() {
	local i want=
	for ((i = 1; i < ${#delta[@]}; i++)); do
		[ "${delta[i]}" = 0 ] || want+="$((i + 1)) 1 ${delta[i]}"$'\n'
	done
	[ -n "$want" ] && [ "$(sort -n <<< "$gro")" = "$(sort -n <<< "${want%$'\n'}")" ]
}
if [ "$ncpu" -ge 2 ]; then
	ktap_check "rxhash on: 64 flows spread over $used of $nq queues" test $used -ge 2
	ktap_check "each spread queue's frames recorded as its own (skb_record_rx_queue), with an L4 hash" recorded
else
	ktap_result "rxhash on: 64 flows spread over the queues # needs 2 vCPUs" 4
	ktap_result "each spread queue's frames recorded as its own # needs 2 vCPUs" 4
fi

# The primary's frames go up on CPU 0, where the sender runs (and the
# lower delivers); spread queue i runs on the i-th CPU that is not primary
# (1, 2, ...): where its poll last ran.
ok=0
for i in "${!delta[@]}"; do
	[ "${delta[i]}" -gt 0 ] || continue
	cpu=$(vrss_queue_cpu ${i})
	want=$((i % ncpu))	# the guest's CPUs are 0..ncpu-1, all online
	echo "# queue $i processed on CPU $cpu (expected $want)"
	[ "$cpu" = "$want" ] || ok=1
done
ktap_result "primary inline on the delivering CPU 0, each spread queue on a CPU of its own" $ok

# What the lower received is what vrss0 delivered or counted as dropped.
lower_rx() { vrss_read /sys/class/net/veth0/statistics/rx_packets; }
vrss_rx() {
	echo $(($(< /sys/class/net/vrss0/statistics/rx_packets) +
		$(< /sys/class/net/vrss0/statistics/rx_dropped)))
}
iperf3 -s -1 -B $VRSS_IP > /dev/null 2>&1 &
iperf=$!
vrss_wait_listen 5201
l0=$(lower_rx); v0=$(vrss_rx)
ipis0=$(vrss_stat_sum vrss0 ipis)
cal0=$(vrss_cal_ipis)
ktap_check "a 4-stream TCP transfer through vrss0 (iperf3, 3 s)" \
	ip netns exec $VRSS_PEER iperf3 -c $VRSS_IP -P 4 -t 3 -f m
wait $iperf
l1=$(lower_rx); v1=$(vrss_rx)
cal=$(($(vrss_cal_ipis) - cal0))
ipis=$(($(vrss_stat_sum vrss0 ipis) - ipis0))
echo "# during TCP: lower received $((l1 - l0)), vrss0 delivered + dropped $((v1 - v0));" \
     "IPIs: vrss's count $ipis, function-call interrupts $cal"
ktap_check "lower's rx = vrss0's rx + drops (TCP)" test $((l1 - l0)) = $((v1 - v0))

# Switching steering under traffic loses nothing and strands no queue: a
# load the rings hold (one sender, 6400 frames), so no drop either.
l0=$(lower_rx); v0=$(vrss_rx)
p0=$(< /sys/class/net/vrss0/statistics/rx_packets)
vrss_send_udp 32 200 &
sender=$!
# Back to back (an ethtool start takes the guest longer than a sleep
# would): 10 times, and on while the sender sends, up to 50.
for ((i = 0; i < 50; i++)); do
	[ $i -lt 10 ] || kill -0 $sender 2> /dev/null || break
	ethtool -K vrss0 rxhash off
	ethtool -K vrss0 rxhash on
done
wait $sender
sleep 0.5
l1=$(lower_rx); v1=$(vrss_rx)
p1=$(< /sys/class/net/vrss0/statistics/rx_packets)
echo "# rxhash toggled $((2 * i)) times under 6400 packets: lower $((l1 - l0)), vrss0 delivered" \
     "$((p1 - p0)), dropped $((v1 - v0 - (p1 - p0)))"
ktap_check "rxhash toggled under traffic: lower received 6400, vrss0 delivered 6400, dropped none" \
	test $((l1 - l0)) = 6400 -a $((p1 - p0)) = 6400 -a $((v1 - v0)) = 6400
vrss_send_and_count 64 1
ktap_check "after the toggling every queue still delivers (64 of 64)" test "$sum" = 64

# The counters against what the peer sent, not against each other: 64
# datagrams of 100 bytes, 128 at the IP layer (where vrss0 counts, as
# veth does), over every queue.
counters() {
	local k v
	echo "$(< /sys/class/net/vrss0/statistics/rx_packets)" \
	     "$(< /sys/class/net/vrss0/statistics/rx_bytes)"
	while read -r k v; do
		[[ $k =~ ^rx_queue_[0-9]+_(packets|bytes):$ ]] && echo "$v"
	done < <(ethtool -S vrss0)
}
c0=($(counters))
r=$(vrss_rx_packets)
vrss_send_udp 64 1 100
vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + 64))
c1=($(counters))
d=($(vrss_queue_delta "${c0[*]}" "${c1[*]}"))
echo "# 64 datagrams of 100 bytes: rx_packets +${d[0]}, rx_bytes +${d[1]}; per queue (packets bytes): ${d[*]:2}"
rx_counts() {
	local i qp=0 qb=0
	[ "${d[0]}" = 64 ] && [ "${d[1]}" = $((64 * 128)) ] || return 1
	for ((i = 2; i < ${#d[@]}; i += 2)); do
		[ "${d[i + 1]}" = $((d[i] * 128)) ] || return 1
		qp=$((qp + d[i])) qb=$((qb + d[i + 1]))
	done
	[ "$qp" = 64 ] && [ "$qb" = $((64 * 128)) ]
}
ktap_check "ip -s link and every rx_queue_N_packets/bytes count what the peer sent (64 of 128 bytes)" rx_counts

ktap_check "ethtool -L rx 1: one queue in use" sh -c \
	'ethtool -L vrss0 rx 1 && ethtool -l vrss0 | awk "/^RX:/ { print \$2 }" | tail -n 1 | grep -qx 1'
vrss_send_and_count 64 $((N / 64))
echo "# rxhash on, 1 queue: per-queue ${delta[*]}"
ktap_check "rxhash on with one queue in use: all on the primary" \
	test "${delta[0]}" = $N -a "$sum" = $N

out=$(ethtool -L vrss0 rx $((ncpu + 1)) 2>&1); rc=$?
after=$(ethtool -l vrss0 | awk '/^RX:/ { print $2 }' | tail -n 1)
ktap_check "ethtool -L rx beyond numrxqueues refused, nothing changed" \
	test $rc -ne 0 -a "$after" = 1

ktap_check "ethtool -L combined $ncpu: $ncpu rx queues in use" sh -c \
	"ethtool -L vrss0 combined $ncpu && ethtool -l vrss0 | awk '/^RX:/ { print \$2 }' | tail -n 1 | grep -qx $ncpu"

# Carrier, MTU and MAC address follow the lower device.
ip link set veth0 down
sleep 0.2
ktap_check "lower down: vrss0 loses carrier" \
	test "$(cat /sys/class/net/vrss0/carrier 2>/dev/null || echo 0)" = 0
ip link set veth0 up
sleep 0.5
ktap_check "lower up: vrss0 has carrier again" test "$(< /sys/class/net/vrss0/carrier)" = 1
# The carrier, not only the admin state: the peer down takes veth0's
# carrier and leaves veth0 up.
carrier_is() {
	[ "$(cat /sys/class/net/vrss0/carrier 2>/dev/null || echo 0)" = "$1" ] &&
		ip -o link show veth0 | grep -q '[<,]UP[,>]'
}
ip -n $VRSS_PEER link set veth1 down
sleep 0.2
ktap_check "the lower up without carrier (its peer down): vrss0 loses carrier" carrier_is 0
# The peer's neighbour entry went with its link.
ip -n $VRSS_PEER -b - <<-EOF
	link set veth1 up
	neigh replace $VRSS_IP dev veth1 nud permanent lladdr $(< /sys/class/net/vrss0/address)
EOF
sleep 0.5
ktap_check "... and its carrier back: vrss0 has carrier again" carrier_is 1
ip link set veth0 mtu 1400
ktap_check "lower MTU 1400: vrss0 MTU follows down" test "$(< /sys/class/net/vrss0/mtu)" = 1400
ktap_check "vrss0 MTU above the lower's refused" sh -c '! ip link set vrss0 mtu 1450 2>/dev/null'
ktap_check "vrss0 MTU below the lower's accepted" sh -c \
	'ip link set vrss0 mtu 1300 && [ "$(cat /sys/class/net/vrss0/mtu)" = 1300 ]'
ip link set veth0 address 02:00:00:00:00:42
ktap_check "lower MAC change: vrss0 follows" \
	test "$(< /sys/class/net/vrss0/address)" = 02:00:00:00:00:42

ip link del veth0
ktap_check "deleting the lower deletes vrss0" sh -c '! ip link show vrss0 2>/dev/null'

vrss_net_cleanup
vrss_net_setup > /dev/null 2>&1
ktap_check "rmmod with a vrss device present removes it" sh -c \
	'rmmod vrss && ! ip link show vrss0 2>/dev/null'

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"

ktap_finish
