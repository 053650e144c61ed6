#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrss on the NIC a KVM guest really has: virtio-net, with the traffic
# coming from outside the guest (the host namespace behind the NIC's tap,
# driven through tools/vm/host).  Run under `tools/vm/run --nic QUEUES`
# (make check does, with 1 and 2 queue pairs).  It checks that:
#  - with rxhash off every frame goes up inline, on the vCPU whose virtio
#    interrupt delivered it, with no IPI, queue 0 counting what the NIC
#    received;
#  - with rxhash on and threshold 0 the host's flows land on the queues an
#    independent Toeplitz predicts, and the spread queues run on vCPUs the
#    NIC does not deliver on (when there are such);
#  - a multicast group joined on vrss0 reaches virtio-net's host-side
#    receive filter (nothing for the group passes before the join);
#  - the gate samples the delivering vCPU: a hog there, with traffic
#    arriving, spreads; without the hog, single again;
#  - no flow is reordered while width, table, key, fields, channels and
#    rxhash change under a host sender's traffic;
#  - buckets that leave rings still holding their frames (a firewall on
#    input slows the spread queues) hold their new frames for order;
#  - what the NIC received is what vrss0 delivered or counted as dropped.
# IPv6 is off in the guest and neighbours are static, so the only frames
# on the wire are the ones the test sends.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
[ -n "${VRSS_NIC:-}" ] && [ -n "${VRSS_NIC_QUEUES:-}" ] ||
	ktap_skip_all "no virtio-net NIC from the host: run under tools/vm/run --nic QUEUES"

nic=$VRSS_NIC
nicq=$VRSS_NIC_QUEUES
ncpu=$(nproc)
GUEST=198.51.100.1
HOST=198.51.100.2
tmp=$(mktemp -d)

# VRSS_HELD_CHANGES: which changes the full-ring case makes (rxhash, key,
# fields, down; default all four, each about 10 s under TCG).  make check
# gives each boot of a kernel some of them, every one on every kernel.
held_changes=${VRSS_HELD_CHANGES:-rxhash key fields down}
for what in $held_changes; do
	case $what in
	rxhash|key|fields|down) ;;
	*) echo "# VRSS_HELD_CHANGES: '$what' is none of rxhash, key, fields, down"; exit $KSFT_FAIL ;;
	esac
done
# held_names: the changes in words, for the case's name.
held_names() {
	local what names=()
	for what in $held_changes; do
		case $what in
		rxhash) names+=("rxhash off") ;;
		key) names+=("a new key") ;;
		fields) names+=("new fields") ;;
		down) names+=("rxhash off while down") ;;
		esac
	done
	local IFS=,
	echo "${names[*]}" | sed 's/,/, /g'
}

ktap_plan 18

