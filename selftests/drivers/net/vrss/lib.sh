#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared by the vrss selftests: KTAP output and the module under test.
# Each test sources this, declares its plan with ktap_plan N, reports each
# case with ktap_result, and ends with ktap_finish (exit 0, 1 or 4 as
# kselftest defines them).

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

# The test programs' directory: in the repository, or in a kselftest tree
# (make ksft) whose files link to the repository's, where VRSS_REPO is.
# Parameter expansion and /proc, not dirname and uname: every test starts
# here, and under TCG each exec costs the guest a tenth of a second.
_vrss_lib=${BASH_SOURCE[0]}
[[ $_vrss_lib == */* ]] || _vrss_lib=./$_vrss_lib
VRSS_DIR=$(cd "${_vrss_lib%/*}" && pwd)
_vrss_lib=$(readlink -f "$_vrss_lib")
VRSS_REPO=$(cd "${_vrss_lib%/*}/../../../.." && pwd)
# The module built for the running kernel by `make modules-all`.
VRSS_KO=${VRSS_KO:-$VRSS_REPO/build/$(< /proc/sys/kernel/osrelease)/drivers/net/vrss/vrss.ko}
# The C traffic helper, built on the host by `make -C` this directory
# (run_tests builds it first): a TCG guest starts it in milliseconds.
VRSS_TRAFFIC=$VRSS_DIR/vrss_traffic

_ktap_n=0
_ktap_fail=0
_ktap_pass=0
_ktap_skip=0
_ktap_t=${EPOCHREALTIME/[.,]/}

ktap_plan() {
	echo "TAP version 13"
	echo "1..$1"
	_ktap_plan=$1
}

ktap_info() {
	echo "# $*"
}

# ktap_result NAME STATUS: STATUS is 0 (pass), 4 (skip) or anything else.
ktap_result() {
	local name=$1 rc=$2 now
	_ktap_n=$((_ktap_n + 1))
	# VRSS_KTAP_TIMES=1: each case's milliseconds (since the previous
	# result), for finding where a test spends its time.
	if [ "${VRSS_KTAP_TIMES:-0}" = 1 ]; then
		now=${EPOCHREALTIME/[.,]/}
		echo "# $(((now - ${_ktap_t:-$now}) / 1000)) ms"
		_ktap_t=$now
	fi
	case $rc in
	0) echo "ok $_ktap_n $name"; _ktap_pass=$((_ktap_pass + 1)) ;;
	4) echo "ok $_ktap_n $name # SKIP"; _ktap_skip=$((_ktap_skip + 1)) ;;
	*) echo "not ok $_ktap_n $name"; _ktap_fail=$((_ktap_fail + 1)) ;;
	esac
}

# ktap_check NAME CMD...: run CMD as one case, its output as diagnostics.
ktap_check() {
	local name=$1 out rc l
	shift
	out=$("$@" 2>&1)
	rc=$?
	# In bash: a sed per case costs the guest more than the case.
	[ -z "$out" ] || while IFS= read -r l; do echo "# $l"; done <<< "$out"
	ktap_result "$name" "$rc"
}

# Exit for a missing prerequisite of the whole test (not a failure).
ktap_skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

ktap_finish() {
	echo "# Totals: pass:$_ktap_pass fail:$_ktap_fail xfail:0 xpass:0 skip:$_ktap_skip error:0"
	echo "# ${0##*/}: $SECONDS s"
	if [ "$_ktap_n" != "$_ktap_plan" ]; then
		echo "# planned $_ktap_plan cases, ran $_ktap_n"
		exit $KSFT_FAIL
	fi
	[ $_ktap_fail -eq 0 ] || exit $KSFT_FAIL
	[ $_ktap_pass -gt 0 ] || exit $KSFT_SKIP
	exit $KSFT_PASS
}

# Taint bits other than 12 (out-of-tree) and 13 (unsigned module).
vrss_taint_other() {
	echo $(($(< /proc/sys/kernel/tainted) & ~(1 << 12 | 1 << 13)))
}

vrss_require_root() {
	[ "$EUID" = 0 ] || ktap_skip_all "must run as root (tools/vm/run does)"
}

