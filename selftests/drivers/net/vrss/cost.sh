#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cost promise, counted: below the threshold vrss costs what the
# NIC alone costs.  Under `tools/vm/run --count-insns` (the instruction
# meter, tools/insn/) the same light load, one UDP datagram every 2 ms
# from one flow, each arriving alone, is received through
#   plain   the lower alone (no vrss0 on it)
#   off     vrss0, rxhash off (the default)
#   single  vrss0, rxhash on, threshold 100 (never spreads)
#   gated   vrss0, rxhash on, threshold 80 (the default), below it
# in alternating rounds, with a window of no traffic (idle: the lower
# alone, the same receiver and sender, which sends nothing) that is
# subtracted from each: what the frames cost.  It checks, per frame:
#  - every frame received, in order, inside its window;
#  - vrss's own instructions (its functions, by the meter's profile: exact,
#    the same in every window): off within 100, single and gated within
#    450, and gated never spreading;
#  - the whole path's kernel instructions, each configuration's least
#    window within 1.20x plain's typical one: windows of one
#    configuration spread (frames that happen to arrive together share
#    interrupts and wakeups), and on a loaded host a whole
#    configuration's typical window can sit far above plain's while its
#    least stays close: what comes and goes only adds instructions, so a
#    configuration's least window is its path.  Plain's least is no
#    yardstick: one lucky window would put every vrss configuration well
#    above it.  What every frame pays (a hop to another vCPU, a copy)
#    shows in every window, the least included: a backstop;
#  - the budgets, 1 % (off) and 3 % (SINGLE, gated), on the frame's
#    path: the functions called the same whole number of times a frame
#    in every window (profile.py --base: each one's calls a frame times
#    its median instructions a call, against plain's, and vrss's own
#    instructions off that path), against plain's whole path.  Exact to a
#    few instructions, from round to round and window to window, where
#    the windows' totals spread with what frames that arrive together
#    share (an interrupt, a wakeup), which is not on the path;
#  - not one IPI from vrss, and the kernel's function-call interrupts not
#    past plain's by an IPI every fifth frame.
# On every lower the boot has: veth (the sender in
# the guest, on the receiver's vCPU), and with --nic the virtio-net NIC
# (the sender on the host) with all its queue pairs and, if it has more,
# with one (ethtool -L).
#
# A window holds the frames and as little else as can be: the receiver and
# the sender start before it and end after it (the sender waits before its
# first frame, both hold on after their last), the marks come from the
# meter's mark server (no process per mark), the window closes when the
# receiver's report comes through a pipe, and bash waits without polling:
# a process started or ended in the window would cost it far more than its
# frames do.  The figure per configuration is its typical window
# (profile.py: each kernel function's median over the rounds, summed,
# spinning on locks left out): the receive path runs the same functions
# for every frame, while housekeeping (page allocator drains, timers)
# comes and goes between windows.  vmstat's per-second work is put off for
# the test (vm.stat_interval) for the same reason.  Everything runs on
# vCPU 0.
#
# With VRSS_COST_SPREAD=1 (make bench), two more configurations, reported
# and not budgeted: each frame handed to vCPU 1 and its receive path run
# there, by
#   rps     the lower alone, RPS on every queue of it to vCPU 1
#   spread  vrss0, rxhash on, threshold 0, every bucket on queue 1 (-X
#           weight 0 1), whose vCPU is 1
# both vCPUs' instructions a frame, and what a spread frame pays more than
# an RPS one on its path.  VRSS_COST_SPREAD=direct: spread with rps_cpus
# set on vrss0's rx-1, so that queue 1 hands its frames up without vrss0's
# GRO (which RPS would apply): GRO's share of spread's cost.
#
# VRSS_COST_ROUNDS (5), VRSS_COST_FRAMES (500) and VRSS_COST_GAP (0.002 s)
# set the rounds, the frames per window and their spacing; VRSS_COST_SETTLE
# (0.4 s) the pause between the starts and the window.  VRSS_COST_KEEP=DIR keeps the windows' profiles and
# the guest's kallsyms there, for tools/insn/profile.py --top (where a
# configuration's instructions go, function by function).

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
[ -n "${VRSS_INSNS:-}" ] ||
	ktap_skip_all "no instruction meter: run under tools/vm/run --count-insns"
