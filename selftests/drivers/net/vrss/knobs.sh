#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The load gate's knobs and status: module parameters with range checks,
# /sys/class/net/vrss0/vrss/ (invalid writes are -EINVAL and change
# nothing), the extremes threshold=0 and 100, spread/contract counters and
# tracepoints, and no load sampling at all while rxhash is off or the
# device is down.  The only traffic is a paced datagram stream while
# sampling is counted (the load work sleeps without frames); gate.sh
# drives the gate itself.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
command -v ethtool > /dev/null || ktap_skip_all "ethtool not installed"
command -v modinfo > /dev/null || ktap_skip_all "modinfo not installed"

ktap_plan 24

cleanup() {
	vrss_trace_off
	vrss_net_cleanup
	vrss_unload 2>/dev/null
}
trap cleanup EXIT
taint0=$(vrss_taint_other)

# modinfo: every parameter with its range and default.
modinfo_ranges() {
	local parm
	parm=$(modinfo -F parm "$VRSS_KO")
	echo "$parm"
	grep -q '^threshold:.*0-100.*(default 80)' <<< "$parm" &&
		grep -q '^hysteresis:.*0-100.*(default 20)' <<< "$parm" &&
		grep -q '^interval_ms:.*10-10000.*(default 100)' <<< "$parm"
}
ktap_check "modinfo: threshold, hysteresis, interval_ms with range and default" modinfo_ranges
modinfo_fields() {
	[ -n "$(modinfo -F description "$VRSS_KO")" ] && [ -n "$(modinfo -F author "$VRSS_KO")" ] &&
		[ "$(modinfo -F license "$VRSS_KO")" = GPL ] &&
		[ "$(modinfo -F version "$VRSS_KO")" = "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$VRSS_REPO/dkms.conf")" ]
}
ktap_check "modinfo: description, author, license GPL, version = dkms.conf's" modinfo_fields

bad_insmod() {
	local p rc=0
	for p in threshold=101 threshold=-1 threshold=abc hysteresis=101 \
		 interval_ms=9 interval_ms=10001 interval_ms=0; do
		if insmod "$VRSS_KO" "$p" 2>/dev/null; then
			echo "insmod vrss $p succeeded"
			rmmod vrss
			rc=1
		elif vrss_loaded; then
			echo "vrss loaded after a failed insmod $p"
			rc=1
		fi
	done
	return $rc
}
ktap_check "insmod refuses out-of-range parameters (7 cases)" bad_insmod

knobs() {
	echo "$(vrss_sys threshold) $(vrss_sys hysteresis) $(vrss_sys interval_ms)"
}

ktap_check "insmod threshold=50 hysteresis=10 interval_ms=200" \
	vrss_load threshold=50 hysteresis=10 interval_ms=200
ktap_check "vrss0 on veth0 with 2 queues" vrss_net_setup numrxqueues 2
ktap_check "the parameters are vrss0's knobs" test "$(knobs)" = "50 10 200"

param_writes() {
	local f=/sys/module/vrss/parameters/threshold
	! printf 101 > $f 2>/dev/null && [ "$(< $f)" = 50 ] &&
		printf 70 > $f && [ "$(< $f)" = 70 ] &&
		[ "$(vrss_sys threshold)" = 50 ]
}
ktap_check "/sys/module/vrss/parameters: range-checked, defaults for new devices only" param_writes

# Back to the defaults.
reload() {
	vrss_net_cleanup
	vrss_unload && vrss_load && vrss_net_setup numrxqueues 2
}
ktap_check "reload without parameters" reload
ktap_check "defaults: threshold 80, hysteresis 20, interval_ms 100" test "$(knobs)" = "80 20 100"

status() {
	echo "$(vrss_sys state) $(vrss_sys width) $(vrss_sys primary_load) $(vrss_sys lower)"
}
ktap_check "rxhash off: state off, width 1, primary_load 0, lower veth0" \
	test "$(status)" = "off 1 0 veth0"

bad_writes() {
	local f v rc=0 before
	for f in threshold:101 threshold:-1 threshold:abc threshold: threshold:1.5 \
		 threshold:4294967296 hysteresis:101 hysteresis:-5 interval_ms:9 \
		 interval_ms:10001 interval_ms:0; do
		v=${f#*:}
		f=${f%%:*}
		before=$(vrss_sys "$f")
		if vrss_sys_set "$f" "$v" 2>/dev/null; then
			echo "writing '$v' to $f succeeded"
			rc=1
		fi
		[ "$(vrss_sys "$f")" = "$before" ] || { echo "$f changed to $(vrss_sys "$f")"; rc=1; }
	done
	return $rc
}
ktap_check "invalid knob writes fail and change nothing (11 cases)" bad_writes

einval() {
	local err
	err=$( (printf 101 > /sys/class/net/vrss0/vrss/threshold) 2>&1)
	echo "$err"
	grep -q "Invalid argument" <<< "$err"
}
ktap_check "the error is EINVAL" einval

ro_writes() {
	local f rc=0 before
	for f in state width primary_load lower effective_indir; do
		before=$(vrss_sys $f)
		if vrss_sys_set $f 1 2>/dev/null; then
			echo "writing to read-only $f succeeded"
			rc=1
		fi
		[ "$(vrss_sys $f)" = "$before" ] || { echo "$f changed"; rc=1; }
	done
	return $rc
}
ktap_check "writes to the read-only status files fail (5 files)" ro_writes

good_writes() {
	vrss_sys_set threshold 65 && vrss_sys_set hysteresis 5 &&
		vrss_sys_set interval_ms 0x64 && [ "$(knobs)" = "65 5 100" ] &&
		vrss_sys_set threshold 80 && vrss_sys_set hysteresis 20
}
ktap_check "valid writes take effect" good_writes

table() {
	ethtool -x vrss0 | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) printf "%s ", $i }'
}

