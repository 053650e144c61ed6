#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-order bucket moves: a bucket changes queue only once its old queue
# has handed the stack every frame it holds for it.  16 UDP flows carry
# sequence numbers from the peer, in bursts of 64 back-to-back datagrams
# (UDP GSO, segmented before veth1) so that queues hold frames when their
# buckets move, while the width is forced up and down hundreds of times
# (threshold flipped between 0 and 100 every few ms, interval_ms 10), the
# queue count changes with ethtool -L and rxhash goes off and on (frames
# must not overtake those on the rings), and so do the key and the fields
# hashed (ethtool -X hkey, -N rx-flow-hash: they re-map flows).  The
# receiver counts datagrams that arrive after a later one of their flow:
# there must be none, and received + counted drops = sent.  The moves and
# the frames held back for order are counted too, so the test shows the
# rule was at work.
#
# The same transfer runs again in the receive modes that keep frames out
# of the stack after a poll (the order must hold in every one): with
# gro_flush_timeout and napi_defer_hard_irqs on vrss0 and a receiver that
# asks for UDP GRO, so that GRO holds its datagrams between polls; and
# with busy polling, which runs vrss0's polls from the receiver's reads.
# Last, request/response flows across the same contractions, plain and
# with the GRO settings: a bucket that parks behind its old ring with no
# later frame to move it (the answer waits for the request) must still
# leave, so no transaction is lost and hardly any (a stalled vCPU) waits
# over 200 ms.
#
# The rings' 32-bit positions start 2048 frames before their wrap (the
# module's test_ring_start, for tests only), so every transfer crosses it.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
command -v taskset > /dev/null || ktap_skip_all "taskset not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"
nq=$(nproc)
COUNT=${VRSS_REORDER_COUNT:-96000}
FLOWS=16

ktap_plan 29

tmp=$(mktemp -d)
flipper=
receiver=
echo=
cleanup() {
	[ -z "$flipper" ] || kill "$flipper" 2>/dev/null
	[ -z "$receiver" ] || kill "$receiver" 2>/dev/null
	[ -z "$echo" ] || kill "$echo" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
	vrss_net_cleanup
	[ -w /sys/module/vrss/parameters/test_ring_start ] &&
		echo 0 > /sys/module/vrss/parameters/test_ring_start
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)
vrss_klog_mark

# The flows differ only in the low 4 bits of their source port: with the
# boot's random key, 1 boot in 32 hashes all 16 onto queue 0 and no bucket
# ever moves.  Microsoft's verification key spreads them evenly over 2, 3
# or 4 queues (an independent Toeplitz says 8+8, 5+5+6, 4+4+4+4).
WRAP=$(((1 << 32) - 2048))
setup() {
	vrss_load && echo $WRAP > /sys/module/vrss/parameters/test_ring_start &&
		vrss_net_setup numrxqueues "$nq" && ethtool -K vrss0 rxhash on &&
		ethtool -X vrss0 hkey $VRSS_MS_KEY &&
		ip link set vrss0 down && ethtool -G vrss0 rx 4096 && ip link set vrss0 up &&
		vrss_sys_set interval_ms 10 &&
		ip netns exec $VRSS_PEER ethtool -K veth1 gso off tx-udp-segmentation off > /dev/null &&
		sysctl -qw net.core.rmem_max=$((64 << 20))
}
ktap_check "vrss0 with $nq queues, rings of 4096, rxhash on, interval_ms 10, GSO off on veth1" setup