[ -x "$VRSS_INSN" ] || { echo "not ok: no $VRSS_INSN: run make tools"; exit $KSFT_FAIL; }

rounds=${VRSS_COST_ROUNDS:-5}
frames=${VRSS_COST_FRAMES:-500}
gap=${VRSS_COST_GAP:-0.002}
# The sender's wait before its first frame; idle's window (window()).
# Each window reports frames outside it (measure: OUTSIDE-US).
# The starts' leftovers (a process's exit is done before its parent hears
# of it; the pages it freed, its RCU work are not) are given settle s
# before the window opens, so that they are done before it.
settle=${VRSS_COST_SETTLE:-0.4}
delay=$(awk -v s="$settle" 'BEGIN { print s + 0.2 }')
idle_secs=$(awk -v n="$frames" -v g="$gap" -v d="$delay" -v s="$settle" 'BEGIN { print d - s + n * g }')
configs=(idle plain off single gated)
# The lower's configurations (no vrss0), and what goes to vCPU 1.
lower_only="idle plain rps"
to_cpu1=${VRSS_COST_SPREAD:-0}
[ "$to_cpu1" = 0 ] || configs+=(rps spread)
# vrss's own instructions per frame: budgets with a margin over what 6.1
# and 6.12 measure (the figures are in bench/).
own_off=100
own_single=450
own_min_off=30
own_min_single=250

lowers=(veth)
if [ -n "${VRSS_NIC:-}" ]; then
	lowers+=(nic)
	[ "${VRSS_NIC_QUEUES:-1}" -le 1 ] || lowers+=(nic1)
fi
ktap_plan $((${#lowers[@]} * 7))

tmp=$(mktemp -d)
stat_interval=$(< /proc/sys/vm/stat_interval)
hostid='' spid='' rpid='' rfd=''
cleanup() {
	stop_flows
	vrss_insn_serve_stop
	sysctl -qw vm.stat_interval="$stat_interval"
	[ -z "${VRSS_NIC:-}" ] || {
		ip link del vrss0 2> /dev/null
		ip addr flush dev "$VRSS_NIC"
		ethtool -L "$VRSS_NIC" combined "$VRSS_NIC_QUEUES" 2> /dev/null
	}
	vrss_net_cleanup
	vrss_unload 2> /dev/null
	[ -z "${VRSS_COST_KEEP:-}" ] || cp -r "$tmp/." "$VRSS_COST_KEEP"
	rm -rf "$tmp"
}
trap cleanup EXIT
sysctl -qw vm.stat_interval=120 net.ipv6.conf.all.disable_ipv6=1 \
	net.ipv6.conf.default.disable_ipv6=1
vrss_load || exit $KSFT_FAIL
cat /proc/kallsyms > "$tmp/kallsyms"
# Everything on vCPU 0: the script, the mark server, the receiver and
# veth's sender, so that no wakeup in a window crosses vCPUs.
taskset -pc 0 $$ > /dev/null
vrss_insn_serve 0

# lower NAME: the device, addresses and sender of lower NAME.
lower() {
	ip link del vrss0 2> /dev/null
	case $1 in
	veth)
		lower_dev=veth0 guest=$VRSS_IP peer=$VRSS_PEER_IP
		vrss_net_setup || return 1
		peer_mac=$(vrss_peer_mac veth1)
		;;
	nic|nic1)
		vrss_net_cleanup
		lower_dev=$VRSS_NIC guest=198.51.100.1 peer=198.51.100.2
		local q=$VRSS_NIC_QUEUES
		[ "$1" = nic ] || q=1
		ethtool -L "$lower_dev" combined "$q" || return 1
		ip link set "$lower_dev" up
		peer_mac=$("$VRSS_REPO/tools/vm/host" run cat /sys/class/net/vrsstap0/address)
		;;
	esac
}

# use CONFIG: the receive configuration on the current lower.
use() {
	local dev=vrss0 rx mask=0
	[ "$1" != rps ] || mask=2
	if [ "$to_cpu1" != 0 ]; then
		for rx in /sys/class/net/"$lower_dev"/queues/rx-*; do
			echo $mask > "$rx/rps_cpus" || return 1
		done
	fi
	if [[ " $lower_only " == *" $1 "* ]]; then
		ip link del vrss0 2> /dev/null
		dev=$lower_dev
	else
		ip addr flush dev "$lower_dev"
		[ -e /sys/class/net/vrss0 ] || {
			ip link add link "$lower_dev" name vrss0 type vrss &&
				ip link set vrss0 up
		} || return 1
		# A table of the user's only for spread's.
		[ "$to_cpu1" = 0 ] || [ "$1" = spread ] || ethtool -X vrss0 default || return 1
		case $1 in
		off)	ethtool -K vrss0 rxhash off ;;
		single)	vrss_sys_set threshold 100 && ethtool -K vrss0 rxhash on ;;
		gated)	vrss_sys_set threshold 80 && ethtool -K vrss0 rxhash on ;;
		spread)	vrss_sys_set threshold 0 && ethtool -K vrss0 rxhash on &&
			ethtool -X vrss0 weight 0 1 &&
			if [ "$to_cpu1" = direct ]; then
				echo 1 > /sys/class/net/vrss0/queues/rx-1/rps_cpus
			fi ;;
		esac || return 1
	fi
	ip -b - <<-EOF
		addr replace $guest/24 dev $dev
		neigh replace $peer dev $dev nud permanent lladdr $peer_mac
	EOF
}