# Both are built on the host (make modules-all, make tools): missing, the
# tests fail, they do not skip.
vrss_require_module() {
	[ -f "$VRSS_KO" ] || { echo "not ok: no $VRSS_KO: run make modules-all"; exit $KSFT_FAIL; }
	[ -x "$VRSS_TRAFFIC" ] || { echo "not ok: no $VRSS_TRAFFIC: run make tools"; exit $KSFT_FAIL; }
}

vrss_loaded() {
	grep -q '^vrss ' /proc/modules
}

vrss_load() {
	vrss_loaded || insmod "$VRSS_KO" "$@"
}

vrss_unload() {
	! vrss_loaded || rmmod vrss
}

# The test network: vrss0 stacked on veth0, whose peer veth1 sits in the
# namespace "vrss-peer" (192.0.2.1), vrss0 192.0.2.2 (TEST-NET-1, inside
# the guest only).  IPv6 off and static neighbours: the only frames on the
# wire are the ones a test sends, so counters can be compared exactly.
VRSS_PEER=vrss-peer
VRSS_PEER_IP=192.0.2.1
VRSS_IP=192.0.2.2

vrss_net_setup() {
	local mac pmac
	[ -d /sys/module/veth ] || modprobe veth || return 1
	ip netns add $VRSS_PEER || return 1
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip netns exec $VRSS_PEER sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip link add veth0 type veth peer name veth1 netns $VRSS_PEER || return 1
	ip link add link veth0 name vrss0 "$@" type vrss || return 1
	mac=$(< /sys/class/net/vrss0/address)
	# One ip per namespace (-batch): under TCG every exec costs the
	# guest a tenth of a second or more.
	ip -n $VRSS_PEER -b - <<-EOF || return 1
		link set lo up
		link set veth1 up
		addr add $VRSS_PEER_IP/24 dev veth1
		neigh replace $VRSS_IP dev veth1 nud permanent lladdr $mac
	EOF
	pmac=$(vrss_peer_mac veth1) || return 1
	ip -b - <<-EOF
		link set veth0 up
		link set vrss0 up
		addr add $VRSS_IP/24 dev vrss0
		neigh replace $VRSS_PEER_IP dev vrss0 nud permanent lladdr $pmac
	EOF
}

# vrss_peer CMD...: CMD in the peer's namespace; an ip command as ip -n
# (one exec, not two).
vrss_peer() {
	if [ "$1" = ip ]; then
		shift
		ip -n $VRSS_PEER "$@"
	else
		ip netns exec $VRSS_PEER "$@"
	fi
}

# vrss_peer_mac DEV: the MAC address of DEV in the peer's namespace.
vrss_peer_mac() {
	local f
	read -r -a f < <(ip -n $VRSS_PEER -br link show dev "$1")
	[ -n "${f[2]:-}" ] && echo "${f[2]}"
}

