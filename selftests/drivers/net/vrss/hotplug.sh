#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CPU hotplug: a queue whose CPU goes offline is processed on another
# online CPU, nothing is lost, dropped or reordered, and it goes home when
# its CPU comes back, also with traffic flowing while the CPU goes away.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"
[ -w /sys/devices/system/cpu/cpu1/online ] || ktap_skip_all "CPU 1 cannot go offline here"

ktap_plan 12
vrss_klog_mark
tmp=$(mktemp -d)

cleanup() {
	echo 1 > /sys/devices/system/cpu/cpu1/online
	[ -w /sys/devices/system/cpu/cpu2/online ] && echo 1 > /sys/devices/system/cpu/cpu2/online
	[ -n "$receiver" ] && kill "$receiver" 2> /dev/null
	rm -rf "$tmp"
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT

taint0=$(vrss_taint_other)
setup() {
	vrss_load threshold=0 && vrss_net_setup numrxqueues 2 && ethtool -K vrss0 rxhash on &&
		ethtool -X vrss0 hkey $VRSS_MS_KEY
}
ktap_check "vrss0 with 2 queues, rxhash on" setup

ncpu=$(nproc)
# The load work measures CPU 0 as the primary (veth delivers where the
# sender runs), then waits 10 s: what places queue 1 below is the hotplug
# callback, not the next sample.
vrss_send_and_count 32 10
sleep 0.3
vrss_sys_set interval_ms 10000
ktap_check "CPU 1 offline" sh -c 'echo 0 > /sys/devices/system/cpu/cpu1/online'
vrss_send_and_count 32 10
echo "# CPU 1 offline: per-queue ${delta[*]}"
ktap_check "CPU 1 offline: all 320 packets delivered" test "$sum" = 320
q1=${delta[1]}
# On another online CPU: with 3 vCPUs or more, one of its own, not CPU 0,
# where veth delivers (a queue left on the dead CPU would be polled where
# its kick failed: on CPU 0).  With 2, CPU 0 is the only one left.
q1cpu=$(vrss_queue_cpu 1)
not_cpu=1
[ "$ncpu" -lt 3 ] || not_cpu="0 or 1"
moved_away() {
	[ "$q1" -gt 0 ] && [ "$q1cpu" != 1 ] &&
		[ "$(cat /sys/devices/system/cpu/cpu$q1cpu/online 2>/dev/null || echo 1)" = 1 ] &&
		{ [ "$ncpu" -lt 3 ] || [ "$q1cpu" != "$VRSS_SEND_CPU" ]; }
}
ktap_check "queue 1 got traffic ($q1) and ran on online CPU $q1cpu, not CPU $not_cpu" moved_away

ktap_check "CPU 1 online" sh -c 'echo 1 > /sys/devices/system/cpu/cpu1/online'
vrss_send_and_count 32 10
echo "# CPU 1 back: per-queue ${delta[*]}"
ktap_check "CPU 1 back: queue 1 runs on CPU 1 again, all delivered" \
	test "$sum" = 320 -a "$(vrss_queue_cpu 1)" = 1
vrss_sys_set interval_ms 100

# seq_flapping CPU SENDCPU: 64000 sequenced datagrams the rings hold (16
# flows, 16 datagrams each every 4 ms) from the peer's SENDCPU to a
# receiver on CPU 0, CPU going offline and online 5 times once they flow.
# Sets received, reordered, drops, drops_apart, and flowing (the packets
# that arrived while CPU flapped).
rx() { vrss_read /sys/class/net/vrss0/statistics/rx_packets; }
seq_flapping() {
	local cpu=$1 sendcpu=$2 seq r0 r1 i parts0
	# The receiver's buffer rides out a stalled vCPU (TCG, stop_machine).
	sysctl -qw net.core.rmem_max=$((64 << 20))
	read -r -a parts0 < <(vrss_seq_drop_parts)
	taskset -c 0 "$VRSS_TRAFFIC" seqrecv $VRSS_IP 16 64000 > "$tmp/recv" &
	receiver=$!
	vrss_wait_ready "$tmp/recv"
	r0=$(rx)
	ip netns exec $VRSS_PEER taskset -c "$sendcpu" "$VRSS_TRAFFIC" seqsend $VRSS_IP 16 64000 16 0.004 &
	seq=$!
	for ((i = 0; i < 50; i++)); do
		[ "$(rx)" -gt $((r0 + 100)) ] && break
		sleep 0.2
	done
	r1=$(rx)
	for i in 1 2 3 4 5; do
		echo 0 > /sys/devices/system/cpu/cpu$cpu/online
		sleep 0.2
		echo 1 > /sys/devices/system/cpu/cpu$cpu/online
		sleep 0.2
	done
	flowing=$(($(rx) - r1))
	wait $seq
	wait $receiver
	receiver=
	read -r _ received _ reordered _ < <(grep '^received' "$tmp/recv")
	read -r drops drops_apart < <(vrss_seq_drops_since "${parts0[@]}")
}

# Offline and online repeatedly under sequenced traffic from CPU 0:
# nothing lost, dropped or reordered while queue 1 leaves CPU 1 and comes
# back, five times.
seq_flapping 1 0
echo "# CPU 1 flapping 5 times under traffic: $flowing packets arrived while flapping;" \
     "received $received of 64000, reordered $reordered, counted drops $drops ($drops_apart)"
ktap_check "traffic was flowing while CPU 1 flapped" test "$flowing" -gt 0
ktap_check "under CPU 1 flapping: all 64000 sequenced datagrams received in order, none dropped" \
	test "${received:-0}" = 64000 -a "${reordered:-1}" = 0 -a "$drops" = 0

# With 3 vCPUs or more: the lower delivers on CPU 1, not the first online
# CPU, and CPU 2 (queue 2's) flaps under sequenced traffic.  The queues
# are placed again each time, away from CPU 1 (the measured primary), not
# as if CPU 0 were the primary; the load work, which would place them
# right again at its next interval, waits 10 s meanwhile.
flap_seq() {
	local received reordered drops drops_apart flowing
	vrss_net_cleanup
	vrss_net_setup numrxqueues 3 && ethtool -K vrss0 rxhash on &&
		ethtool -X vrss0 hkey $VRSS_MS_KEY || return 1
	# The load work measures CPU 1 as the primary meanwhile (its
	# placement then keeps queues off it: checked below, after the flaps).
	VRSS_SEND_CPU=1 vrss_send_and_count 32 10
	sleep 0.3
	vrss_sys_set interval_ms 10000
	qdrops0=$(ethtool -S vrss0 | grep -E 'rx_queue_[0-9]+_drops' | awk '{print $2}' | xargs)
	seq_flapping 2 1
	echo "received $received of 64000, reordered $reordered, counted drops $drops ($drops_apart);" \
	     "ring drops per queue before: $qdrops0, after:" \
	     "$(ethtool -S vrss0 | grep -E 'rx_queue_[0-9]+_drops' | awk '{print $2}' | xargs)," \
	     "dropped while down $(vrss_stat vrss0 rx_dropped_down)"
	test "${received:-0}" = 64000 -a "${reordered:-1}" = 0
}
placed() {
	local i cpu
	VRSS_SEND_CPU=1 vrss_send_and_count 32 10
	echo "after CPU 2 came back, per queue ${delta[*]}"
	[ "$sum" = 320 ] || return 1
	for i in 1 2; do
		cpu=$(vrss_queue_cpu ${i})
		echo "queue $i on CPU $cpu"
		[ "${delta[i]}" -gt 0 ] && [ "$cpu" != 1 ] || return 1
	done
}
if [ "$(nproc)" -ge 3 ] && [ -w /sys/devices/system/cpu/cpu2/online ]; then
	ktap_check "3 queues, CPU 2 flapping 5 times under sequenced traffic from CPU 1: none lost, none reordered" flap_seq
	ktap_check "afterwards no spread queue on CPU 1, where the lower delivers" placed
else
	ktap_result "3 queues, CPU 2 flapping under sequenced traffic (needs 3 vCPUs)" 4
	ktap_result "afterwards no spread queue on the delivering CPU (needs 3 vCPUs)" 4
fi
ktap_check "no lockdep or KASAN report in the kernel log (a WARN or BUG panics the guest)" vrss_klog_clean

ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