# The sender on CPU 0: veth delivers there, the primary hands frames up
# inline there (in the backlog poll's batch), while the flipper (on the
# last CPU) moves their buckets to spread queues on other CPUs and back.
cpu0=$VRSS_SEND_CPU
last=$((nq - 1))
# transfer [MODE [BURST [GAP [FLIPCPU]]]]: MODE as vrss_traffic seqrecv's
# (plain, gro, busy=PEER), BURST datagrams of a flow back to back (64),
# GAP seconds of pause after each round (0), the flipper on FLIPCPU (the
# last).
transfer() {
	local mode=${1:-plain} burst=${2:-64} gap=${3:-0} flipcpu=${4:-$last}

	read -r -a parts0 < <(vrss_seq_drop_parts)
	q0=$(vrss_queue_packets vrss0)
	m0=$(vrss_stat vrss0 bucket_moves)
	h0=$(vrss_stat vrss0 rx_held_for_order)
	w0=$(($(vrss_stat vrss0 spread_events) + $(vrss_stat vrss0 contract_events)))
	vrss_hist_on vrss/vrss_bucket_move from,to

	taskset -c $last "$VRSS_TRAFFIC" seqrecv $VRSS_IP $FLOWS $COUNT "$mode" > "$tmp/recv" &
	receiver=$!
	vrss_wait_ready "$tmp/recv"
	taskset -c "$flipcpu" "$VRSS_TRAFFIC" "${flip[@]}" > "$tmp/flip" &
	flipper=$!
	# The sender starts once the flipper flips (else the transfer may be
	# over before the first width change).
	vrss_wait_ready "$tmp/flip"
	start=$(date +%s%3N)
	ip netns exec $VRSS_PEER taskset -c "$cpu0" "$VRSS_TRAFFIC" seqsend $VRSS_IP $FLOWS $COUNT "$burst" "$gap"
	sent_ms=$(($(date +%s%3N) - start))
	sleep 0.5
	touch "$tmp/stop"
	wait "$flipper"
	flipper=
	wait "$receiver"
	receiver=

	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	read -r _ merged < <(grep '^merged' "$tmp/recv")
	read -r drops drops_apart < <(vrss_seq_drops_since "${parts0[@]}")
	moves=$(($(vrss_stat vrss0 bucket_moves) - m0))
	# The moves as traced (vrss:vrss_bucket_move), by queues: how many,
	# and how many to the queue they were on.
	read -r traced self < <(vrss_hist_off vrss/vrss_bucket_move from,to |
		awk '{ n += $3; if ($1 == $2) s += $3 } END { print n + 0, s + 0 }')
	held=$(($(vrss_stat vrss0 rx_held_for_order) - h0))
	widths=$(($(vrss_stat vrss0 spread_events) + $(vrss_stat vrss0 contract_events) - w0))
	read -r _ flips _ channels _ toggles < <(grep '^flips' "$tmp/flip")
	read -r _ rehash < <(grep '^rehash' "$tmp/flip")
	# A reorder in any transfer counts: a second one never hides it.
	reordered_all=$((reordered_all + ${reordered:-1} + ${foreign:-1}))
}
# The flipper also changes the key (to this one and back) and the fields
# udp4 hashes (addresses only and back), which re-map every flow.
OTHER_KEY=$(tr ':' '\n' <<< "$VRSS_MS_KEY" | tac | paste -sd:)
flip=(flip vrss0 "$nq" "$tmp/stop" $VRSS_MS_KEY $OTHER_KEY)
reordered_all=0
transfer
# A transfer in which no bucket moved, or none waited for order, did not
# exercise the rule (whether a flip lands while queue 0 still holds frames
# is up to TCG's timing), nor one the flipper was too slow for (fewer
# than 100 width changes): say so, run once more.
if [ "$moves" = 0 ] || [ "$held" = 0 ] || [ "$widths" -lt 100 ] || [ "${channels:-0}" -lt 5 ]; then
	echo "# bucket moves $moves, held back $held ($widths width changes," \
	     "rx_nohash $(vrss_stat vrss0 rx_nohash), per queue" \
	     "$(vrss_queue_delta "$q0" "$(vrss_queue_packets vrss0)"), ethtool -L $channels times):" \
	     "the rule was not exercised enough, once more, twice as long"
	# The flipper's pace is the guest's exec time (ethtool), which a busy
	# host can double.  A longer transfer gives it the time.
	COUNT=$((COUNT * 2))
	rm -f "$tmp/stop" "$tmp/recv" "$tmp/flip"
	transfer
fi
echo "# sent $COUNT on $FLOWS flows in $sent_ms ms; received $received, reordered $reordered," \
     "counted drops $drops ($drops_apart)"
echo "# threshold flips $flips, width changes $widths, ethtool -L $channels times, rxhash off/on $toggles," \
     "key and field changes $rehash, bucket moves $moves," \
     "frames held back for order $held"

ktap_check "the width changed over a hundred times during the transfer" test "$widths" -ge 100
ktap_check "... and the queue count too (ethtool -L)" test "$channels" -ge 5
ktap_check "... and the key and the hashed fields (ethtool -X hkey, -N)" test "${rehash:-0}" -ge 4
ktap_check "buckets moved, and frames were held back for order" \
	test "$moves" -gt 0 -a "$held" -gt 0
