#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Rebalancing (heavy flows that hash luck put on one queue): three heavy
# UDP flows whose Toeplitz hashes (from the key and table `ethtool -x`
# shows) put them all on queue 1 of 4, and one light flow on each other
# queue.  With the width at 4 the heavy flows saturate queue 1's vCPU
# while two others idle: within a few intervals the heavy buckets must be
# on three different queues (and vCPUs), the light ones where they were,
# the user's table unchanged, with every move counted and traced.  Then
# `rebalance 0` puts the user's table back in effect under the same
# traffic.  Every flow carries sequence numbers: none may be reordered,
# and received + counted drops = sent.
#
# With 2 or 3 vCPUs, the primary's turn: two heavy flows on queue 0 (the
# primary, inline on the vCPU the lower delivers on, where the senders
# and the receiver run too), a light one on queue 1 whose vCPU idles: a
# heavy bucket must leave the primary for queue 1, in order.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
for t in ethtool taskset; do
	command -v $t > /dev/null || ktap_skip_all "$t not installed"
done
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs 2 vCPUs"

tmp=$(mktemp -d)
pids=()
cleanup() {
	touch "$tmp/stop"
	[ ${#pids[@]} = 0 ] || kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
	vrss_trace_off
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)
vrss_klog_mark

# Everything of the test's own on CPU 0, with the senders and the
# receiver: CPUs 1 to 3 carry the spread queues and nothing else.
taskset -cp 0 $$ > /dev/null

# table: the user's table as ethtool -x shows it, one line.
table() {
	ethtool -x vrss0 | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) printf "%s ", $i }'
}
# queues_of BUCKET...: their queues in the table in effect.
queues_of() {
	local -a eff
	local b out=
	read -r -a eff < /sys/class/net/vrss0/vrss/effective_indir
	for b; do out+="${eff[b]} "; done
	echo "${out% }"
}

# flows_start: the receiver, then the light and the heavy flows' senders
# (source ports $light and $heavy) until $tmp/stop; drops count from here.
flows_start() {
	d0=$(vrss_seq_drops)
	"$VRSS_TRAFFIC" seqrecv $VRSS_IP 1024 1000000000 > "$tmp/recv" &
	pids+=($!)
	vrss_wait_ready "$tmp/recv"
	ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" seqsend $VRSS_IP "$light" 1000000000 1 0.02 "$tmp/stop" > "$tmp/light" &
	pids+=($!)
	ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" seqsend $VRSS_IP "$heavy" 1000000000 64 0 "$tmp/stop" > "$tmp/heavy" &
	pids+=($!)
}

# flows_stop: the senders stopped, then the receiver; what each sent
# (sent_h, sent_l), what it received (received, reordered, foreign) and
# the counted drops (drops).
flows_stop() {
	touch "$tmp/stop"
	wait "${pids[2]}" "${pids[1]}"
	wait "${pids[0]}"
	pids=()
	read -r _ sent_h < "$tmp/heavy"
	read -r _ sent_l < "$tmp/light"
	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	drops=$(($(vrss_seq_drops) - d0))
}