# vrss_field KEY FIELD: from stdin, where a line "KEY F1 F2 ..." names the
# fields of the line after it ("KEY V1 V2 ..." as in /proc/net/snmp and
# netstat, or "V1 V2 ..." as under ip -s link's "RX:" and "TX:"), the
# value of FIELD.  In bash: an awk start costs the guest more than a read.
vrss_field() {
	local i off
	local -a f v
	while read -r -a f; do
		[ "${f[0]:-}" = "$1" ] || continue
		read -r -a v
		off=1
		[ "${v[0]:-}" != "$1" ] || off=0
		for ((i = 1; i < ${#f[@]}; i++)); do
			[ "${f[i]}" = "$2" ] && { echo "${v[i - off]}"; return 0; }
		done
	done
	return 1
}

# vrss_peer_stat DEV rx_NAME|tx_NAME: a counter of DEV in the peer's
# namespace (bytes, packets, errors, dropped), from one ip -s link.
vrss_peer_stat() {
	local dir=${2%%_*}
	vrss_field "${dir^^}:" "${2#*_}" < <(ip -n $VRSS_PEER -s link show dev "$1")
}

# One ip for all three (-force: on past what is already gone).
vrss_net_cleanup() {
	# Sockets still closing towards the peer (a server's FIN-WAIT-1 after
	# stress.sh) would retransmit into the next test's peer, whose
	# resets then reach that test's vrss0: closed here.
	ss -K dst $VRSS_PEER_IP > /dev/null 2>&1
	ip -force -batch - > /dev/null 2>&1 <<-EOF
		link del vrss0
		link del veth0
		netns del $VRSS_PEER
	EOF
}

# Microsoft's RSS verification key.  The boot's key is random, and the
# Toeplitz hash is linear in its input bits: flows whose ports differ in a
# few low bits can all meet in a few queues under some keys.  Tests that
# need every queue used set this one: vrss_traffic's 64 flows then split
# 32+32, 20+22+22 and 16+16+16+16 over 2, 3 and 4 queues.
VRSS_MS_KEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa

# veth hands a frame to the lower on the CPU that sent it, so that is
# where vrss0's primary queue receives it (inline) and what the load gate
# samples: the tests' senders run on CPU 0 unless they say otherwise, so
# that the primary CPU is known and the spread queues sit on CPUs 1..N-1.
VRSS_SEND_CPU=${VRSS_SEND_CPU:-0}

# vrss_send_udp FLOWS PER_FLOW: PER_FLOW UDP datagrams from the peer to
# vrss0 on each of FLOWS flows (vrss_traffic.c has the ports), sent from
# $VRSS_SEND_CPU.
vrss_send_udp() {
	taskset -c "$VRSS_SEND_CPU" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" send $VRSS_IP "$@"
}

# vrss_expect_refusal NAME MESSAGE CMD...: CMD fails saying MESSAGE, and no
# vrss-bad device is left.
vrss_expect_refusal() {
	local name=$1 msg=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) && rc=1
	[[ $out == *"$msg"* ]] || rc=1
	[ $rc = 0 ] || echo "# $*: $out"
	[ ! -e /sys/class/net/vrss-bad ] || rc=1
	ktap_result "$name" $rc
}

# vrss_promiscuity DEV: DEV's promiscuity count (ip -d link; matched by
# bash, not grep and cut).
vrss_promiscuity() {
	local out
	out=$(ip -d link show "$1") && [[ $out =~ promiscuity\ ([0-9]+) ]] &&
		echo "${BASH_REMATCH[1]}"
}

# vrss_random_key: 40 random bytes as ethtool -X hkey takes them (aa:bb:..),
# made in bash (no od, tr and sed to start).
vrss_random_key() {
	local i k
	printf -v k '%02x' $((RANDOM & 255))
	for ((i = 1; i < 40; i++)); do
		printf -v k '%s:%02x' "$k" $((RANDOM & 255))
	done
	echo "$k"
}

# vrss_queue_delta BEFORE AFTER: per-queue differences, space separated.
vrss_queue_delta() {
	local -a b=($1) a=($2)
	local i out=
	for i in "${!a[@]}"; do
		out+="$((a[i] - b[i])) "
	done
	echo "${out% }"
}

# The ethtool -S readers parse in bash: under TCG every exec is slow, and
# the tests read counters all the time.

# vrss_stat DEV NAME: one ethtool -S counter.
vrss_stat() {
	local k v
	while read -r k v; do
		[ "$k" = "$2:" ] && { echo "$v"; return 0; }
	done < <(ethtool -S "$1")
	return 1
}

# vrss_read FILE: its first line, read by bash (no cat to start).
vrss_read() {
	local v
	read -r v < "$1" && echo "$v"
}

# vrss_sys_stat DEV NAME: a counter of /sys/class/net/DEV/statistics.
vrss_sys_stat() {
	local v
	read -r v < "/sys/class/net/$1/statistics/$2" && echo "$v"
}

# vrss_seq_drops: every drop a seqsend -> seqrecv transfer from the peer
# can meet, counted: vrss0's (full rings, frames while down), the peer's
# veth1, and the UDP socket's (InErrors: a full receive buffer).
vrss_seq_drops() {
	local parts
	read -r -a parts < <(vrss_seq_drop_parts)
	echo $((parts[0] + parts[1] + parts[2]))
}

# vrss_seq_drop_parts: the same drops apart: vrss0's, the socket's, veth1's.
vrss_seq_drop_parts() {
	echo "$(vrss_sys_stat vrss0 rx_dropped)" \
	     "$(vrss_field Udp: InErrors < /proc/net/snmp)" \
	     "$(vrss_peer_stat veth1 tx_dropped)"
}

# vrss_seq_drops_since V S P: the drops since vrss_seq_drop_parts printed
# V S P, in one reading: their sum, then "vrss0 v, socket s, veth1 p".
vrss_seq_drops_since() {
	local -a now
	read -r -a now < <(vrss_seq_drop_parts)
	local v=$((now[0] - $1)) s=$((now[1] - $2)) p=$((now[2] - $3))
	echo "$((v + s + p)) vrss0 $v, socket $s, veth1 $p"
}

# vrss_cal_ipis: the kernel's function-call interrupts so far, all vCPUs
# (/proc/interrupts CAL).
vrss_cal_ipis() {
	local f n=0 i
	read -r -a f < <(grep '^ *CAL:' /proc/interrupts)
	for ((i = 1; i < ${#f[@]}; i++)); do
		[[ ${f[i]} =~ ^[0-9]+$ ]] && n=$((n + f[i]))
	done
	echo $n
}

# vrss_stat_sum DEV SUFFIX: the sum of the rx_queue_<i>_SUFFIX counters.
vrss_stat_sum() {
	local k v n=0
	while read -r k v; do
		[[ $k =~ ^rx_queue_[0-9]+_$2:$ ]] && n=$((n + v))
	done < <(ethtool -S "$1")
	echo $n
}

# vrss_queue_packets DEV: the rx_queue_<i>_packets counters, space separated.
vrss_queue_packets() {
	local k v out=
	while read -r k v; do
		[[ $k =~ ^rx_queue_[0-9]+_packets:$ ]] && out+="$v "
	done < <(ethtool -S "$1")
	echo "$out"
}

# vrss_send_from_every_cpu SECONDS PER_FLOW: one sender pinned to each CPU
# of the peer, 64 flows each (distinct source ports), stopped after SECONDS.
vrss_send_from_every_cpu() {
	ip netns exec $VRSS_PEER timeout "$1" bash -c '
		for ((c = 0; c < $(nproc); c++)); do
			taskset -c $c "$1" send "$2" 64 "$3" 4 $((30000 + 100 * c)) &
		done
		wait' _ "$VRSS_TRAFFIC" $VRSS_IP "$2"
}

# vrss_send_and_count FLOWS PER_FLOW: send them, then the per-queue packet
# deltas in the array $delta and their sum in $sum.
vrss_send_and_count() {
	local -a b a
	local i r
	b=($(vrss_queue_packets vrss0))
	r=$(vrss_rx_packets)
	vrss_send_udp "$1" "$2"
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + $1 * $2))
	a=($(vrss_queue_packets vrss0))
	delta=()
	sum=0
	for i in "${!a[@]}"; do
		delta[i]=$((a[i] - b[i]))
		sum=$((sum + delta[i]))
	done
}

# vrss_addr_bytes ADDR: the bytes of an IPv4 or IPv6 address, in decimal.
vrss_addr_bytes() {
	local a=$1 g i
	local -a out=() head=() tail=() groups=()
	if [[ $a != *:* ]]; then
		IFS=. read -r -a out <<< "$a"
		echo "${out[*]}"
		return
	fi
	if [[ $a == *::* ]]; then
		[ -z "${a%%::*}" ] || IFS=: read -r -a head <<< "${a%%::*}"
		[ -z "${a#*::}" ] || IFS=: read -r -a tail <<< "${a#*::}"
	else
		IFS=: read -r -a head <<< "$a"
	fi
	groups=("${head[@]}")
	for ((i = ${#head[@]} + ${#tail[@]}; i < 8; i++)); do groups+=(0); done
	groups+=("${tail[@]}")
	for g in "${groups[@]}"; do
		out+=($((16#$g >> 8)) $((16#$g & 255)))
	done
	echo "${out[*]}"
}

# vrss_predict SRC DST FLOWS PER_FLOW DEV [--no-ports] [--effective]: the
# per-queue packet counts that vrss_traffic's flows (source port 20000+f
# to 7000+f) must give on DEV, queues 0 to the highest the table names.
# From the key and table `ethtool -x DEV` shows (--effective: the table in
# effect at the current width, vrss/effective_indir), through a Toeplitz
# hash of its own, bit by bit as Microsoft's verification text defines it:
# independent of the module's (and in bash: no Python start under TCG).
vrss_predict() {
	local src=$1 dst=$2 flows=$3 per=$4 dev=$5 ports=1 eff=0 a line next=0
	local i j o b f h k s bits max=0 out=
	local -a key=() table=() v=() win=() counts=() base=() data=()
	local -A share=()
	shift 5
	for a; do
		case $a in
		--no-ports) ports=0 ;;
		--effective) eff=1 ;;
		*) echo "vrss_predict: bad argument $a" >&2; return 1 ;;
		esac
	done
	while read -r line; do
		if [ $next = 1 ]; then
			IFS=: read -r -a key <<< "$line"
			next=0
			continue
		fi
		case $line in
		"RSS hash key:"*) next=1 ;;
		[0-9]*:*) read -r -a v <<< "${line#*:}"; table+=("${v[@]}") ;;
		esac
	done < <(ethtool -x "$dev")
	[ $eff = 0 ] || read -r -a table < "/sys/class/net/$dev/vrss/effective_indir"
	if [ ${#key[@]} != 40 ] || [ ${#table[@]} != 128 ]; then
		echo "vrss_predict: cannot read a 40-byte key and a 128-entry table of $dev" >&2
		return 1
	fi
	for i in "${!key[@]}"; do key[i]=$((16#${key[i]})); done
	base=($(vrss_addr_bytes "$src") $(vrss_addr_bytes "$dst"))
	bits=$(((${#base[@]} + 4 * ports) * 8))
	# The key's 32-bit window at each input bit.
	for ((i = 0; i < bits; i++)); do
		j=$((i >> 3)) o=$((i & 7))
		win[i]=$((((key[j] << 32 | key[j + 1] << 24 | key[j + 2] << 16 |
			    key[j + 3] << 8 | key[j + 4]) >> (8 - o)) & 0xffffffff))
	done
	for b in "${table[@]}"; do [ "$b" -le "$max" ] || max=$b; done
	for ((i = 0; i <= max; i++)); do counts[i]=0; done
	# The hash is the XOR of each input byte's share, so a byte value at a
	# position is worked out once: the addresses are the same for every
	# flow, the ports' high bytes too (bash under TCG is slow).
	for ((f = 0; f < flows; f++)); do
		data=("${base[@]}")
		[ $ports = 0 ] || data+=($(((20000 + f) >> 8)) $(((20000 + f) & 255))
					 $(((7000 + f) >> 8)) $(((7000 + f) & 255)))
		h=0
		for ((i = 0; i < ${#data[@]}; i++)); do
			k=$i.${data[i]}
			if [ -z "${share[$k]:-}" ]; then
				s=0
				for ((o = 0; o < 8; o++)); do
					((data[i] & (128 >> o))) && s=$((s ^ win[i * 8 + o]))
				done
				share[$k]=$s
			fi
			h=$((h ^ share[$k]))
		done
		b=${table[h & 127]}
		counts[b]=$((counts[b] + per))
	done
	echo "${counts[*]}"
}

# vrss_check_steering NAME SRC DST [--no-ports] [--effective] [--tcp]
# [--frags K SIZE]: 32 UDP flows of 10 datagrams each from SRC in the peer
# to DST on vrss0 land on exactly the queues an independent Toeplitz over
# vrss0's key and table (ethtool -x) predicts.  --no-ports: predict from the
# addresses only.  --effective: with the table in effect at the current
# width (sysfs).  --tcp: 10 TCP SYNs per flow instead (vrss_traffic syn;
# the guest answers each with a reset).  --frags: SIZE-byte datagrams, K
# fragments each.
vrss_check_steering() {
	local name=$1 src=$2 dst=$3 ports= eff= size=4 mult=1 want before got r
	local -a send=(send "$dst" 32 10)
	shift 3
	while [ $# -gt 0 ]; do
		case $1 in
		--no-ports) ports=--no-ports; shift ;;
		--tcp) send=(syn "$dst" 32 10); shift ;;
		--effective) eff=--effective; shift ;;
		--frags) mult=$2; size=$3; shift 3 ;;
		*) echo "vrss_check_steering: bad argument $1" >&2; return 1 ;;
		esac
	done
	want=$(vrss_predict "$src" "$dst" 32 $((10 * mult)) vrss0 $ports $eff) ||
		{ ktap_result "$name" 1; return; }
	before=$(vrss_queue_packets vrss0)
	r=$(vrss_rx_packets)
	if [ "${send[0]}" = syn ]; then
		[ "$mult" = 1 ] || { echo "vrss_check_steering: --tcp sends no fragments" >&2; ktap_result "$name" 1; return; }
	else
		send+=("$size")
	fi
	taskset -c "$VRSS_SEND_CPU" ip netns exec $VRSS_PEER "$VRSS_TRAFFIC" "${send[@]}" > /dev/null
	vrss_wait_count /sys/class/net/vrss0/statistics/rx_packets $((r + 320))
	got=$(vrss_queue_delta "$before" "$(vrss_queue_packets vrss0)")
	# The prediction lists queues up to the highest the table names.
	local -a w=($want) g=($got)
	while [ ${#w[@]} -lt ${#g[@]} ]; do w+=(0); done
	want=${w[*]}
	echo "# per-queue packets: predicted $want, got $got"
	ktap_result "$name" "$([ "$want" = "$got" ]; echo $?)"
}

# vrss_wait_count FILE TARGET [TIMEOUT_MS]: until the counter in FILE (a
# statistics file of sysfs) reaches TARGET, polled every 10 ms without a
# fork, for at most TIMEOUT_MS (2000); then 20 ms more, for the stack's
# own counters of the last frames.  Fails on timeout.  Instead of a fixed
# sleep after sending: as short as the guest allows, as long as it needs.
vrss_wait_count() {
	local file=$1 target=$2 limit=${3:-2000} v i fd rc=1
	exec {fd}<> <(:)
	for ((i = 0; i <= limit / 10; i++)); do
		read -r v < "$file"
		if [ "$v" -ge "$target" ]; then
			rc=0
			break
		fi
		read -r -t 0.01 -u "$fd" _
	done
	read -r -t 0.02 -u "$fd" _
	exec {fd}>&-
	return $rc
}

# vrss_wait_listen PORT: up to 3 s for an IPv4 TCP socket listening on
# PORT (/proc/net/tcp, polled without a fork): a server is up.
vrss_wait_listen() {
	local hex addr st i fd rc=1
	printf -v hex ':%04X' "$1"
	exec {fd}<> <(:)
	for ((i = 0; i < 300 && rc; i++)); do
		while read -r _ addr _ st _; do
			[[ $addr == *"$hex" && $st == 0A ]] && rc=0
		done < /proc/net/tcp
		[ $rc = 0 ] || read -r -t 0.01 -u "$fd" _
	done
	exec {fd}>&-
	return $rc
}

# vrss_rx_packets: vrss0's rx_packets (the sum of its queues' counters).
# vrss_queue_cpu I: the vCPU of vrss0's queue I (sysfs queue_cpus; "-"
# for none yet).
vrss_queue_cpu() {
	local -a c
	read -r -a c < /sys/class/net/vrss0/vrss/queue_cpus
	echo "${c[$1]}"
}

vrss_rx_packets() {
	local v
	read -r v < /sys/class/net/vrss0/statistics/rx_packets
	echo "$v"
}

# vrss_wait_ready FILE: up to 10 s for a helper to write "ready" there.
vrss_wait_ready() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready' "$1" 2> /dev/null && return 0
		sleep 0.05
	done
	echo "# no 'ready' in $1 after 10 s"
	return 1
}

# vrss_sys FILE: a file of /sys/class/net/vrss0/vrss/.
vrss_sys() {
	local v
	# No cat: under TCG an exec costs more than the read.  Fails when
	# the file cannot be opened (a read error gives an empty value).
	v=$(< "/sys/class/net/vrss0/vrss/$1") || return
	printf '%s\n' "$v"
}

# vrss_sys_set FILE VALUE: echo it there; the write's status is the result.
vrss_sys_set() {
	echo "$2" > "/sys/class/net/vrss0/vrss/$1"
}

# vrss_wait_state STATE TIMEOUT_MS [BELOW]: poll vrss0's state (and, with
# BELOW, its primary_load, which must also be under BELOW) every 10 ms;
# prints the milliseconds it took, fails on timeout. The loop forks nothing
# (bash's clock, read from sysfs, read -t on a pipe nobody writes as the
# sleep): a fork and exec every 10 ms is tens of percent of a TCG vCPU,
# enough to hold the gate it waits for above its threshold.
vrss_wait_state() {
	local want=$1 limit=$2 below=${3:-} start now s l=0 fd rc
	exec {fd}<> <(:)
	start=${EPOCHREALTIME/[.,]/}
	while :; do
		now=${EPOCHREALTIME/[.,]/}
		read -r s < /sys/class/net/vrss0/vrss/state
		[ -z "$below" ] || read -r l < /sys/class/net/vrss0/vrss/primary_load
		if [ "$s" = "$want" ] && { [ -z "$below" ] || [ "$l" -lt "$below" ]; }; then
			rc=0
			break
		fi
		if [ $((now - start)) -ge $((limit * 1000)) ]; then
			rc=1
			break
		fi
		read -r -t 0.01 -u "$fd" _
	done
	exec {fd}>&-
	echo $(((now - start) / 1000))
	return $rc
}

# vrss_wait_calm LOAD TIMEOUT_MS: single with primary_load below LOAD: a
# gate that is single and about to spread anyway is no baseline for a test
# that makes it spread.
vrss_wait_calm() {
	vrss_wait_state single "$2" "$1"
}

# vrss_klog_mark: where the kernel log ends now, for vrss_klog_clean (not
# dmesg -C: the log is the whole boot's, and the next test's too).
vrss_klog_mark() {
	VRSS_KLOG0=$(dmesg | wc -l)
}

# vrss_klog_clean: no lockdep or KASAN report logged since vrss_klog_mark.
# Those let the guest run on (a WARN or BUG panics it: panic_on_warn and
# oops=panic, which tools/vm/run fails; no test would see them).
vrss_klog_clean() {
	local r
	r=$(dmesg | tail -n +$((${VRSS_KLOG0:-0} + 1)) |
		grep -E 'possible (recursive locking|circular locking dependency|deadlock)|inconsistent lock state|lockdep|KASAN' |
		head -n 5)
	[ -z "$r" ] || { echo "$r" | sed 's/^/# /'; return 1; }
}

VRSS_TRACING=/sys/kernel/tracing

# vrss_trace_on EVENT...: enable vrss:EVENT tracepoints, empty the buffer.
vrss_trace_on() {
	local e
	[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING || return 1
	# With record-cmd on (the default), enabling any event hooks the
	# scheduler's sched_wakeup and sched_switch tracepoints, and
	# disabling it unhooks them: text patches of code every vCPU is
	# running, which QEMU's TCG sometimes gets wrong (an int3 oops in the
	# scheduler).  The events need no comms.
	echo 0 > $VRSS_TRACING/options/record-cmd
	for e in "$@"; do
		echo 1 > "$VRSS_TRACING/events/vrss/$e/enable" || return 1
	done
	echo > $VRSS_TRACING/trace
}

vrss_trace_off() {
	echo 0 > $VRSS_TRACING/events/vrss/enable 2>/dev/null
	echo > $VRSS_TRACING/trace 2>/dev/null
}

# vrss_hist_on SYSTEM/EVENT KEYS [FILTER]: count EVENT by KEYS (comma
# separated) in a histogram trigger, where FILTER holds.
vrss_hist_on() {
	[ -d $VRSS_TRACING/events ] || mount -t tracefs nodev $VRSS_TRACING || return 1
	echo 0 > $VRSS_TRACING/options/record-cmd
	echo "hist:keys=$2${3:+ if $3}" > "$VRSS_TRACING/events/$1/trigger"
}

# vrss_hist_off SYSTEM/EVENT KEYS [FILTER]: the counts, one line per key
# ("VALUE... COUNT"); then the trigger is gone.
vrss_hist_off() {
	local f=$VRSS_TRACING/events/$1
	awk '/^\{.*hitcount:/ { gsub(/[{},]/, " "); out = ""
		for (i = 1; i <= NF; i++) if ($i !~ /:$/) out = out (out == "" ? "" : " ") $i
		print out }' "$f/hist"
	echo "!hist:keys=$2${3:+ if $3}" > "$f/trigger"
}

# vrss_trace_lines EVENT: the EVENTs in the buffer, their fields only.
vrss_trace_lines() {
	grep " $1: " $VRSS_TRACING/trace | sed "s/^.* $1: //"
}

# vrss_trace_count EVENT: how many EVENTs the buffer holds; empties it.
vrss_trace_count() {
	grep -c " $1: " $VRSS_TRACING/trace
	echo > $VRSS_TRACING/trace
}

# --- the instruction meter (tools/vm/run --count-insns, tools/insn/) -------

VRSS_INSN=$VRSS_REPO/build/tools/vrss-insn

# vrss_insn_serve [CPU]: start the meter's mark server (vrss-insn serve)
# as a coprocess pinned to vCPU CPU (default 0): vrss_insn_window's marks
# then start no process, whose start and exit (page tables, exec's reads
# over 9p) would otherwise cost the window millions of instructions.
# vrss_insn_serve_stop ends it.
vrss_insn_serve() {
	coproc VRSS_INSN_SRV { exec taskset -c "${1:-0}" "$VRSS_INSN" serve; }
}

vrss_insn_serve_stop() {
	[ -n "${VRSS_INSN_SRV_PID:-}" ] || return 0
	kill "$VRSS_INSN_SRV_PID" 2> /dev/null
	wait "$VRSS_INSN_SRV_PID" 2> /dev/null
	VRSS_INSN_SRV_PID=
}

# vrss_insn_request REQ: the mark server's mark REQ (mark, profile).
vrss_insn_request() {
	local r
	echo "$1" >&"${VRSS_INSN_SRV[1]}" && read -r -u "${VRSS_INSN_SRV[0]}" r &&
		[ "$r" = ok ]
}

# vrss_insn_window PROF CMD...: run CMD between two profiling marks of the
# meter; the window's profile moves to PROF (tools/insn/profile.py reads
# it).  Sets vrss_insn_k and vrss_insn_u (the kernel's and user space's
# instructions on every vCPU in the window), vrss_insn_kcpu (the kernel's,
# per vCPU) and vrss_insn_us (the window's microseconds).  Fails if CMD or
# a mark does.  With the mark server running (vrss_insn_serve), nothing
# here starts a process between the marks.
vrss_insn_window() {
	local prof=$1 a b t0 i n lines
	shift
	t0=${EPOCHREALTIME/[.,]/}
	if [ -n "${VRSS_INSN_SRV_PID:-}" ]; then
		# The marks' lines read after the window, not in it.
		vrss_insn_request profile || return 1
		"$@" || return 1
		vrss_insn_request profile || return 1
		vrss_insn_us=$((${EPOCHREALTIME/[.,]/} - t0))
		lines=$(tail -n 2 "$VRSS_INSNS") || return 1
		a=${lines%%$'\n'*} b=${lines#*$'\n'}
	else
		a=$("$VRSS_INSN" mark --profile) || return 1
		"$@" || return 1
		b=$("$VRSS_INSN" mark --profile) || return 1
		vrss_insn_us=$((${EPOCHREALTIME/[.,]/} - t0))
	fi
	read -r -a a <<< "$a"
	read -r -a b <<< "$b"
	# Two marks in a row: no other process marked in the window.
	[ "${b[0]:-0}" = $((${a[0]:-0} + 1)) ] || {
		echo "# vrss_insn_window: the window's marks are not consecutive: ${a[0]:-none} ${b[0]:-none}"
		return 1
	}
	n=$(((${#b[@]} - 2) / 2))
	vrss_insn_k=0 vrss_insn_u=0 vrss_insn_kcpu=()
	for ((i = 0; i < n; i++)); do
		vrss_insn_kcpu[i]=$((b[2 + 2 * i] - a[2 + 2 * i]))
		vrss_insn_k=$((vrss_insn_k + vrss_insn_kcpu[i]))
		vrss_insn_u=$((vrss_insn_u + b[3 + 2 * i] - a[3 + 2 * i]))
	done
	# The profile since the previous profiling mark is not this window's.
	rm -f "$VRSS_INSNS.prof.${a[0]}"
	mv "$VRSS_INSNS.prof.${b[0]}" "$prof"
}