echo "# traced bucket moves (vrss:vrss_bucket_move) $traced, to their own queue $self"
ktap_check "every bucket move traced, each to another queue" test "$traced" = "$moves" -a "$self" = 0
ktap_check "no flow reordered (in any transfer)" test "$reordered_all" = 0
ktap_check "received + counted drops = sent" test $((${received:-0} + drops)) = $COUNT
# Drops (full rings or socket buffer when TCG stalls a vCPU) are counted
# above; many of them would leave too few frames in flight for the test.
ktap_check "drops are few (under 10 %)" test $((drops * 10)) -lt $COUNT

# transfer_in MODE WHAT [GAP [FLIPCPU [RETRY]]]: the transfer again in
# receive mode MODE; its checks: no reorder, every frame accounted for.
# Bursts of 48: UDP GRO completes a merged datagram at 64, and holds a
# shorter run until a flush.  RETRY 1: once more if no frame was held
# back (whether a change finds frames on a ring is up to TCG's timing);
# both transfers are checked.
transfer_in() {
	local mode=$1 what=$2 gap=${3:-0} flipcpu=${4:-$last} retry=${5:-0} busy0 lost=0
	rm -f "$tmp/stop" "$tmp/recv" "$tmp/flip"
	reordered_all=0
	busy0=$(vrss_field TcpExt: BusyPollRxPackets < /proc/net/netstat)
	transfer "$mode" 48 "$gap" "$flipcpu"
	if [ "$retry" = 1 ] && [ "$held" = 0 ]; then
		echo "# $what: received $received, reordered $reordered, counted drops $drops," \
		     "held back none: the rule was not exercised, once more"
		lost=$((COUNT - ${received:-0} - drops))
		rm -f "$tmp/stop" "$tmp/recv" "$tmp/flip"
		transfer "$mode" 48 "$gap" "$flipcpu"
	fi
	busy=$(($(vrss_field TcpExt: BusyPollRxPackets < /proc/net/netstat) - busy0))
	echo "# $what: received $received, reordered $reordered, counted drops $drops ($drops_apart)," \
	     "reads of merged datagrams $merged, frames busy-polled $busy;" \
	     "width changes $widths, bucket moves $moves, held back $held"
	ktap_check "$what: no flow reordered" test "$reordered_all" = 0
	ktap_check "$what: received + counted drops = sent, drops under 10 %" \
		test $((${received:-0} + drops)) = $COUNT -a $((drops * 10)) -lt $COUNT -a "$lost" = 0
}

# GRO holds frames past the poll: with gro_flush_timeout, completing a
# poll flushes only old ones (and with napi_defer_hard_irqs, the poll
# after the next hard interrupt, or the timer, does).
# gro_on NS DEFER
gro_on() {
	echo "$1" > /sys/class/net/vrss0/gro_flush_timeout &&
		echo "$2" > /sys/class/net/vrss0/napi_defer_hard_irqs
}
gro_off() {
	gro_on 0 0
}
ktap_check "vrss0 takes gro_flush_timeout and napi_defer_hard_irqs" gro_on 10000000 0
transfer_in gro "GRO held (gro_flush_timeout 10 ms, a UDP GRO socket)"
ktap_check "... and GRO merged datagrams (the mode was at work)" test "${merged:-0}" -gt 0
gro_off

sysctl -qw net.core.busy_poll=50
transfer_in "busy=$VRSS_PEER_IP" "busy polling (SO_BUSY_POLL 100 us, net.core.busy_poll 50, UDP GRO sockets)"
# Not asserted: a read busy-polls vrss0's NAPI context only when no kick
# scheduled it first, which under TCG is rare.  The protocol does not
# count on it either way: every poll that took frames flushes GRO before
# it publishes its head.
sysctl -qw net.core.busy_poll=0

# RPS and RFS on vrss0's queues: a spread queue's frames must not wait in
# another CPU's backlog after its poll, while their bucket goes inline
# (where RPS never applies) and its next frame goes up first.  RPS sends
# them to CPU $cpu0, whose backlog also holds veth's next frames, not yet
# through vrss: the likeliest overtaking.  RFS, to the receiver's CPU.
# The flipper leaves the queue count alone: a queue ethtool -L takes away
# loses its RPS settings.
# rps_on MASK FLOWS: rps_cpus MASK and rps_flow_cnt FLOWS on every queue.
rps_on() {
	local rx
	sysctl -qw net.core.rps_sock_flow_entries=$(($2 ? 4096 : 0)) || return 1
	for rx in /sys/class/net/vrss0/queues/rx-*; do
		echo "$1" > "$rx/rps_cpus" && echo "$2" > "$rx/rps_flow_cnt" || return 1
	done
}
flip=(flip vrss0 0 "$tmp/stop")
mask=$(printf '%x' $((1 << cpu0)))
ktap_check "RPS on vrss0's queues: rps_cpus $mask (CPU $cpu0)" rps_on "$mask" 0
transfer_in plain "RPS on vrss0's queues"
ktap_check "RFS on vrss0's queues: rps_flow_cnt 256, rps_sock_flow_entries 4096" rps_on 0 256
transfer_in plain "RFS on vrss0's queues"
rps_on 0 0