# Two queues: a heavy bucket off the primary.
off_primary() {
	local picked heavy light hb w eff start left='' q1 q2 delta sent_h sent_l
	local received reordered foreign drops d0 fd

	ktap_plan 7
	setup() {
		vrss_load threshold=50 hysteresis=20 && vrss_net_setup numrxqueues 2 &&
			ethtool -K vrss0 rxhash on && ethtool -X vrss0 hkey $VRSS_MS_KEY &&
			sysctl -qw net.core.rmem_max=$((64 << 20))
	}
	ktap_check "vrss0 with 2 queues, threshold 50, hysteresis 20" setup
	picked=$("$VRSS_DIR/vrss_udp.py" pick $VRSS_PEER_IP $VRSS_IP vrss0 0 2)
	echo "$picked" | grep '^#'
	read -r heavy light < <(echo "$picked" | grep -v '^#')
	read -r -a hb < <(echo "$picked" | awk '/heavy:/ { printf "%s ", $6 }')
	ktap_check "2 heavy flows in 2 buckets of queue 0, a light one on queue 1" \
		test ${#hb[@]} = 2 -a -n "$light"
	user_table=$(table)
	flows_start
	# Polled in bash, no forks.
	start=${EPOCHREALTIME/./}
	exec {fd}<> <(:)
	while [ $(((${EPOCHREALTIME/./} - start) / 1000)) -lt 20000 ]; do
		read -r w < /sys/class/net/vrss0/vrss/width
		read -r -a eff < /sys/class/net/vrss0/vrss/effective_indir
		if [ "$w" = 2 ] && [ "${eff[hb[0]]}${eff[hb[1]]}" != 00 ]; then
			left=$(((${EPOCHREALTIME/./} - start) / 1000))
			break
		fi
		read -r -t 0.05 -u "$fd" _
	done
	echo "# width $(vrss_sys width), heavy buckets on queues $(queues_of "${hb[@]}")" \
	     "after ${left:-no move in 20000} ms; queue_load [$(vrss_sys queue_load)]"
	ktap_check "a heavy bucket left the primary queue for queue 1" test -n "$left"
	sleep 1
	q1=$(vrss_queue_packets vrss0)
	sleep 1
	q2=$(vrss_queue_packets vrss0)
	read -r -a delta < <(vrss_queue_delta "$q1" "$q2")
	echo "# over 1 s: per queue ${delta[*]} packets; heavy buckets on queues $(queues_of "${hb[@]}")"
	ktap_check "... queue 1 took its frames (over 100 a second), on CPU $(vrss_queue_cpu 1)" \
		test "${delta[1]:-0}" -ge 100 -a "$(vrss_queue_cpu 1)" != 0
	ktap_check "ethtool -x still shows the user's table" test "$(table)" = "$user_table"
	flows_stop
	echo "# sent $sent_h heavy + $sent_l light; received $received, reordered $reordered," \
	     "foreign $foreign, counted drops $drops; rebalance_buckets $(vrss_stat vrss0 rebalance_buckets)"
	ktap_check "no flow reordered, received + counted drops = sent" \
		test "${reordered:-1}" = 0 -a "${foreign:-1}" = 0 -a "${sent_l:-0}" -gt 0 -a \
		$((${received:-0} + drops)) = $((${sent_h:-0} + ${sent_l:-0}))
	ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
	ktap_finish
}
if [ "$(nproc)" -lt 4 ]; then
	off_primary
	exit
fi

ktap_plan 15
setup() {
	vrss_load threshold=50 hysteresis=20 && vrss_net_setup numrxqueues 4 &&
		ethtool -K vrss0 rxhash on && ethtool -X vrss0 hkey $VRSS_MS_KEY &&
		sysctl -qw net.core.rmem_max=$((64 << 20)) &&
		[ "$(vrss_sys rebalance)" = 1 ]
}
ktap_check "vrss0 with 4 queues, threshold 50, hysteresis 20, rebalance on by default" setup

refused() {
	! vrss_sys_set rebalance 2 2> /dev/null && [ "$(vrss_sys rebalance)" = 1 ]
}
ktap_check "rebalance 2 refused (EINVAL), the knob unchanged" refused

# The flows: heavy ones on queue 1 by the user's table, light ones elsewhere.
picked=$("$VRSS_DIR/vrss_udp.py" pick $VRSS_PEER_IP $VRSS_IP vrss0 1 3)
echo "$picked" | grep '^#'
read -r heavy light < <(echo "$picked" | grep -v '^#')
read -r -a hb < <(echo "$picked" | awk '/heavy:/ { printf "%s ", $6 }')
read -r -a lb < <(echo "$picked" | awk '/light:/ { printf "%s ", $6 }')
light0=$(echo "$picked" | awk '/light:/ { printf "%s ", $8 }')
light0=${light0% }
ktap_check "3 heavy flows in 3 buckets of queue 1, a light flow on each other queue" \
	test ${#hb[@]} = 3 -a ${#lb[@]} = 3
user_table=$(table)
distinct() {
	[ "$(printf '%s\n' "$@" | sort -u | wc -l)" = $# ]
}

vrss_trace_on vrss_rebalance vrss_width_change vrss_load_sample
r0=$(vrss_stat vrss0 rebalance_events)
rb0=$(vrss_stat vrss0 rebalance_buckets)
q0=$(vrss_queue_packets vrss0)
echo "traffic starts" > $VRSS_TRACING/trace_marker
flows_start

# Spread to 4, then the heavy buckets apart: polled in bash, no forks.
start=${EPOCHREALTIME/./}
split=
fd=
exec {fd}<> <(:)
while [ $(((${EPOCHREALTIME/./} - start) / 1000)) -lt 20000 ]; do
	read -r w < /sys/class/net/vrss0/vrss/width
	read -r -a eff < /sys/class/net/vrss0/vrss/effective_indir
	if [ "$w" = 4 ] && distinct "${eff[hb[0]]}" "${eff[hb[1]]}" "${eff[hb[2]]}"; then
		split=$(((${EPOCHREALTIME/./} - start) / 1000))
		break
	fi
	read -r -t 0.05 -u "$fd" _
done
echo "# width $(vrss_sys width), heavy buckets on queues $(queues_of "${hb[@]}") after ${split:-no split in 20000} ms;" \
     "queue_load [$(vrss_sys queue_load)]"
ktap_check "the heavy buckets ended on 3 different queues" test -n "$split"
# Let the moves complete and the moved flows run where they went.
sleep 2
hq=$(queues_of "${hb[@]}")
q1=$(vrss_queue_packets vrss0)
sleep 1
q2=$(vrss_queue_packets vrss0)
delta=($(vrss_queue_delta "$q1" "$q2"))
cpus=()
for q in $hq; do cpus+=("$(vrss_queue_cpu ${q})"); done
echo "# over 1 s: per queue ${delta[*]} packets; the heavy queues $hq on CPUs ${cpus[*]}"
heavy_there() {
	local q
	for q in $hq; do [ "${delta[q]}" -ge 100 ] || return 1; done
	distinct "${cpus[@]}"
}
ktap_check "... their frames went there, three vCPUs apart" heavy_there
# What moved, when and why: the loads each move was decided on.
grep -E ' (vrss_(rebalance|width_change)|tracing_mark_write): ' $VRSS_TRACING/trace |
	sed -E 's/^.* ([0-9]+\.[0-9]+): /# \1 /'
# The policy's samples while every vCPU is busy (width 4): a sample that
# waits behind the receive work stretches the interval (a nice 0 worker
# falls many intervals behind, and each split with it).
rate=$(awk '/ vrss_load_sample: .* width=4 / {
		t = $0; sub(/: vrss_load_sample:.*/, "", t); sub(/.* /, "", t); t += 0
		if (!n++) first = t; last = t }
	END { if (n > 1 && last > first) printf "%d %.1f %.1f\n", (n - 1) / (last - first), n, last - first }' \
	$VRSS_TRACING/trace)
read -r rate nsamples span <<< "${rate:-0 0 0}"
echo "# $nsamples load samples at width 4 in $span s: $rate a second (interval_ms $(vrss_sys interval_ms))"
ktap_check "the load samples kept their pace while spread (at least 2 a second of 10)" test "$rate" -ge 2
ktap_check "the light flows stayed on their queues ($light0)" \
	test "$(queues_of "${lb[@]}")" = "$light0"
ktap_check "ethtool -x still shows the user's table" test "$(table)" = "$user_table"
read -r -a bp < /sys/class/net/vrss0/vrss/bucket_packets
hp=() lp=()
for b in "${hb[@]}"; do hp+=("${bp[b]}"); done
for b in "${lb[@]}"; do lp+=("${bp[b]}"); done
echo "# bucket_packets over the last interval: heavy ${hp[*]}, light ${lp[*]}"
ktap_check "bucket_packets: each heavy bucket above each light one" \
	test "$(printf '%s\n' "${hp[@]}" | sort -n | head -1)" -gt \
	"$(printf '%s\n' "${lp[@]}" | sort -n | tail -1)"

# Rebalancing off under the same traffic: the user's table in effect again.
vrss_sys_set rebalance 0
back=$(queues_of "${hb[@]}")
sleep 1
ktap_check "rebalance 0: the user's table in effect again (heavy buckets on queues $back)" \
	test "$(vrss_sys effective_indir) " = "$user_table"
sleep 1
flows_stop
events=$(($(vrss_stat vrss0 rebalance_events) - r0))
buckets=$(($(vrss_stat vrss0 rebalance_buckets) - rb0))
traced=$(vrss_trace_lines vrss_rebalance | awk -F 'buckets=' '{ split($2, a, " "); n += a[1] } END { print n + 0 }')
vrss_trace_off
echo "# sent $sent_h heavy + $sent_l light; received $received, reordered $reordered, foreign $foreign, counted drops $drops"
echo "# rebalance_events +$events, rebalance_buckets +$buckets, traced buckets ${traced:-0};" \
     "held for order $(vrss_stat vrss0 rx_held_for_order), bucket moves $(vrss_stat vrss0 bucket_moves)"
ktap_check "rebalances counted (at least 2 buckets) and every one traced" \
	test "$events" -ge 1 -a "$buckets" -ge 2 -a "${traced:-0}" = "$buckets"
ktap_check "no flow reordered" test "${reordered:-1}" = 0 -a "${foreign:-1}" = 0
ktap_check "received + counted drops = sent" \
	test $((${received:-0} + drops)) = $((${sent_h:-0} + ${sent_l:-0}))
ktap_check "no lockdep or KASAN report in the kernel log (a WARN or BUG panics the guest)" vrss_klog_clean
ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