hog=
pacer=
# IPv6 off for the test (no ND or MLD frames in what it counts), back as
# it was after: a later test in the same boot creates devices.
v6_sysctls="net.ipv6.conf.all.disable_ipv6 net.ipv6.conf.default.disable_ipv6 net.ipv6.conf.$nic.disable_ipv6"
v6_saved=$(for s in $v6_sysctls; do echo "$s=$(sysctl -n "$s")"; done)
cleanup() {
	[ -z "$hog" ] || kill "$hog" 2>/dev/null
	[ -z "$pacer" ] || "$VRSS_REPO/tools/vm/host" kill "$pacer" > /dev/null 2>&1
	[ ! -e "$tmp/firewall" ] || bash "$VRSS_REPO/tools/bench/firewall.sh" 0
	ip link del vrss0 2>/dev/null
	# The address the last case put on the NIC itself (a later test in
	# the same boot may put vrss0 on it).
	ip addr del $GUEST/24 dev $nic 2>/dev/null
	vrss_unload 2>/dev/null
	# shellcheck disable=SC2086 # one NAME=VALUE a word
	sysctl -qw $v6_saved
	rm -rf "$tmp"
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

# On the host, in the namespace behind the NIC.
host() {
	"$VRSS_REPO/tools/vm/host" run "$@"
}
host_udp() {
	host "$VRSS_TRAFFIC" "$@"
}

nic_rx() { vrss_read /sys/class/net/$nic/statistics/rx_packets; }
vrss_rx_all() {
	echo $(($(< /sys/class/net/vrss0/statistics/rx_packets) +
		$(< /sys/class/net/vrss0/statistics/rx_dropped)))
}

# A cpulist (0-2,5) as words (0 1 2 5).
cpus_of() {
	local r out=
	for r in ${1//,/ }; do
		out+="$(seq "${r%-*}" "${r#*-}" | paste -sd' ') "
	done
	echo ${out% }
}

# The NIC's receive interrupts per vCPU, space separated.
vdev=$(basename "$(readlink -f /sys/class/net/$nic/device)")
irqs() {
	awk -v d="^$vdev-input" -v n="$ncpu" '$NF ~ d {
		for (i = 0; i < n; i++) c[i] += $(i + 2)
	} END { for (i = 0; i < n; i++) printf "%d ", c[i] }' /proc/interrupts
}
# irq_cpus BEFORE AFTER: the vCPUs whose count grew, comma separated.
irq_cpus() {
	local -a b=($1) a=($2)
	local i out=
	for i in "${!a[@]}"; do
		[ "${a[i]}" -gt "${b[i]}" ] && out+="$i,"
	done
	echo "${out%,}"
}

setup() {
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		net.ipv6.conf.$nic.disable_ipv6=1 net.core.rmem_max=$((64 << 20)) &&
	vrss_load &&
	ip link set $nic up &&
	ip link add link $nic name vrss0 type vrss &&
	ip link set vrss0 up &&
	ip addr add $GUEST/24 dev vrss0 &&
	ip neigh replace $HOST dev vrss0 nud permanent \
		lladdr "$(host cat /sys/class/net/vrsstap0/address)" &&
	host ping -c 2 -i 0.2 -W 5 $GUEST > /dev/null
}
ktap_check "vrss0 on $nic (virtio-net, $nicq queue pairs), $ncpu vCPUs; the host pings it" setup
lower0=$(nic_rx)
vrss0=$(vrss_rx_all)

# --- rxhash off: inline where the NIC delivered -----------------------------

N=640
inline() {
	local i0 ipis0 q0 n0 cpus cpu
	i0=$(irqs)
	ipis0=$(vrss_stat_sum vrss0 ipis)
	q0=$(vrss_stat vrss0 rx_queue_0_packets)
	n0=$(nic_rx)
	host_udp send $GUEST 64 $((N / 64)) || return 1
	vrss_wait_count /sys/class/net/$nic/statistics/rx_packets $((n0 + N))
	cpus=$(irq_cpus "$i0" "$(irqs)")
	cpu=$(vrss_queue_cpu 0)
	cpus=$(cpus_of "$cpus")
	echo "# host sent $N: $nic received $(($(nic_rx) - n0)), queue 0 counted" \
	     "$(($(vrss_stat vrss0 rx_queue_0_packets) - q0)); interrupts on vCPU(s) $cpus," \
	     "handed up on vCPU $cpu, $(($(vrss_stat_sum vrss0 ipis) - ipis0)) IPIs"
	[ "$(($(vrss_stat vrss0 rx_queue_0_packets) - q0))" = "$(($(nic_rx) - n0))" ] &&
		[ "$(($(nic_rx) - n0))" -ge $N ] &&
		[ "$(vrss_stat_sum vrss0 ipis)" = "$ipis0" ] &&
		grep -qw "$cpu" <<< "$cpus"
}
ktap_check "rxhash off: every frame up inline on the interrupt's vCPU, queue 0 counts them, no IPI" inline

# --- rxhash on, threshold 0: the table, and queues off the primary ----------

ethtool -K vrss0 rxhash on && vrss_sys_set threshold 0
steering() {
	local want before got n0 r
	want=$(vrss_predict $HOST $GUEST 32 10 vrss0) || return 1
	# Full width first; then one round of the flows moves each bucket to
	# its queue (a bucket's frames stay inline on queue 0 until its move
	# may complete in order): the counted round follows.
	vrss_wait_state spread 3000 > /dev/null || { echo "# not spread"; return 1; }
	vrss_wait_count /sys/class/net/vrss0/vrss/width "$ncpu" 3000 ||
		{ echo "# width $(vrss_sys width), not $ncpu"; return 1; }
	r=$(vrss_rx_packets)
	host_udp send $GUEST 32 1 || return 1
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + 32)) ||
		{ echo "# the first round did not arrive"; return 1; }
	before=$(vrss_queue_packets vrss0)
	n0=$(nic_rx)
	r=$(vrss_rx_packets)
	host_udp send $GUEST 32 10 || return 1
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + 320))
	got=$(vrss_queue_delta "$before" "$(vrss_queue_packets vrss0)")
	local -a w=($want) g=($got)
	while [ ${#w[@]} -lt ${#g[@]} ]; do w+=(0); done
	want=${w[*]}
	echo "# per-queue packets: predicted $want, got $got ($nic received $(($(nic_rx) - n0)))"
	[ "$want" = "$got" ]
}
ktap_check "threshold 0: 32 host flows land exactly where ethtool -x predicts" steering
ktap_check "a new key and table (ethtool -X hkey, weight)" sh -c \
	"ethtool -X vrss0 hkey $(for i in $(seq 40); do printf '%02x:' $((i * 7 % 256)); done | sed 's/:$//') \
		weight $(for i in $(seq $ncpu); do printf '%d ' $i; done)"
ktap_check "... the host's flows on the queues the new key and table predict" steering
ethtool -X vrss0 default > /dev/null

# While the host sends, primary_cpus names the vCPUs the interrupts land on,
# and the spread queues run elsewhere when there is an elsewhere.
placement() {
	local id i0 cpus primary ok=0 i cpu
	i0=$(irqs)
	id=$("$VRSS_REPO/tools/vm/host" start "$VRSS_TRAFFIC" pace $GUEST 16 400 0.001 21000)
	sleep 1.2
	primary=$(vrss_sys primary_cpus)
	cpus=$(irq_cpus "$i0" "$(irqs)")
	# Read while it sends: the rest of its 6 s is not needed.
	"$VRSS_REPO/tools/vm/host" kill "$id" > /dev/null
	echo "# interrupts on vCPU(s) $cpus; primary_cpus $primary"
	[ -n "$primary" ] || return 1
	primary=$(cpus_of "$primary")
	[ "$primary" = "$(cpus_of "$cpus")" ] || ok=1
	for ((i = 1; i < ncpu; i++)); do
		cpu=$(vrss_queue_cpu ${i})
		echo "# queue $i on vCPU $cpu"
		if [ "$(wc -w <<< "$primary")" -lt "$ncpu" ] && grep -qw "$cpu" <<< "$primary"; then
			ok=1
		fi
	done
	return $ok
}
ktap_check "primary_cpus = the interrupts' vCPUs; spread queues on other vCPUs where there are some" placement

# --- receive filters: virtio-net's is on the host ---------------------------

# QEMU's virtio-net drops multicast frames for groups not in the table the
# guest's driver gave it: a group joined on vrss0 must reach eth0's list.
GROUP=239.1.2.3
mcast() {
	local n0 before got
	host ip route replace 239.0.0.0/8 dev vrsstap0 || return 1
	n0=$(nic_rx)
	host_udp send $GROUP 1 20 || return 1
	sleep 0.5
	before=$(($(nic_rx) - n0))
	python3 "$VRSS_DIR/vrss_udp.py" mrecv $GROUP $GUEST 20 > "$tmp/mrecv" &
	local receiver=$!
	for _ in $(seq 50); do grep -q ready "$tmp/mrecv" && break; sleep 0.1; done
	host_udp send $GROUP 1 20 || return 1
	wait "$receiver"
	got=$(awk '/^received/ { print $2 }' "$tmp/mrecv")
	echo "# host sent 20 to $GROUP before any join: $nic received $before;" \
	     "joined on vrss0: received $got of 20"
	[ "$before" = 0 ] && [ "$got" = 20 ]
}
ktap_check "a multicast group joined on vrss0 passes $nic's host-side filter, none before" mcast

# --- the gate on the delivering vCPU -----------------------------------------

vrss_sys_set threshold 80
pacer_start() {
	local i
	pacer=$("$VRSS_REPO/tools/vm/host" start "$VRSS_TRAFFIC" pace $GUEST 1 100000 0.005 40000)
	for ((i = 0; i < 100; i++)); do
		primary=$(vrss_sys primary_cpus)
		[ -n "$primary" ] && return 0
		sleep 0.05
	done
	return 1
}
pacer_stop() {
	"$VRSS_REPO/tools/vm/host" kill "$pacer" > /dev/null 2>&1
	pacer=
}
# The light pacer alone leaves the delivering vCPU well under 80 %: the
# gate comes back to single from the steering cases' threshold 0 first.
gate_hog() {
	local t rc cpu
	t=$(vrss_wait_calm 60 8000) || {
		echo "# not single under 60 % ${t} ms into light traffic: state $(vrss_sys state)," \
		     "primary_cpus $(vrss_sys primary_cpus), primary_load $(vrss_sys primary_load)"
		return 1
	}
	local load=$(vrss_sys primary_load)
	primary=$(vrss_sys primary_cpus)
	cpu=$(cpus_of "$primary")
	cpu=${cpu%% *}
	echo "# single, primary_load $load, ${t} ms into light traffic"
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	hog=$!
	t=$(vrss_wait_state spread 3000)
	rc=$?
	echo "# hog on vCPU $cpu (primary_cpus $primary): spread after $t ms," \
	     "primary_load $(vrss_sys primary_load), width $(vrss_sys width)"
	kill "$hog"
	wait "$hog" 2>/dev/null
	hog=
	if [ $rc != 0 ]; then
		echo "# state $(vrss_sys state), primary_cpus $(vrss_sys primary_cpus)," \
		     "interrupts $(irqs)"
		return 1
	fi
	t=$(vrss_wait_state single 5000)
	rc=$?
	echo "# hog stopped, traffic going on: single after $t ms"
	return $rc
}
# The pacer must not outlive the case, whatever its outcome: its datagrams
# would reach the next case's socket.
gate() {
	local rc=1
	if pacer_start; then
		gate_hog
		rc=$?
	else
		echo "# the host's paced traffic never showed up"
	fi
	pacer_stop
	return $rc
}
ktap_check "a hog on the delivering vCPU under host traffic spreads; single once it stops" gate

# --- no reorder under every kind of change -----------------------------------

# 12000 datagrams, 16 at a time every 4 ms: about 3 s of traffic the
# guest takes in full, during which the changes land.  No frame is held
# back for order here: the spread queue's vCPU empties its ring between
# two of the NIC's frames (each frame's kick preempts, also with bursts
# beyond what the guest takes or a real-time hog on that vCPU); held()
# below makes them wait.
FLOWS=16
COUNT=12000
churn() {
	local i
	for ((i = 0; ; i++)); do
		[ -e "$tmp/stop" ] && break
		case $((i % 8)) in
		0) ethtool -X vrss0 equal $((1 + i % ncpu)) ;;
		1) ethtool -X vrss0 hkey "$(vrss_random_key)" ;;
		2) ethtool -N vrss0 rx-flow-hash udp4 sd ;;
		3) ethtool -N vrss0 rx-flow-hash udp4 sdfn ;;
		4) ethtool -X vrss0 default ;;
		5) ethtool -K vrss0 rxhash off ;;
		6) ethtool -K vrss0 rxhash on ;;
		7) [ "$ncpu" -lt 2 ] || ethtool -L vrss0 rx $((1 + i % ncpu)) ;;
		esac > /dev/null 2>&1
		sleep 0.02
	done
	ethtool -K vrss0 rxhash on
	ethtool -L vrss0 rx "$ncpu"
	ethtool -X vrss0 default
	echo "$i" > "$tmp/churned"
}
# reorder [MODE]: the receiver in vrss_traffic seqrecv's MODE (plain).
reorder() {
	local m0 h0 received reordered flips channels
	rm -f "$tmp/stop" "$tmp/recv" "$tmp/flip" "$tmp/churned"
	m0=$(vrss_stat vrss0 bucket_moves)
	h0=$(vrss_stat vrss0 rx_held_for_order)
	"$VRSS_TRAFFIC" seqrecv $GUEST $FLOWS $COUNT "${1:-plain}" > "$tmp/recv" &
	local receiver=$!
	vrss_wait_ready "$tmp/recv"
	"$VRSS_TRAFFIC" flip vrss0 "$ncpu" "$tmp/stop" > "$tmp/flip" &
	local flipper=$!
	vrss_wait_ready "$tmp/flip"
	churn &
	local churner=$!
	host_udp seqsend $GUEST $FLOWS $COUNT 1 0.004
	sleep 0.5
	touch "$tmp/stop"
	wait "$flipper" "$churner"
	wait "$receiver"
	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	read -r _ flips _ channels _ toggles < <(grep '^flips' "$tmp/flip")
	echo "# host sent $COUNT on $FLOWS flows: received $received, reordered $reordered, foreign $foreign;" \
	     "threshold flips $flips, ethtool -L $channels, rxhash switches $toggles, other changes $(cat "$tmp/churned")," \
	     "bucket moves $(($(vrss_stat vrss0 bucket_moves) - m0))," \
	     "held for order $(($(vrss_stat vrss0 rx_held_for_order) - h0))"
	echo $(($(vrss_stat vrss0 bucket_moves) - m0)) > "$tmp/moves"
	[ "${reordered:-1}" = 0 ] && [ "${received:-0}" -gt 0 ] && [ "${foreign:-1}" = 0 ]
}
ktap_check "no flow reordered while width, table, key, fields, channels and rxhash change" reorder
ktap_check "... and buckets did move during it" test "$(cat "$tmp/moves" 2>/dev/null || echo 0)" -gt 0