# wait_line FILE WORD: up to 10 s for a line starting with WORD in FILE,
# polled every 5 ms by bash alone (no process started).
wait_line() {
	local i line
	for ((i = 0; i < 2000; i++)); do
		[ ! -e "$1" ] || while read -r line; do
			[ "${line%% *}" != "$2" ] || return 0
		done < "$1"
		read -r -t 0.005 -u "${VRSS_INSN_SRV[0]}" _
	done
	echo "# no '$2' in $1 after 10 s"
	return 1
}

# cal_now: the kernel's function-call interrupts so far, read by bash.
cal_now() {
	local f i
	cal=0
	while read -r -a f; do
		[ "${f[0]}" = CAL: ] || continue
		for ((i = 1; i < ${#f[@]}; i++)); do
			[[ ${f[i]} =~ ^[0-9]+$ ]] && cal=$((cal + f[i]))
		done
	done < /proc/interrupts
}

# The window: the receiver and the sender are running before it opens
# (the sender waiting $delay s before its first frame) and still there,
# holding, when it closes, and the marks come from the mark server: no
# process starts or ends in it.  It closes when the receiver reports its
# last frame, read by bash from a pipe (no polling); idle's, whose sender
# sends nothing, lasts the delay and the frames' time.
window() {
	wline=
	if [ "$config" = idle ]; then
		read -r -t "$idle_secs" -u "${VRSS_INSN_SRV[0]}" _
	else
		read -r -t 60 -u "$rfd" wline
	fi
	window_end=${EPOCHREALTIME/[.,]/}
	return 0
}

# start_flows N: the receiver of N frames (its report on $rfd) and a
# sender of N, waiting.
start_flows() {
	local n=$1 out line
	rm -f "$tmp/recv.fifo"
	mkfifo "$tmp/recv.fifo" || return 1
	taskset -c 0 "$VRSS_TRAFFIC" --hold 60 seqrecv $guest 1 "$n" > "$tmp/recv.fifo" &
	rpid=$!
	exec {rfd}< "$tmp/recv.fifo"
	read -r -t 10 -u "$rfd" line && [ "$line" = ready ] || return 1
	if [ "$lower_dev" = veth0 ]; then
		taskset -c 0 ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" --delay $delay --hold 60 \
			seqsend $guest 1 "$n" 1 $gap > "$tmp/send" &
		spid=$!
		out=$tmp/send
	else
		hostid=$("$VRSS_REPO/tools/vm/host" start "$VRSS_TRAFFIC" --delay $delay --hold 60 \
			 seqsend $guest 1 "$n" 1 $gap) || return 1
		out=/run/vrss-job/host/$hostid.out
	fi
	wait_line "$out" waiting
}

# stop_flows: both ended (they hold until killed).
stop_flows() {
	# Braces: the shell's "Terminated" report goes where their stderr does.
	[ -z "$spid" ] || { kill "$spid"; wait "$spid"; } 2> /dev/null
	[ -z "$hostid" ] || "$VRSS_REPO/tools/vm/host" kill "$hostid" > /dev/null 2>&1
	[ -z "$rpid" ] || { kill "$rpid"; wait "$rpid"; } 2> /dev/null
	[ -z "$rfd" ] || exec {rfd}<&-
	rm -f "$tmp/recv.fifo"
	spid='' hostid='' rpid='' rfd=''
}

# measure LOWER: ROUNDS rounds of every configuration; the windows'
# profiles in $tmp/LOWER-CONFIG-ROUND, the per-window facts in
# $tmp/LOWER.txt: CONFIG ROUND RECEIVED REORDERED VRSS-IPIS CAL
# SPREAD-EVENTS VRSS0-PACKETS OUTSIDE-US (OUTSIDE-US: how long before
# the window opened the first frame arrived plus how long after it closed
# the last did, 0 when all were in it).
measure() {
	local l=$1 r c ipis0 spread0 pkts0 cal0 recv reord first last out n
	for ((r = 1; r <= rounds; r++)); do
		for c in "${configs[@]}"; do
			use "$c" || return 1
			ipis0=0 spread0=0 pkts0=0
			if [ -e /sys/class/net/vrss0 ]; then
				ipis0=$(vrss_stat_sum vrss0 ipis)
				spread0=$(vrss_stat vrss0 spread_events)
				pkts0=$(vrss_rx_packets)
			fi
			n=$frames config=$c
			[ "$c" != idle ] || n=0
			start_flows $n || return 1
			read -r -t $settle -u "${VRSS_INSN_SRV[0]}" _
			cal_now
			cal0=$cal
			window_start=${EPOCHREALTIME/[.,]/}
			vrss_insn_window "$tmp/$l-$c-$r" window || return 1
			cal_now
			cal0=$((cal - cal0))
			# The receiver's report: window() read its first line.
			recv=0 reord='' first=0 last=0 line=$wline
			while :; do
				read -r w1 w2 _ w4 _ <<< "$line"
				case $w1 in
				received) recv=$w2 reord=$w4 ;;
				first_us) first=$w2 ;;
				last_us) last=$w2; break ;;
				esac
				read -r -t 5 -u "$rfd" line || break
			done
			stop_flows
			[ "$c" != idle ] ||
				recv=$frames reord=0 first=$window_start last=$window_end
			# Frames outside the window: early or late, microseconds.
			out=$((first < window_start ? window_start - first : 0))
			out=$((out + (last > window_end ? last - window_end : 0)))
			if [[ " $lower_only " == *" $c "* ]]; then
				echo "$c $r $recv $reord 0 $cal0 0 0 $out"
			else
				echo "$c $r $recv $reord $(($(vrss_stat_sum vrss0 ipis) - ipis0)) $cal0" \
				     "$(($(vrss_stat vrss0 spread_events) - spread0)) $(($(vrss_rx_packets) - pkts0))" \
				     "$out"
			fi
		done
	done > "$tmp/$l.txt"
}

