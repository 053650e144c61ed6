#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: configuration churn under multi-flow TCP and UDP traffic, from
# several processes at once.  Per round, workers repeat, concurrently:
#   rxhash      ethtool -K rxhash on/off
#   channels    ethtool -L rx 1..N
#   table       ethtool -X equal/weight/default/hkey, two writers
#   knobs       sysfs threshold/hysteresis/interval_ms writes and reads,
#               ethtool -N rx-flow-hash sd/sdfn, two writers
#   link        vrss0 down, ethtool -G while down, up; the lower down/up
#   cpu         the last CPU (a queue's CPU) offline and online
#   read        ethtool -S/-x/-l/-g/-k/-n, ip -s link
# then traffic stops and the packet accounting must hold: every frame the
# lower received was delivered by a vrss0 queue or counted as a drop.  A
# shorter phase adds a worker deleting and recreating vrss0 under the
# same load.  At the end the lower is deleted under traffic and the
# module removed.  Each step is bounded (20 s): one that hangs fails the
# round (VRSS_STEP_TIMEOUT: the bound, for slow debug kernels).  Oopses
# and WARNs fail the run (panic_on_warn, tools/vm/run).
#
# VRSS_STRESS_SECONDS (default 36) is the churn time over all rounds,
# VRSS_STRESS_ROUNDS (default 3, at least 1) the number of rounds.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
command -v iperf3 > /dev/null || ktap_skip_all "iperf3 not installed"
[ "$(nproc)" -ge 2 ] || ktap_skip_all "needs at least 2 vCPUs"

ROUNDS=${VRSS_STRESS_ROUNDS:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || ROUNDS=3
churn=$(( ${VRSS_STRESS_SECONDS:-36} / ROUNDS ))
[ "$churn" -ge 2 ] || churn=2
nq=$(nproc)
lastcpu=$((nq - 1))
work=$(mktemp -d)
vrss_klog_mark
taint0=$(vrss_taint_other)

ktap_plan $((1 + ROUNDS * 6 + 4))

# Under traffic, starting a process takes the guest a second: stop_all
# starts one (pkill for the iperf3s) and waits.  The floods and the
# iperf3 loops end at the stop file, the workers after their step.
pids=
stop_all() {
	: > "$work/stop"
	: > "$work/tstop"
	pkill -x iperf3 2> /dev/null
	[ -z "$pids" ] || wait $pids 2> /dev/null
	pids=
}
cleanup() {
	pkill -f "vrss_traffic flood" 2> /dev/null
	stop_all
	echo 1 > /sys/devices/system/cpu/cpu$lastcpu/online 2> /dev/null
	vrss_net_cleanup
	vrss_unload 2> /dev/null
	rm -rf "$work"
}
trap cleanup EXIT

peer() {
	vrss_peer "$@"
}

running() {
	[ ! -e "$work/stop" ]
}

# step CMD...: one configuration step, bounded; its exit status is logged
# per worker, the command too when it hung.
step() {
	local rc t0=$EPOCHREALTIME
	# Stopped: no new step, so that the workers end within one step.
	running || return 0
	timeout -k 2 "${VRSS_STEP_TIMEOUT:-20}" "$@" > /dev/null 2>&1
	rc=$?
	echo "$rc $(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 )) $1 $2 $3" >> "$work/steps.$worker"
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "$worker: $*" >> "$work/hung"
	fi
	# Under TCG starting a process costs more than the step: without a
	# pause the workers would starve the traffic they are meant to meet.
	sleep 0.3
}

pick() {
	shift $((RANDOM % $#))
	echo "$1"
}

w_rxhash() {
	local s=off
	while running; do
		step ethtool -K vrss0 rxhash $s
		[ $s = on ] && s=off || s=on
		sleep 0.$((RANDOM % 4))
	done
}

w_channels() {
	while running; do
		step ethtool -L vrss0 rx $((RANDOM % nq + 1))
		sleep 0.$((RANDOM % 4))
	done
}

w_table() {
	while running; do
		case $((RANDOM % 4)) in
		0) step ethtool -X vrss0 equal $((RANDOM % nq + 1)) ;;
		1) step ethtool -X vrss0 weight 1 $((RANDOM % 3 + 1)) ;;
		2) step ethtool -X vrss0 default ;;
		3) step ethtool -X vrss0 hkey "$(vrss_random_key)" ;;
		esac
	done
}

w_knobs() {
	local d=/sys/class/net/vrss0/vrss
	while running; do
		step sh -c "echo $(pick 0 30 80 100 $((RANDOM % 101))) > $d/threshold"
		step sh -c "echo $((RANDOM % 60)) > $d/hysteresis"
		step sh -c "echo $(pick 10 20 50 100) > $d/interval_ms"
		step cat $d/state $d/width $d/primary_load $d/effective_indir $d/lower
		step ethtool -N vrss0 rx-flow-hash "$(pick tcp4 udp4 tcp6 udp6)" "$(pick sd sdfn)"
	done
}