# Moves while rings hold frames.  Above, the spread queues' vCPUs keep up
# with the NIC and few frames wait.  Here every frame walks a firewall of
# 2000 rules on input (tools/bench/firewall.sh), so a spread queue's vCPU
# falls behind the host's bursts and its ring fills (and overflows: those
# frames are dropped and counted, as the accounting case checks), while
# the width flips (threshold 0 and 100 in turn every 2 ms, from bash) and
# the whole table goes to queue 0 and back (ethtool -X weight, as fast as
# it runs, each moving every bucket).  A bucket that leaves a ring still
# holding its frames must hold its new frames back until they are gone
# (rx_held_for_order), and none may overtake.  The width and the table
# change here; rxhash, key and field changes have their own case below
# (held_rehash).  Threshold flips alone move little (the load work seldom
# runs on vCPUs this busy in softirq), hence both.  A bucket leaving its
# ring undrained (make mutants) reorders frames here.
# held_run: one run of it; 0 if nothing was reordered and something moved,
# with the frames held for order in $run_held.
held_run() {
	local h0 m0 received reordered foreign flips held moves q to0= tospread=
	for ((q = 0; q < ncpu; q++)); do
		to0+="$((q == 0)) "
		tospread+="$((q != 0)) "
	done
	rm -f "$tmp/stop" "$tmp/recv" "$tmp/flip" "$tmp/never"
	h0=$(vrss_stat vrss0 rx_held_for_order)
	m0=$(vrss_stat vrss0 bucket_moves)
	"$VRSS_TRAFFIC" seqrecv $GUEST 4 6000 > "$tmp/recv" &
	local receiver=$!
	vrss_wait_ready "$tmp/recv"
	mkfifo "$tmp/never" || return 1
	(
		exec 3> /sys/class/net/vrss0/vrss/threshold 4<> "$tmp/never" || exit 1
		n=0
		while [ ! -e "$tmp/stop" ]; do
			echo $((n++ % 2 ? 100 : 0)) >&3 || exit 1
			# 2 ms, without a process: flips paced to the
			# policy's samples come too seldom under this
			# load to move many buckets.
			read -r -t 0.002 -u 4
		done
		echo 80 >&3 || exit 1
		echo "flips $n" > "$tmp/flip"
	) &
	local flipper=$!
	# And the table, all of it to queue 0 and back: moves made under
	# RTNL, which do not wait for the load work (on vCPUs this busy in
	# softirq it runs seldom: a run of threshold flips moved nothing).
	(
		i=0
		while [ ! -e "$tmp/stop" ]; do
			# shellcheck disable=SC2086 # a weight a word
			if ((i++ % 2)); then
				ethtool -X vrss0 weight $to0
			else
				ethtool -X vrss0 weight $tospread
			fi > /dev/null
		done
		ethtool -X vrss0 default
	) &
	local tabler=$!
	host_udp seqsend $GUEST 4 6000 16 0.004
	touch "$tmp/stop"
	local flip_rc=0
	wait "$flipper" || flip_rc=$?
	wait "$tabler"
	wait "$receiver"
	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	read -r _ flips _ < <(grep '^flips' "$tmp/flip")
	held=$(($(vrss_stat vrss0 rx_held_for_order) - h0))
	moves=$(($(vrss_stat vrss0 bucket_moves) - m0))
	run_held=$held
	echo "# host sent 6000 on 4 flows in bursts of 16: received $received, reordered $reordered," \
	     "foreign $foreign; threshold flips $flips (flipper exit $flip_rc), bucket moves $moves," \
	     "held for order $held"
	[ "$flip_rc" = 0 ] && [ "${flips:-0}" -gt 0 ] && [ "$moves" -gt 0 ] &&
		[ "${reordered:-1}" = 0 ] && [ "${received:-0}" -gt 0 ] && [ "${foreign:-1}" = 0 ]
}
# Frames must have waited where a vCPU does not deliver (its queue is the
# one that falls behind); with as many queue pairs as vCPUs each vCPU's
# own NIC queue paces what it takes, and its ring may never hold a
# leaving bucket's frames: there only the order is checked.  A second run
# where the first held none: a run's moves can all land while the rings
# are empty; every run must keep the order.
firewall() {
	command -v nft > /dev/null || { echo "# no nft (Debian: nftables)"; return 4; }
	modprobe -q nf_tables || { echo "# no nf_tables in this kernel"; return 4; }
	: > "$tmp/firewall"
	bash "$VRSS_REPO/tools/bench/firewall.sh" "$1"
}
held() {
	local rc=0 run run_held=
	firewall 2000 || return
	for run in 1 2; do
		held_run || rc=1
		[ "$rc" = 0 ] && [ "$run_held" = 0 ] && [ "$nicq" -lt "$ncpu" ] || break
	done
	[ "$rc" = 0 ] && { [ "${run_held:-0}" -gt 0 ] || [ "$nicq" -ge "$ncpu" ]; }
}
# rxhash off, a new key, new hashed fields, each while a ring is full:
# every bucket on spread queue 1 (threshold 0, ethtool -X weight), the
# firewall behind it, so that its ring (of 128 but for down: under TCG
# each frame walks the 20000 rules for tens of milliseconds, and the
# change waits for the ring to drain) holds seconds of frames when the
# change lands.  Hashing stops (or the new key or fields
# apply) only once every bucket is home, however long the ring takes to
# hand up what it holds; meanwhile the flows' frames park
# (rx_held_for_order), and the drain ends by itself (state off, or, for
# the key and the fields, spread again: the load work restarts at the
# end, threshold 0).  A bounded wait, after which the buckets go home
# anyway, would reorder frames at every change.  And vrss0 down with
# the ring full, rxhash off while down, then up (down): the rings keep
# their frames while the device is down, so hashing must still be on
# (state single) until they went up after the open, and off after (a
# drain that ended while they waited would let the flows' next frames
# overtake them; one that did not go on after the open would leave
# hashing on).
held_change() {
	local what=$1 h0 d0 received reordered foreign held state q w= want=spread rc
	for ((q = 0; q < ncpu; q++)); do
		w+="$((q == 1)) "
	done
	rm -f "$tmp/recv" "$tmp/never"
	mkfifo "$tmp/never" || return 1
	# shellcheck disable=SC2086 # a weight a word
	ethtool -X vrss0 weight $w && echo 0 > /sys/class/net/vrss0/vrss/threshold &&
		ethtool -K vrss0 rxhash on || return 1
	h0=$(vrss_stat vrss0 rx_held_for_order)
	d0=$(vrss_stat_sum vrss0 drops)
	"$VRSS_TRAFFIC" seqrecv $GUEST 4 1000000 > "$tmp/recv" &
	local receiver=$! t0
	vrss_wait_ready "$tmp/recv"
	t0=$(($(date +%s%N) / 1000000))
	pacer=$("$VRSS_REPO/tools/vm/host" start "$VRSS_TRAFFIC" seqsend $GUEST 4 1000000 4 0.004)
	# The change once the ring overflowed (vrss0's rx_dropped grew: it
	# is full), at most 20 s in.  Real-time: both vCPUs are busy in
	# softirq, and the change would otherwise wait seconds for a turn.
	# The traffic goes on for a second after it (the receiver stops when
	# it has been quiet for 2).
	case $what in
	rxhash|down) set -- -K vrss0 rxhash off; want=off ;;
	key) set -- -X vrss0 hkey "$OTHER_KEY" ;;
	fields) set -- -N vrss0 rx-flow-hash udp4 sd ;;
	esac
	what=$what chrt -f 10 bash -c '
		exec 4<> "$1"
		shift
		f=/sys/class/net/vrss0/statistics/rx_dropped
		read -r d0 < $f
		for ((i = 0; i < 1000; i++)); do
			read -r d < $f
			((d > d0)) && break
			read -r -t 0.02 -u 4
		done
		((d > d0)) || { echo "# the ring never overflowed"; exit 1; }
		t=$(($(date +%s%N) / 1000000 - $0))
		[ "$what" != down ] || ip link set vrss0 down || exit 1
		ethtool "$@" || exit 1
		echo "# ring full after $t ms, changed after $(($(date +%s%N) / 1000000 - $0)) ms"
		if [ "$what" = down ]; then
			read -r st < /sys/class/net/vrss0/vrss/state
			echo "# state $st while down, the ring full"
			ip link set vrss0 up && [ "$st" = single ] || exit 1
		fi
	' "$t0" "$tmp/never" "$@"
	rc=$?
	if [ "$rc" != 0 ]; then
		pacer_stop
		kill "$receiver" 2> /dev/null
		wait "$receiver"
		held_restore
		return $rc
	fi
	sleep 1
	pacer_stop
	wait "$receiver"
	state=$(vrss_sys state)
	read -r _ received _ reordered _ foreign < <(grep '^received' "$tmp/recv")
	held=$(($(vrss_stat vrss0 rx_held_for_order) - h0))
	echo "# $what changed with queue 1's ring full: received $received, reordered" \
	     "$reordered, foreign $foreign, held for order $held, ring drops" \
	     "$(($(vrss_stat_sum vrss0 drops) - d0)); state $state after"
	held_restore || return 1
	[ "${reordered:-1}" = 0 ] && [ "${received:-0}" -gt 0 ] && [ "${foreign:-1}" = 0 ] &&
		[ "$held" -gt 0 ] && [ "$state" = "$want" ]
}
# vrss0 up, hashing on with the default key, fields, table and threshold.
held_restore() {
	ip link set vrss0 up && ethtool -K vrss0 rxhash on && ethtool -X vrss0 hkey "$VRSS_MS_KEY" &&
		ethtool -N vrss0 rx-flow-hash udp4 sdfn && ethtool -X vrss0 default &&
		echo 80 > /sys/class/net/vrss0/vrss/threshold
}
# ring_size N: vrss0's rings N long (set while down).
ring_size() {
	[ "$(ethtool -g vrss0 | awk '/^Current/ { c = 1 } c && /^RX:/ { print $2; exit }')" = "$1" ] ||
		{ ip link set vrss0 down && ethtool -G vrss0 rx "$1" && ip link set vrss0 up; }
}
held_rehash() {
	local rc=0 what
	firewall 20000 || return
	for what in $held_changes; do
		# down keeps the ring's frames while down: a ring of 128 may
		# have drained by the time the device is (the stop waits for
		# a poll of 64 frames).
		if [ "$what" = down ]; then
			ring_size 1024 || rc=1
		else
			ring_size 128 || rc=1
		fi
		held_change $what || rc=1
	done
	ring_size 1024 || rc=1
	bash "$VRSS_REPO/tools/bench/firewall.sh" 0 && rm "$tmp/firewall"
	return $rc
}
if [ "$ncpu" -ge 2 ]; then
	ktap_check "frames held for order while buckets leave full rings (a firewall on input), none reordered" held
	OTHER_KEY=$(tr ':' '\n' <<< "$VRSS_MS_KEY" | tac | paste -sd:)
	ktap_check "$(held_names), each with a ring full: frames held, none reordered" held_rehash
