#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Spread queues keep off isolated vCPUs (isolcpus=, nohz_full=), as RPS's
# CPU masks do: a vCPU isolated for a latency-critical task must not get
# vrss's receive work and its IPIs.  Run in a guest with at least three
# vCPUs, one of them isolated: `tools/vm/run --cpus 3 --append isolcpus=2
# --append nohz_full=2` (make check does).  vrss0 on veth0 with a queue
# per vCPU, rxhash on, threshold 0: spread to every queue.  It checks
# that no spread queue is placed on an isolated vCPU, that every queue
# took frames (they share the others), and that the isolated vCPU got
# next to none of vrss's IPIs.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
# cpulist (0-2,5) -> one CPU a line.
cpulist() {
	local r a b
	IFS=, read -r -a r <<< "$1"
	for a in "${r[@]}"; do
		[[ $a =~ ^[0-9]+(-[0-9]+)?$ ]] || continue
		b=${a#*-}
		a=${a%-*}
		seq "$a" "$b"
	done
}
isolated=$( { cpulist "$(cat /sys/devices/system/cpu/isolated 2> /dev/null)"
	      cpulist "$(cat /sys/devices/system/cpu/nohz_full 2> /dev/null)"; } | sort -un)
[ -n "$isolated" ] ||
	ktap_skip_all "no isolated vCPU: boot with tools/vm/run --cpus 3 --append isolcpus=2"
nq=$(getconf _NPROCESSORS_ONLN)
[ "$nq" -ge 3 ] || ktap_skip_all "needs at least 3 vCPUs"
# Function call IPIs received by CPU $1 (/proc/interrupts, CAL).
ipis_on() {
	awk -v c=$(($1 + 2)) '$1 == "CAL:" { print $c }' /proc/interrupts
}

ktap_plan 3
cleanup() {
	vrss_net_cleanup
	vrss_unload 2> /dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

setup() {
	vrss_load && vrss_net_setup numrxqueues "$nq" && ethtool -K vrss0 rxhash on &&
		ethtool -X vrss0 hkey $VRSS_MS_KEY && vrss_sys_set threshold 0
}
ktap_check "vrss0 on veth0 with $nq queues, rxhash on, threshold 0; isolated: $(xargs <<< "$isolated")" setup

spread() {
	local q0 q c i cpus bad=0 before after
	q0=$(vrss_queue_packets vrss0)
	declare -A ipis0
	for c in $isolated; do ipis0[$c]=$(ipis_on "$c"); done
	vrss_send_udp 64 4
	vrss_wait_state spread 5000 > /dev/null
	vrss_send_udp 64 20
	q=$(vrss_queue_delta "$q0" "$(vrss_queue_packets vrss0)")
	read -r -a cpus < /sys/class/net/vrss0/vrss/queue_cpus
	echo "# width $(vrss_sys width); queues' vCPUs ${cpus[*]}; frames per queue $q"
	for ((i = 1; i < nq; i++)); do
		if grep -qx "${cpus[i]}" <<< "$isolated"; then
			echo "# spread queue $i on isolated vCPU ${cpus[i]}"
			bad=1
		fi
	done
	for c in $isolated; do
		before=${ipis0[$c]} after=$(ipis_on "$c")
		echo "# function call IPIs on isolated vCPU $c: +$((after - before))"
		# The kernel's own (TLB shootdowns, RCU) are a few at most.
		[ $((after - before)) -lt 20 ] || bad=1
	done
	[ "$bad" = 0 ] && [ "$(vrss_sys width)" = "$nq" ] &&
		[ -z "$(tr ' ' '\n' <<< "$q" | grep -x 0)" ]
}
ktap_check "spread over $nq queues: none on an isolated vCPU, every queue took frames, next to no IPI there" spread
ktap_check "no taint, no lockdep splat" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