# Key and field changes alone, spread at full width all along: each one
# re-maps the flows while the rings hold their frames.  With 3 or more
# queues the sender pauses 2 ms after each round of 48 datagrams a flow:
# unpaced, the flood outruns the ring hashing gives the most flows, which
# then drops much of the transfer while the others drop none.
vrss_sys_set threshold 0
flip=(rekey vrss0 "$tmp/stop" $VRSS_MS_KEY $OTHER_KEY)
rekey_gap=0
[ "$nq" -le 2 ] || rekey_gap=0.002
rekey="key and field changes while spread (ethtool -X hkey, -N rx-flow-hash)"
transfer_in plain "$rekey" $rekey_gap "$last" 1
ktap_check "... and the key and the fields changed ($rehash times), frames held back for order" \
	test "${rehash:-0}" -ge 8 -a "$held" -gt 0
vrss_sys_set threshold 80

# rr_across WHAT: request/response flows while the width flips.
RR=${VRSS_REORDER_RR:-3000}
rr_across() {
	local what=$1 m0 w0
	rm -f "$tmp/stop" "$tmp/echo" "$tmp/flip"
	taskset -c $last "$VRSS_TRAFFIC" echo $VRSS_IP > "$tmp/echo" &
	echo=$!
	vrss_wait_ready "$tmp/echo"
	m0=$(vrss_stat vrss0 bucket_moves)
	w0=$(vrss_stat vrss0 contract_events)
	taskset -c $last "$VRSS_TRAFFIC" flip vrss0 "$nq" "$tmp/stop" > "$tmp/flip" &
	flipper=$!
	vrss_wait_ready "$tmp/flip"
	ip netns exec $VRSS_PEER taskset -c "$cpu0" "$VRSS_TRAFFIC" rr $VRSS_IP $FLOWS $RR > "$tmp/rr"
	touch "$tmp/stop"
	wait "$flipper"
	flipper=
	kill "$echo"
	wait "$echo" 2>/dev/null
	echo=
	read -r _ rr _ lost _ slow _ max_ms < "$tmp/rr"
	echo "# $what: $rr transactions on $FLOWS flows, lost $lost, over 200 ms $slow," \
	     "slowest $max_ms ms; contractions $(($(vrss_stat vrss0 contract_events) - w0))," \
	     "bucket moves $(($(vrss_stat vrss0 bucket_moves) - m0))"
	# A bucket left parked with no frame to move it would hold a
	# transaction of every few contractions; one in a thousand over
	# 200 ms is a stalled vCPU (TCG beside a busy host).
	ktap_check "$what: every transaction answered, at most $((RR / 1000)) over 200 ms" \
		test "${lost:-1}" = 0 -a "${slow:-1}" -le $((RR / 1000))
}
rr_across "request/response across contractions"
gro_on 150000000 2
rr_across "request/response across contractions, gro_flush_timeout 150 ms and napi_defer_hard_irqs 2 on vrss0"
gro_off

# After all those moves, every bucket where the table in effect says: one
# that came home while the table changed must not stay inline (nothing
# re-reads the table for a bucket at home but a claim).
vrss_sys_set threshold 0
for _ in $(seq 50); do
	[ "$(vrss_sys width)" = "$nq" ] && break
	sleep 0.1
done
sleep 0.2
vrss_check_steering "after the moves, at full width: every flow on its queue in the table in effect" \
	$VRSS_PEER_IP $VRSS_IP --effective
vrss_sys_set threshold 80

# Each spread queue took more frames than the 2048 before the wrap.
wrapped() {
	local i n ok=0
	for ((i = 1; i < nq; i++)); do
		n=$(vrss_stat vrss0 rx_queue_${i}_packets)
		echo "queue $i: $n frames from position $WRAP"
		[ "$n" -gt 2048 ] || ok=1
	done
	return $ok
}
ktap_check "every spread queue's ring positions wrapped (2048 frames before 2^32 at the start)" wrapped
ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
