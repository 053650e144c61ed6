#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The load gate with real load: rxhash on, threshold 80.  The gate samples
# the CPU the lower delivers on: veth delivers on the sender's CPU, so the
# senders run on CPU 0, the primary CPU.  Light traffic stays on the
# primary queue; a CPU hog pinned to CPU 0 while paced traffic keeps
# arriving there makes vrss spread within a few intervals, and the flows
# then land on the queues the table in effect names, queue 1 on another
# CPU; once the hog stops, vrss returns to a single queue.  threshold 100
# never spreads, even under the hog; threshold 0 always does.  Without
# traffic no CPU is primary: a hog alone does not spread.
#
# The test itself runs pinned to the last CPU, and so do the guest's
# device interrupts (the rig's 9p file system: reading Python from it
# would load CPU 0), so that CPU 0 carries only the traffic and the hog.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
command -v taskset > /dev/null || ktap_skip_all "taskset not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"
nq=$(nproc)
last=$((nq - 1))
taskset -pc $last $$ > /dev/null
for irq in /proc/irq/[0-9]*; do
	echo $last > "$irq/smp_affinity_list" 2> /dev/null || true
done

ktap_plan 24

hog=
hog2=
pacer=
cleanup() {
	[ -z "$hog" ] || kill "$hog" 2>/dev/null
	[ -z "$hog2" ] || kill "$hog2" 2>/dev/null
	[ -z "$pacer" ] || kill "$pacer" 2>/dev/null
	vrss_trace_off
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)


setup() {
	vrss_load && vrss_net_setup numrxqueues "$nq" && ethtool -K vrss0 rxhash on &&
		ethtool -X vrss0 hkey $VRSS_MS_KEY
}
ktap_check "vrss0 with $nq queues, rxhash on, threshold 80 (default)" setup
interval=$(vrss_sys interval_ms)
ival=$(awk -v i="$interval" 'BEGIN { print i / 1000 }')
cpu0=$VRSS_SEND_CPU
echo "# senders (the primary CPU) on CPU $cpu0, test pinned to CPU $last, interval ${interval} ms"

# 64 flows, one datagram every 2 ms: light.
light() {
	local b s0
	s0=$(vrss_stat vrss0 spread_events)
	b=$(vrss_queue_packets vrss0)
	taskset -c "$cpu0" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" pace $VRSS_IP 64 4 0.002
	sleep 0.3
	got=$(vrss_queue_delta "$b" "$(vrss_queue_packets vrss0)")
	echo "per-queue packets $got, primary_load $(vrss_sys primary_load)," \
	     "spread events $(($(vrss_stat vrss0 spread_events) - s0))"
	[ "$(vrss_stat vrss0 spread_events)" = "$s0" ] && [ "$(vrss_sys state)" = single ] &&
		[ "$got" = "256$(for ((i = 1; i < nq; i++)); do printf ' 0'; done)" ]
}
ktap_check "light traffic: state stays single, every packet on queue 0" light

# The hog, and paced traffic delivered on its CPU (one datagram per
# 10 ms, on other ports than the checks' flows) until pacer_stop.
rx_packets() { vrss_read /sys/class/net/vrss0/statistics/rx_packets; }
pacer_start() {
	local i p0
	p0=$(rx_packets)
	taskset -c "$cpu0" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" \
		pace $VRSS_IP 1 100000 0.01 40000 &
	pacer=$!
	# On once its datagrams arrive.
	for ((i = 0; i < 400; i++)); do
		[ "$(rx_packets)" -ge $((p0 + 3)) ] && return 0
		sleep 0.05
	done
	echo "# the pacer's datagrams never arrived"
	return 1
}
hog_start() {
	taskset -c "$cpu0" sh -c 'while :; do :; done' &
	hog=$!
}
hog_stop() {
	kill "$hog"
	wait "$hog" 2>/dev/null
	hog=
}
pacer_stop() {
	kill "$pacer"
	wait "$pacer" 2>/dev/null
	pacer=
}