w_link() {
	while running; do
		step ip link set vrss0 down
		step ethtool -G vrss0 rx "$(pick 64 256 1024 4096)"
		step ip link set vrss0 up
		sleep 0.3
		step ip link set veth0 down
		sleep 0.1
		step ip link set veth0 up
		sleep 0.5
	done
}

w_cpu() {
	local f=/sys/devices/system/cpu/cpu$lastcpu/online
	while running; do
		step sh -c "echo 0 > $f"
		sleep 0.5
		step sh -c "echo 1 > $f"
		sleep 1
	done
}

w_read() {
	while running; do
		step ethtool -S vrss0
		step ethtool -x vrss0
		step ethtool -l vrss0
		step ethtool -g vrss0
		step ethtool -k vrss0
		step ethtool -n vrss0 rx-flow-hash udp4
		step ip -s link show vrss0
	done
}

# vrss0 on veth0 with one queue per CPU, addressed, rxhash on.
mk_vrss0() {
	ip link add link veth0 name vrss0 numrxqueues $nq type vrss &&
		ip link set vrss0 up &&
		ip addr add $VRSS_IP/24 dev vrss0 &&
		ip neigh replace $VRSS_PEER_IP dev vrss0 nud permanent lladdr "$peer_mac" &&
		ethtool -K vrss0 rxhash on
}

w_recreate() {
	while running; do
		step ip link del vrss0
		step bash -c "$(declare -f mk_vrss0); nq=$nq VRSS_IP=$VRSS_IP \
			VRSS_PEER_IP=$VRSS_PEER_IP peer_mac=$peer_mac mk_vrss0"
		sleep 0.5
	done
}

start_workers() {
	rm -f "$work/stop"
	for worker in "$@"; do
		case $worker in
		*2) "w_${worker%2}" & ;;
		*) "w_$worker" & ;;
		esac
		pids+=" $!"
	done
}

# Multi-flow UDP from every CPU of the peer, TCP and UDP from iperf3,
# until stopped.
start_traffic() {
	local c args port=5202
	rm -f "$work/tstop"
	for ((c = 0; c < nq; c++)); do
		peer taskset -c $c "$VRSS_TRAFFIC" flood $VRSS_IP 32 64 \
			$((30000 + 100 * c)) "$work/tstop" > /dev/null 2>&1 &
		pids+=" $!"
	done
	# iperf3 TCP (4 streams, port 5201) and unpaced UDP (8 streams of
	# 64-byte datagrams, port 5202): C senders, fast enough to fill rings.
	for args in "-P 4" "-u -b 0 -l 64 -P 8"; do
		port=$((port == 5201 ? 5202 : 5201))
		bash -c 'while [ ! -e "$1" ]; do timeout 30 iperf3 -s -1 -p $2 > /dev/null 2>&1; done' \
			_ "$work/tstop" $port &
		pids+=" $!"
		peer bash -c 'while [ ! -e "$1" ]; do
				timeout 15 iperf3 -c "$2" -p $3 -t 4 $4 --connect-timeout 1000 \
					> /dev/null 2>&1 || sleep 0.3
			done' _ "$work/tstop" $VRSS_IP $port "$args" &
		pids+=" $!"
	done
	# The senders take seconds to start under TCG (more on a debug
	# kernel): the churn starts once traffic flows.
	local i r0
	r0=$(lower_rx)
	for ((i = 0; i < 300; i++)); do
		[ $(($(lower_rx) - r0)) -lt 100 ] || break
		sleep 0.2
	done
}

# Frames the lower received, and what vrss0 did with its share of them.
lower_rx() {
	vrss_read /sys/class/net/veth0/statistics/rx_packets
}
vrss_acct() {
	ethtool -S vrss0 | awk '
		$1 ~ /^rx_queue_[0-9]+_packets:$/ { d += $2 }
		$1 ~ /^rx_queue_[0-9]+_drops:$/ { r += $2 }
		$1 == "rx_dropped_down:" { n += $2 }
		END { print d, r, n }'
}

# counts: the lower's frames and vrss0's accounting, read at a quiet
# moment (vrss0's totals the same before and after reading the lower's), so
# that no frame is between the two: "LOWER DELIVERED DROPS DOWN".
counts() {
	local i a b l
	for ((i = 0; i < 20; i++)); do
		a=$(vrss_acct)
		l=$(lower_rx)
		b=$(vrss_acct)
		[ "$a" = "$b" ] && break
		sleep 0.2
	done
	echo "$l $b"
}