# typical LOWER: a line per configuration, "CONFIG kernel K module M min
# KMIN max KMAX", the typical window's instructions; for vrss's
# configurations followed by "excess D path P base B emin DMIN emax DMAX
# offpath O", D what a frame costs more than through plain on its path
# (profile.py --base), per frame; O, reported only, what the kernel ran
# more off that path.  One profile.py for them all (a Python start and a
# read of kallsyms under the meter: seconds).
typical() {
	local c groups=() versus=(plain off single gated)
	for c in "${configs[@]}"; do
		groups+=(--group "$c" "$tmp/$1-$c"-*)
	done
	[ "$to_cpu1" = 0 ] || versus+=(rps spread)
	python3 "$VRSS_REPO/tools/insn/profile.py" "$tmp/kallsyms" "${groups[@]}" \
		--frames "$frames" --versus "${versus[@]}"
}

# spread_versus_rps LOWER: "spread kernel K ... excess D ...": what a
# spread frame costs more than an RPS one, on its path.
spread_versus_rps() {
	python3 "$VRSS_REPO/tools/insn/profile.py" "$tmp/kallsyms" --group rps "$tmp/$1-rps"-* \
		--group spread "$tmp/$1-spread"-* --frames "$frames" --versus rps spread |
		grep '^spread '
}