# reaction up|down: from the trace, the load samples from the first one on
# the far side of the threshold to the one that changed the width, counted
# both inclusive (the policy's reaction in intervals, timer-independent).
reaction() {
	awk -v dir="$1" -v thr=80 '
	/ vrss_load_sample: / {
		match($0, /width=[0-9]+/); w = substr($0, RSTART + 6, RLENGTH - 6) + 0
		match($0, /primary_busy=[0-9]+/); b = substr($0, RSTART + 13, RLENGTH - 13) + 0
		if (!n && (dir == "up" ? b >= thr : b < thr)) n = 0.5
		if (n) n = int(n) + 1
		if (n && (dir == "up" ? w >= 2 : w == 1)) { print n; exit }
	}' $VRSS_TRACING/trace
}

pacer_start
vrss_trace_on vrss_width_change vrss_load_sample
hog_start
t=$(vrss_wait_state spread 3000)
rc=$?
n=$(reaction up)
echo "# hog on CPU $cpu0: spread after $t ms, $n samples from the first at >= 80 % busy;" \
     "width $(vrss_sys width), primary_load $(vrss_sys primary_load)"
ktap_result "CPU hog on the primary CPU: spread within 3000 ms" $rc
primary=$(vrss_sys primary_cpus)
# An interval in which the lower delivered nothing names no CPU (-1): the
# pacer's one datagram per 10 ms can miss a whole interval when its vCPU's
# host thread stalls.  Every sample that names one must name CPU 0.
cpus=$(vrss_trace_lines vrss_load_sample | sed -n 's/.* primary_cpu=\([0-9]*\) .*/\1/p' | sort -u | paste -sd,)
echo "# primary_cpus $primary; the samples' busiest primary CPU: $cpus"
ktap_check "the gate sampled the CPU the lower delivered on: primary_cpus $cpu0" \
	test "$primary" = "$cpu0" -a "$cpus" = "$cpu0"
# The policy spreads at the 2nd sample above (tests/unit/test_policy.c);
# one more when a TCG vCPU thread stalls on the host mid-interval.
ktap_check "... at the 2nd interval above the threshold (3rd: TCG slack)" test "${n:-9}" -le 3
[ "$n" = 2 ] || vrss_trace_lines vrss_load_sample | sed 's/^/# /' | head -8
traced=$(vrss_trace_lines vrss_width_change | paste -sd' ')
echo "# traced: $traced"
echo > $VRSS_TRACING/trace

# The flood may make the policy widen further (the CPUs in use above the
# threshold): sampling is held off (interval_ms 10000) for the exact check,
# and the pacer with it, whose datagrams the counts would include.
spread_traffic() {
	local b d others=0 i
	vrss_sys_set interval_ms 10000
	pacer_stop
	b=$(vrss_queue_packets vrss0)
	vrss_check_steering "under the hog, 32 flows land exactly where the table in effect says" \
		$VRSS_PEER_IP $VRSS_IP --effective
	pacer_start
	vrss_sys_set interval_ms "$interval"
	d=($(vrss_queue_delta "$b" "$(vrss_queue_packets vrss0)"))
	for ((i = 1; i < nq; i++)); do
		others=$((others + d[i]))
	done
	echo "# packets on queues other than 0: $others (queue 1 on CPU $(vrss_queue_cpu 1))"
	ktap_check "... and queue 1, on another CPU, got some" \
		test "$others" -gt 0 -a "$(vrss_queue_cpu 1)" != "$cpu0"
}
spread_traffic

hog_stop
echo > $VRSS_TRACING/trace
t=$(vrss_wait_state single 5000)
rc=$?
n=$(reaction down)
echo "# hog stopped: single after $t ms, $n samples from the first below 80 % busy;" \
     "primary_load $(vrss_sys primary_load)"