# Sampling held off (the first sample in 10 s): the state rxhash on starts in.
vrss_sys_set interval_ms 10000
ethtool -K vrss0 rxhash on
# 128 entries, every one 0 (an unreadable table is no table of zeros).
single_table() {
	local -a eff
	read -r -a eff < /sys/class/net/vrss0/vrss/effective_indir || return 1
	echo "# $(vrss_sys state), width $(vrss_sys width), ${#eff[@]} entries, their sum $(IFS=+; echo $((${eff[*]:-1})))"
	[ "$(vrss_sys state) $(vrss_sys width)" = "single 1" ] && [ ${#eff[@]} = 128 ] &&
		[ "$(IFS=+; echo $((${eff[*]})))" = 0 ]
}
ktap_check "rxhash on: starts single, width 1, every bucket on queue 0" single_table
vrss_sys_set interval_ms 100

# At 100 the width cannot change by itself: the counts below are exact.
vrss_sys_set threshold 100
vrss_trace_on vrss_width_change
s0=$(vrss_stat vrss0 spread_events)
c0=$(vrss_stat vrss0 contract_events)
extremes() {
	vrss_sys_set threshold 0 || return 1
	echo "threshold 0: $(status), effective $(vrss_sys effective_indir | cut -c1-16)..."
	[ "$(vrss_sys state) $(vrss_sys width)" = "spread 2" ] || return 1
	[ "$(vrss_sys effective_indir) " = "$(table)" ] || return 1
	vrss_sys_set threshold 100 || return 1
	echo "threshold 100: $(status)"
	[ "$(vrss_sys state) $(vrss_sys width)" = "single 1" ]
}
ktap_check "threshold 0 spreads over every queue at once (the user's table), 100 never" extremes
events=$(($(vrss_stat vrss0 spread_events) - s0))" "$(($(vrss_stat vrss0 contract_events) - c0))
echo "# spread_events contract_events: +$events"
ktap_check "one spread and one contract event counted" test "$events" = "1 1"
ktap_check "vrss:vrss_width_change traced both" test "$(vrss_trace_count vrss_width_change)" = 2

channels() {
	vrss_sys_set threshold 0 &&
		ethtool -L vrss0 rx 1 && [ "$(vrss_sys state) $(vrss_sys width)" = "single 1" ] &&
		ethtool -L vrss0 rx 2 && [ "$(vrss_sys state) $(vrss_sys width)" = "spread 2" ]
}
ktap_check "threshold 0 follows ethtool -L (1 queue: single, 2: spread)" channels
vrss_sys_set threshold 80

# Sampling: vrss:vrss_load_sample fires once per interval, only while
# rxhash is on and vrss0 is up.  A datagram every 5 ms for about a second
# keeps the load work awake (it sleeps while no frame comes, gate.sh), and
# shows that frames do not start sampling while rxhash is off or vrss0 down.
samples() {
	local t0 n
	t0=$(date +%s%3N)
	vrss_trace_on vrss_load_sample
	ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" pace $VRSS_IP 1 200 0.005 || return 1
	n=$(vrss_trace_count vrss_load_sample)
	echo "$n $(($(date +%s%3N) - t0))"
}
read -r n100 ms100 < <(samples)
vrss_sys_set interval_ms 20
read -r n20 ms20 < <(samples)
vrss_sys_set interval_ms 100
echo "# load samples: $n100 in $ms100 ms at interval_ms 100, $n20 in $ms20 ms at 20"
# At most one sample per interval of the window (plus one at each edge).
ktap_check "rxhash on: the load is sampled every interval, never more often" \
	test "$n100" -ge 5 -a "$n100" -le $((ms100 / 100 + 2))
ktap_check "interval_ms 20 samples more than twice as often as 100, never more often" \
	test "$n20" -gt $((2 * n100)) -a "$n20" -le $((ms20 / 20 + 2))

ethtool -K vrss0 rxhash off
read -r noff _ < <(samples)
ktap_check "rxhash off: no sampling, state off, primary_load 0" \
	test "$noff $(vrss_sys state) $(vrss_sys primary_load)" = "0 off 0"

ethtool -K vrss0 rxhash on
ip link set vrss0 down
read -r ndown _ < <(samples)
ip link set vrss0 up
read -r nup _ < <(samples)
echo "# load samples in 200 paced datagrams: $ndown with vrss0 down, $nup once up again"
ktap_check "vrss0 down: no sampling; up again: sampling resumes" \
	test "$ndown" = 0 -a "$nup" -ge 5

ktap_check "no taint beyond out-of-tree and unsigned" test "$(vrss_taint_other)" = "$taint0"
ktap_finish