# within NAME VALUE LIMIT-EXPR: a case, VALUE <= LIMIT (integers).
within() {
	ktap_info "$2 <= $3"
	ktap_result "$1" $(($2 > $3))
}

for l in "${lowers[@]}"; do
	if ! lower "$l" || ! measure "$l"; then
		ktap_info "$l: the measurement failed"
		for i in 1 2 3 4 5 6 7; do ktap_result "$l: measured" 1; done
		continue
	fi
	declare -A k own lo hi ex path exlo exhi offp typ
	out=$(typical "$l") || ktap_info "$l: profile.py failed: $out"
	while read -r c line; do
		typ[$c]=$line
	done <<< "$out"
	for c in "${configs[@]}"; do
		read -r _ k[$c] _ own[$c] _ lo[$c] _ hi[$c] _ ex[$c] _ path[$c] _ _ _ exlo[$c] _ exhi[$c] \
			_ offp[$c] <<< "${typ[$c]:-}"
		[ -n "${hi[$c]}" ] || { ktap_info "$l $c: no profile"; k[$c]=0; own[$c]=0 lo[$c]=0 hi[$c]=0; }
		[ "$c" = idle ] && continue
		# Per frame (profile.py divided), the idle window's instructions
		# taken away.
		k[$c]=$((k[$c] - k[idle]))
		lo[$c]=$((lo[$c] - k[idle]))
		hi[$c]=$((hi[$c] - k[idle]))
		ktap_info "$l $c: ${k[$c]} kernel instructions per frame (windows ${lo[$c]}-${hi[$c]}), vrss's own ${own[$c]}" \
			"${ex[$c]:+, on the path of a frame ${path[$c]}: ${ex[$c]} more than plain (windows ${exlo[$c]} to ${exhi[$c]});}" \
			"${offp[$c]:+off it, past the largest plain window: ${offp[$c]}}"
	done
	ktap_info "$l idle window: $((k[idle] * frames / 1000)) k kernel instructions"
	# Every frame through vrss0 where it is, received in order, and a
	# profile for every configuration.
	bad=$(awk -v n="$frames" '$3 != n || $4 != 0 || $9 != 0 || ($1 != "plain" && $1 != "idle" && $1 != "rps" && $8 < n)' "$tmp/$l.txt")
	[ -z "$bad" ] || ktap_info "$l: windows short, reordered, not through vrss0 or with frames outside: $bad"
	[ "${k[plain]}" -gt 0 ] || bad+=" no-profile"
	ktap_result "$l: every window received its $frames frames, in order, inside it, through vrss0 in vrss's" \
		$([ -z "$bad" ]; echo $?)
	# At least what the receive handler (off) and the hash (SINGLE) take.
	within "$l: rxhash off: vrss's own instructions per frame from $own_min_off to $own_off" \
		$((own[off] < own_min_off ? own_off + 1 : own[off])) $own_off
	within "$l: SINGLE: vrss's own instructions per frame from $own_min_single to $own_single" \
		$((own[single] < own_min_single ? own_single + 1 : own[single])) $own_single
	spread=$(awk '$1 == "gated" { n += $7 } END { print n + 0 }' "$tmp/$l.txt")
	ktap_info "$l gated: $spread spread events"
	within "$l: gated below the threshold stays single, its own instructions per frame within $own_single" \
		$((own[gated] + 1000000 * spread)) $own_single
	worst=off
	for c in single gated; do
		[ "${lo[$c]}" -le "${lo[$worst]}" ] || worst=$c
	done
	ktap_info "$l: whole path per frame: off $((1000 * k[off] / k[plain])), single $((1000 * k[single] / k[plain])), gated $((1000 * k[gated] / k[plain])) per mille of plain's; least windows against plain's typical: off $((1000 * lo[off] / k[plain])), single $((1000 * lo[single] / k[plain])), gated $((1000 * lo[gated] / k[plain]))"
	within "$l: the whole path per frame, each configuration's least window within 1.20x plain's typical" \
		$((100 * lo[$worst])) $((120 * k[plain]))
	# What a frame pays more on its path than through the NIC alone,
	# against plain's whole path: off 1 %, SINGLE 3 %.
	ktap_info "$l: more than plain on the frame's path: off ${ex[off]:-?}, single ${ex[single]:-?}," \
		"gated ${ex[gated]:-?} (1 % of plain's whole path: $((k[plain] / 100)))"
	over=$((100 * ${ex[off]:-999999} > k[plain] ? 1 : 0))
	for c in single gated; do
		[ $((100 * ${ex[$c]:-999999})) -le $((3 * k[plain])) ] || over=1
	done
	ktap_result "$l: on the frame's path, rxhash off within 1 % of plain's instructions, SINGLE and gated within 3 %" $over
	# The kernel's count has other senders (the marks' processes, the
	# sender's start, also in a window without traffic): a configuration
	# of vrss's may not go past the largest of plain's and the idle
	# windows' by a fifth of the frames (an IPI for every fifth frame).
	read -r ipis base_cal vrss_cal < <(awk '
		{ c[$1, ++n[$1]] = $6 }
		($1 == "plain" || $1 == "idle") && $6 > base { base = $6 }
		$1 != "plain" && $1 != "spread" { ipis += $5 }
		function med(k,   i, j, t, m, a) {
			m = n[k]
			for (i = 1; i <= m; i++) a[i] = c[k, i]
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return a[int((m + 1) / 2)]
		}
		END {
			v = med("off"); if (med("single") > v) v = med("single")
			if (med("gated") > v) v = med("gated")
			print ipis + 0, base + 0, v
		}' "$tmp/$l.txt")
	ktap_info "$l: IPIs sent by vrss $ipis; function-call interrupts per window: plain and idle at most $base_cal, vrss's configurations' medians at most $vrss_cal"
	ktap_info "$l: windows (config round received reordered vrss-ipis cal spread-events vrss0-packets outside-us):"
	while read -r line; do ktap_info "  $line"; done < "$tmp/$l.txt"
	ktap_result "$l: no IPI from vrss below the threshold, in its count and in the kernel's" \
		$((ipis != 0 || vrss_cal > base_cal + frames / 5))
	if [ "$to_cpu1" != 0 ]; then
		read -r _ _ _ _ _ _ _ _ _ _ sx _ sp _ sb _ < <(spread_versus_rps "$l")
		read -r sipis scal rcal < <(awk '
			$1 == "spread" { i += $5; s += $6; n++ } $1 == "rps" { r += $6; m++ }
			END { printf "%.2f %.2f %.2f\n", i / (n * '"$frames"'), s / (n * '"$frames"'), r / (m * '"$frames"') }' "$tmp/$l.txt")
		ktap_info "$l: to vCPU 1, both vCPUs' kernel instructions per frame: rps ${k[rps]}, spread ${k[spread]}" \
			"(vrss's own ${own[spread]}); on the frame's path spread ${sp:-?} against rps ${sb:-?}: ${sx:-?} more;" \
			"IPIs per frame: vrss's $sipis, function-call interrupts spread $scal, rps $rcal"
	fi
	unset k own lo hi ex path exlo exhi offp typ
done
ktap_finish