ktap_result "hog stopped: back to single within 5000 ms" $rc
pacer_stop
# The smoothed load halves each interval, then 3 intervals below
# threshold - hysteresis (include/vrss/policy.h).
ktap_check "... within 6 intervals of the load dropping" test "${n:-99}" -le 6
traced+=" / "$(vrss_trace_lines vrss_width_change | paste -sd' ')
echo "# traced: $traced"
ktap_check "vrss:vrss_width_change traced 1->2, then back to 1" \
	grep -Eq "^dev=vrss0 width=1->2 .* / (.* )?dev=vrss0 width=[2-9]->1 " <<< "$traced"
vrss_trace_off
ktap_check "light traffic again: every packet on queue 0" light

# Hysteresis: spread by the hog at threshold 50, then light traffic only
# (primary_load 20-30 here): with hysteresis 49 the CPUs would have to be
# below 1 % to shrink, so the width holds; back at 80 and 20, single.
hysteresis_holds() {
	local c0 t load state
	vrss_sys_set threshold 50 && vrss_sys_set hysteresis 49 || return 1
	c0=$(vrss_stat vrss0 contract_events)
	pacer_start || return 1
	hog_start
	t=$(vrss_wait_state spread 5000)
	hog_stop
	sleep "$(awk -v i="$interval" 'BEGIN { print 15 * i / 1000 }')"
	load=$(vrss_sys primary_load)
	state=$(vrss_sys state)
	vrss_sys_set threshold 80 && vrss_sys_set hysteresis 20
	t=$(vrss_wait_state single 5000)
	pacer_stop
	echo "hysteresis 49: $state, primary_load $load, 15 intervals after the hog; 80 and 20: $(vrss_sys state) after $t ms"
	[ "$state" = spread ] && [ "$load" -ge 2 ] && [ "$(vrss_sys state)" = single ] &&
		[ "$(vrss_stat vrss0 contract_events)" = $((c0 + 1)) ]
}
ktap_check "threshold 50, hysteresis 49: light load keeps the spread; 80 and 20: single" hysteresis_holds
vrss_sys_set threshold 80
vrss_sys_set hysteresis 20

never() {
	local s0 load state
	vrss_sys_set threshold 100 || return 1
	s0=$(vrss_stat vrss0 spread_events)
	pacer_start || return 1
	hog_start
	sleep "$(awk -v i="$interval" 'BEGIN { print 10 * i / 1000 }')"
	load=$(vrss_sys primary_load)
	state=$(vrss_sys state)
	hog_stop
	pacer_stop
	echo "primary_load $load after 10 intervals, state $state"
	[ "$load" -ge 80 ] && [ "$state" = single ] && [ "$(vrss_stat vrss0 spread_events)" = "$s0" ]
}
ktap_check "threshold 100: the hog (primary_load >= 80) never spreads" never

# primary_load against the primary CPU's busy time as the kernel accounts
# it (/proc/stat's idle and iowait against /proc/uptime's wall clock),
# under a known partial load: a hog busy 20 %, then 70 %, of its time on
# CPU 0 (vrss_traffic duty), the pacer's traffic delivered there too;
# threshold 100, so that nothing spreads meanwhile.  The load is smoothed
# (it halves each interval): after 8 intervals at the duty, the mean of
# 10 reads an interval apart against /proc/stat over the same window.
# cpu_idle CPU: its idle+iowait and the wall clock, in 1/100 s; both
# files read by one process, back to back.
cpu_idle() {
	awk -v c="cpu$1" 'NR == FNR { up = $1; next }
		$1 == c { printf "%d %d\n", $5 + $6, up * 100 }' /proc/uptime /proc/stat
}
# load_vs_busy DUTY: sets load (the mean) and busy.
load_vs_busy() {
	local i0 w0 i1 w1 i sum=0
	vrss_sys_set threshold 100 || return 1
	taskset -c "$cpu0" "$VRSS_TRAFFIC" duty "$1" 30 &
	hog=$!
	sleep "$(awk -v i="$interval" 'BEGIN { print 8 * i / 1000 }')"
	read -r i0 w0 < <(cpu_idle "$cpu0")
	for ((i = 0; i < 10; i++)); do
		sleep "$ival"
		sum=$((sum + $(vrss_sys primary_load)))
	done
	read -r i1 w1 < <(cpu_idle "$cpu0")
	hog_stop
	load=$((sum / 10))
	busy=$((100 - 100 * (i1 - i0) / (w1 - w0)))
	echo "# hog busy $1 % of the time: primary_load $load (mean of 10), CPU $cpu0 busy $busy % (/proc/stat), state $(vrss_sys state)"
}
near() {
	[ "$load" -ge $((busy - 10)) ] && [ "$load" -le $((busy + 10)) ]
}
pacer_start
load_vs_busy 20
ktap_result "primary_load within 10 points of CPU $cpu0's busy time (/proc/stat), hog at 20 %" \
	"$(near; echo $?)"