else
	ktap_result "frames held for order while buckets leave full rings (needs 2 vCPUs)" 4
	ktap_result "rxhash off, a new key, new fields, rxhash off while down, each with a ring full (needs 2 vCPUs)" 4
fi

# --- accounting ---------------------------------------------------------------

sleep 0.5
lower=$(($(nic_rx) - lower0))
got=$(($(vrss_rx_all) - vrss0))
echo "# $nic received $lower since vrss0 came up; vrss0 delivered + dropped $got"
ktap_check "what the NIC received = what vrss0 delivered or counted as dropped" test "$lower" = "$got"

# The reorder check again with the receive modes that keep frames out of
# the stack after a poll: GRO holding them (gro_flush_timeout on vrss0,
# UDP GRO sockets) and busy polling (sockets connected to the host's
# flows, SO_BUSY_POLL).  After the accounting: with a UDP GRO socket the
# NIC's GRO merges datagrams, which it counts one by one and vrss0 as
# one skb.
held_modes() {
	local rc
	echo 10000000 > /sys/class/net/vrss0/gro_flush_timeout &&
		sysctl -qw net.core.busy_poll=50 || return 1
	reorder "busy=$HOST"
	rc=$?
	echo 0 > /sys/class/net/vrss0/gro_flush_timeout
	sysctl -qw net.core.busy_poll=0
	return $rc
}
ktap_check "no flow reordered under the same changes with gro_flush_timeout 10 ms and busy-polling UDP GRO sockets" held_modes

ktap_check "ip link del vrss0 under no traffic" ip link del vrss0
ktap_check "rmmod vrss" vrss_unload
ktap_check "$nic still works without vrss: the host pings it" sh -c \
	"ip addr add $GUEST/24 dev $nic && '$VRSS_REPO/tools/vm/host' run ping -c 2 -i 0.2 -W 5 $GUEST > /dev/null"
ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