# A fresh vrss0 with no traffic running: the base of the accounting.
fresh() {
	ip link del vrss0 2> /dev/null
	ip link set veth0 up
	mk_vrss0 || return 1
	sleep 0.5
	read -r base_lower base_del base_drop base_down < <(counts)
}

setup() {
	vrss_load && vrss_net_setup numrxqueues $nq || return 1
	peer_mac=$(vrss_peer_mac veth1)
	fresh
}
# Not through ktap_check: setup's variables must outlive it.
setup > "$work/setup.log" 2>&1
ktap_result "vrss0 on veth0 with $nq queues, rxhash on, $churn s of churn per round" $?
sed 's/^/# /' "$work/setup.log"

all_workers="rxhash channels table table2 knobs knobs2 link read"
[ -e /sys/devices/system/cpu/cpu$lastcpu/online ] && all_workers+=" cpu"
# VRSS_STRESS_WORKERS: a subset, to chase a problem down.
all_workers=${VRSS_STRESS_WORKERS-$all_workers}

# One awk for all workers: under TCG a process per worker costs seconds.
summary() {
	local f=("$work"/steps.*)
	[ -e "${f[0]}" ] || { echo "# steps: none"; return; }
	awk '
	FNR == 1 { w = FILENAME; sub(/.*\/steps\./, "", w); order[++nw] = w }
	{ n[w]++; if ($1 != 0) bad[w]++ }
	$2 + 0 >= max { max = $2 + 0; $1 = $2 = ""; sub(/^ +/, ""); slow = $0 }
	END {
		out = ""
		for (i = 1; i <= nw; i++)
			out = out sprintf(" %s %d (%d refused),", order[i], n[order[i]], bad[order[i]])
		sub(/,$/, "", out)
		print "# steps:" out
		print "# slowest step: " slow ", " max " ms"
	}' "${f[@]}"
	rm -f "${f[@]}"
}

# churn NAME SECONDS WORKER...: the workers for SECONDS under traffic; no
# step may hang.
churn() {
	local name=$1 secs=$2
	shift 2
	rm -f "$work/hung"
	start_traffic
	start_workers "$@"
	sleep "$secs"
	stop_all
	summary
	ktap_result "$name, no step hung" "$([ ! -s "$work/hung" ]; echo $?)"
	[ ! -s "$work/hung" ] || sed 's/^/# hung: /' "$work/hung"
	echo 1 > /sys/devices/system/cpu/cpu$lastcpu/online 2> /dev/null
}

for ((r = 1; r <= ROUNDS; r++)); do
	churn "round $r: $churn s of concurrent configuration under traffic" $churn $all_workers

	# Back to a working state, traffic drained.
	ip link set veth0 up
	ip link set vrss0 up
	sleep 0.3
	read -r lower del drop down < <(counts)
	lower=$((lower - base_lower))
	del=$((del - base_del)) drop=$((drop - base_drop)) down=$((down - base_down))
	echo "# lower received $lower = delivered $del + ring drops $drop + dropped while down $down"
	ktap_result "round $r: traffic reached vrss0" "$([ "$del" -gt 0 ]; echo $?)"
	ktap_result "round $r: lower's frames = delivered + counted drops" \
		"$([ "$lower" = $((del + drop + down)) ]; echo $?)"
	ktap_check "round $r: vrss0 still answers (ethtool -x, sysfs, a ping)" sh -c \
		"ethtool -x vrss0 > /dev/null && cat /sys/class/net/vrss0/vrss/state > /dev/null &&
		 ip netns exec $VRSS_PEER ping -c 2 -i 0.2 -W 2 $VRSS_IP > /dev/null"

	churn "round $r: vrss0 deleted and recreated under traffic and churn" \
		$((churn / 2 + 1)) $all_workers recreate
	# Not through ktap_check: fresh's counts must outlive it.
	fresh > "$work/fresh.log" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$work/fresh.log"
	ktap_result "round $r: vrss0 created again afterwards (up, addressed, rxhash on)" $rc
done

# start_traffic returns once frames flow.
start_traffic
sleep 0.5
ktap_check "delete the lower under traffic: vrss0 goes with it" timeout 10 sh -c \
	'ip link show vrss0 > /dev/null && ip link del veth0 && ! ip link show vrss0 2>/dev/null'
stop_all
vrss_net_cleanup
ktap_check "module refcount 0, rmmod within 20 s" sh -c \
	'[ "$(awk '"'"'$1 == "vrss" { print $3 }'"'"' /proc/modules)" = 0 ] && timeout 20 rmmod vrss'
ktap_check "no lockdep or KASAN report in the kernel log (a WARN or BUG panics the guest)" vrss_klog_clean
ktap_check "no taint beyond out-of-tree and unsigned" \
	test "$(vrss_taint_other)" -eq "$taint0"
ktap_finish