load20=$load
load_vs_busy 70
ktap_result "... and at 70 %" "$(near; echo $?)"
ktap_check "... 70 % reads at least 30 points above 20 %" test "$load" -ge $((load20 + 30))
pacer_stop
vrss_sys_set threshold 80

# Progressive width: as few queues as keep the CPUs in use below the
# threshold.  The hog on CPU 0 alone: width 2, whose two CPUs average
# about 50 %, held for 20 intervals without a change; a second hog on the
# CPU of queue 1: width 3, held too; both stopped: single.
# wait_width W MS: until the width is W, for at most MS (polled without
# a fork, as vrss_wait_count does).
wait_width() {
	local w fd rc=1 start=${EPOCHREALTIME/[.,]/}
	exec {fd}<> <(:)
	while [ $((${EPOCHREALTIME/[.,]/} - start)) -lt $(($2 * 1000)) ]; do
		read -r w < /sys/class/net/vrss0/vrss/width
		[ "$w" = "$1" ] && { rc=0; break; }
		read -r -t 0.02 -u "$fd" _
	done
	exec {fd}>&-
	return $rc
}
# In the main shell (its hogs and pacer are cleanup's to kill on a
# timeout), printing comments.
# hold_width W: W at each of 20 reads an interval apart, no width change
# traced meanwhile.
hold_width() {
	local i w bad=0 changes
	echo > $VRSS_TRACING/trace
	for ((i = 0; i < 20; i++)); do
		sleep "$ival"
		w=$(vrss_sys width)
		[ "$w" = "$1" ] || bad=1
	done
	changes=$(vrss_trace_lines vrss_width_change | wc -l)
	echo "# width $1 for 20 intervals: last read $w, queue loads $(vrss_sys queue_load)," \
	     "width changes traced: $changes"
	[ $bad = 0 ] && [ "$changes" = 0 ]
}
progressive() {
	local q1 rc=0
	pacer_start || { pacer_stop; return 1; }
	vrss_trace_on vrss_width_change
	hog_start
	wait_width 2 3000 || { echo "# one hog: width $(vrss_sys width), not 2"; rc=1; }
	# Not past 2 on the way either.
	if vrss_trace_lines vrss_width_change | grep -q -- '->[3-9]'; then
		echo "# one hog: the width went past 2: $(vrss_trace_lines vrss_width_change | paste -sd' ')"
		rc=1
	fi
	hold_width 2 || rc=1
	q1=$(vrss_queue_cpu 1)
	taskset -c "$q1" sh -c 'while :; do :; done' &
	hog2=$!
	wait_width 3 3000 || { echo "# two hogs: width $(vrss_sys width), not 3"; rc=1; }
	hold_width 3 || rc=1
	echo "# queue 1 on CPU $q1; queue 2 on CPU $(vrss_queue_cpu 2)"
	kill "$hog2"
	wait "$hog2" 2>/dev/null
	hog2=
	hog_stop
	vrss_wait_state single 5000 > /dev/null || { echo "# hogs stopped: $(vrss_sys state)"; rc=1; }
	pacer_stop
	vrss_trace_off
	return $rc
}
if [ "$nq" -ge 4 ]; then
	progressive
	ktap_result "progressive width: one hogged CPU -> 2 queues, two -> 3, each held 20 intervals; then single" $?
else
	ktap_result "progressive width (needs 4 vCPUs)" 4
fi

# A hog with no traffic: no CPU delivered, nothing is primary, load 0.
idle_hog() {
	local s0 load cpus
	vrss_sys_set threshold 80 || return 1
	s0=$(vrss_stat vrss0 spread_events)
	taskset -c "$cpu0" sh -c 'while :; do :; done' &
	hog=$!
	sleep "$(awk -v i="$interval" 'BEGIN { print 10 * i / 1000 }')"
	load=$(vrss_sys primary_load)
	cpus=$(vrss_sys primary_cpus)
	hog_stop
	echo "hog without traffic: primary_load $load, primary_cpus '$cpus', state $(vrss_sys state)"
	[ "$load" = 0 ] && [ -z "$cpus" ] && [ "$(vrss_sys state)" = single ] &&
		[ "$(vrss_stat vrss0 spread_events)" = "$s0" ]
}
ktap_check "a hog without traffic: nothing primary, no spread" idle_hog

# No frame at width 1: the load work sleeps (a quiet guest with rxhash
# on is not woken every interval), and the next frame wakes it.  A stray
# frame (the peer's IPv6) costs two samples; a work that never sleeps
# takes 10.
asleep() {
	local quiet woke lines
	sleep "$(awk -v i="$interval" 'BEGIN { print 3 * i / 1000 }')"
	vrss_trace_on vrss_load_sample || return 1
	sleep "$(awk -v i="$interval" 'BEGIN { print 10 * i / 1000 }')"
	lines=$(vrss_trace_lines vrss_load_sample | head -n 3)
	quiet=$(vrss_trace_count vrss_load_sample)
	taskset -c "$cpu0" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" pace $VRSS_IP 1 60 0.01
	woke=$(vrss_trace_count vrss_load_sample)
	vrss_trace_off
	echo "load samples: $quiet in 10 intervals without traffic, $woke in 6 with a datagram every 10 ms"
	[ "$quiet" -le 2 ] || { echo "the first: $lines"; return 1; }
	[ "$woke" -ge 3 ]
}
ktap_check "no traffic: the load work sleeps; a frame wakes it" asleep

# While frames come at width 1, they pace the load work: the first frame
# an interval after the last sample queues the next on the CPU it came on
# (awake anyway).  No timer wakes another vCPU every interval, which
# would add a wakeup's instructions to every sample.  The trace's CPU
# column says where each sample ran.
paced() {
	local n on
	vrss_trace_on vrss_load_sample || return 1
	taskset -c "$cpu0" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" pace $VRSS_IP 1 100 0.01
	on=$(sed -n 's/^[^[]*\[0*\([0-9][0-9]*\)\] .* vrss_load_sample: .*/\1/p' \
		$VRSS_TRACING/trace | sort | uniq -c |
		awk '{ printf "%s%d on CPU %d", s, $1, $2; s = ", " }')
	n=$(vrss_trace_count vrss_load_sample)
	vrss_trace_off
	echo "load samples at width 1, a datagram every 10 ms from CPU $cpu0: $n: ${on:-none}; state $(vrss_sys state)"
	[ "$n" -ge 4 ] && [ "$on" = "$n on CPU $cpu0" ]
}
ktap_check "width 1: the frames pace the load work, on their CPU" paced

always() {
	vrss_sys_set threshold 0 &&
		[ "$(vrss_sys state) $(vrss_sys width)" = "spread $nq" ]
}
ktap_check "threshold 0: spread over all $nq queues at once, idle" always
vrss_check_steering "threshold 0: 32 flows exactly where ethtool -x says" \
	$VRSS_PEER_IP $VRSS_IP
vrss_sys_set threshold 80

ktap_check "rx_held_for_order and bucket_moves in ethtool -S" sh -c \
	'ethtool -S vrss0 | grep -q rx_held_for_order && ethtool -S vrss0 | grep -q bucket_moves'
ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
