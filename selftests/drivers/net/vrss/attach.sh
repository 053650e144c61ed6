#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrss-attach and vrss-detach (tools/vrss-attach) on the NIC a KVM guest
# has, with an SSH session's stand-in open through it: a TCP connection
# from the host (vrss_traffic tcprr, a request every 10 ms) to an echo
# server in the guest.  Run under `tools/vm/run --nic QUEUES` (make check
# does).  It checks that:
#  - bad input is refused with its message and changes nothing: no such
#    device, not Ethernet, an existing vrss0, a device with an upper (its
#    receive handler taken), a DHCP client (an address's finite lifetime,
#    a systemd-networkd lease file, a dhclient pid file), a multipath
#    route with a nexthop on the NIC (IPv4, IPv6), a nexthop object on it,
#    a label too long for vrss0, no module to load;
#  - an IPv6 batch that fails after the IPv4 one went through is undone,
#    both families, and vrss0 deleted: nothing changed;
#  - vrss-attach moves the NIC's IPv4 addresses (a secondary with a
#    label, a peer address) and IPv6 ones (one with nodad, one with
#    lifetimes and DAD), its routes in a second table (an IPv6 one with
#    its lifetime), the policy rules that name it and its permanent
#    neighbours (both families) to vrss0, leaves another device's routes
#    with the same keys alone, the IPv6 addresses usable at once (not
#    tentative) with their flags as they were, vrss0 receives the traffic
#    and a new connection from the host works;
#  - vrss-detach puts all of it back: `ip address`, `ip route show table
#    all`, `ip rule`, `ip neigh` (both families) and `ip nexthop` as before;
#  - --try SECONDS is undone by its undo process unless confirmed, an
#    earlier --try's undo process leaves a later --try alone, and
#    vrss-attach --confirm from another process keeps it (each waits for
#    the undo process itself, its pid from the state file, to end);
#  - --help prints the usage on stdout (status 0), options go before or
#    after DEV, --dry-run prints the plan and changes nothing;
#  - vrss-attach --in-place moves nothing: vrss0 in place with no
#    address, the NIC's configuration as it was, a connection to the
#    NIC's address steered by vrss0; vrss-detach deletes it;
#  - the connection lived through all of that: no request unanswered,
#    none slower than 2 s.

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
[ -n "${VRSS_NIC:-}" ] ||
	ktap_skip_all "no virtio-net NIC from the host: run under tools/vm/run --nic QUEUES"

nic=$VRSS_NIC
GUEST=198.51.100.1
HOST=198.51.100.2
attach=$VRSS_REPO/tools/vrss-attach
detach=$VRSS_REPO/tools/vrss-detach
host=$VRSS_REPO/tools/vm/host
tmp=$(mktemp -d)
export VRSS_STATE_DIR=$tmp/state
stream_secs=600
max_ms_bound=2000
v6=$(sysctl -n net.ipv6.conf."$nic".disable_ipv6)
ifindex=$(cat /sys/class/net/"$nic"/ifindex)
leases=/run/systemd/netif/leases
dhclient_pid=/run/dhclient.$nic.pid

ktap_plan 35

echo_pid='' stream='' undo_pids='' sleeper='' made_leases='' dummy_loaded='' upid='' old=''
# shellcheck disable=SC2317 # the EXIT trap runs it
cleanup() {
	local p
	[ -z "$stream" ] || "$host" kill "$stream" > /dev/null 2>&1
	[ -z "$echo_pid" ] || kill -- -"$echo_pid" 2> /dev/null
	for p in $undo_pids $sleeper; do kill "$p" 2> /dev/null; done
	rm -f "$leases/$ifindex" "$dhclient_pid"
	[ -z "$made_leases" ] || rmdir "$leases" 2> /dev/null
	ip link del vrss0 2> /dev/null
	ip link del vrssv0 2> /dev/null
	ip link del vrssv2 2> /dev/null
	ip nexthop del id 4242 2> /dev/null
	for p in 1000 1001; do
		while ip rule del pref "$p" 2> /dev/null; do :; done
	done
	while ip -6 rule del pref 1002 2> /dev/null; do :; done
	ip route flush table 100 2> /dev/null
	ip -6 route flush table 100 2> /dev/null
	ip neigh del "$HOST" dev "$nic" 2> /dev/null
	ip -6 neigh del 2001:db8::2 dev "$nic" 2> /dev/null
	ip addr flush dev "$nic"
	ip link del vrssd0 2> /dev/null
	[ -z "$dummy_loaded" ] || rmmod dummy 2> /dev/null
	vrss_unload 2> /dev/null
	sysctl -qw net.ipv6.conf."$nic".disable_ipv6="$v6" 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck disable=SC2119 # no module parameters
vrss_load || exit "$KSFT_FAIL"

# Another device, whose routes share keys with the NIC's: a dummy (no
# dummy0 of the module's own).
if [ ! -d /sys/module/dummy ]; then
	modprobe dummy numdummies=0 || exit "$KSFT_FAIL"
	dummy_loaded=1
fi
ip link add vrssd0 type dummy || exit "$KSFT_FAIL"
# A new device takes default's disable_ipv6, which an earlier test may
# have left on.
sysctl -qw net.ipv6.conf.vrssd0.disable_ipv6=0

# The configuration a guest admin would have on eth0, both families.
sysctl -qw net.ipv6.conf."$nic".disable_ipv6=0
host_mac=$("$host" run cat /sys/class/net/vrsstap0/address)
ip -b - <<EOF || exit "$KSFT_FAIL"
link set vrssd0 up
addr add 198.18.0.1/24 dev vrssd0
addr add 2001:db8:9::1/64 dev vrssd0 nodad
link set $nic up
addr add $GUEST/24 dev $nic
addr add 198.51.100.9/24 dev $nic label $nic:sec
addr add 198.51.100.33 peer 198.51.100.34/32 dev $nic
addr add 2001:db8::1/64 dev $nic nodad
addr add 2001:db8::11/64 dev $nic valid_lft 3600 preferred_lft 3000
neigh replace $HOST lladdr $host_mac nud permanent dev $nic
neigh replace 2001:db8::2 lladdr $host_mac nud permanent dev $nic
route add 203.0.113.0/24 via $HOST dev $nic table 100
route add 198.19.0.0/24 via 198.18.0.2 dev vrssd0 table 100
route append 198.19.0.0/24 via $HOST dev $nic table 100
route add 2001:db8:5::/64 via 2001:db8::2 dev $nic table 100
route add 2001:db8:6::/64 via 2001:db8::2 dev $nic table 100 expires 3600
route add 2001:db8:7::/64 dev vrssd0 metric 1024 table 100
route append 2001:db8:7::/64 dev $nic metric 1024 table 100
rule add pref 1000 from $GUEST lookup 100
rule add pref 1001 iif $nic lookup 100
EOF
ip -6 rule add pref 1002 oif "$nic" lookup 100

# snapshot: what vrss-detach must restore (DAD's transient flags and
# lifetimes' seconds aside).
snapshot() {
	local f
	for f in 4 6; do
		ip -"$f" -o addr show dev "$nic" | sed 's/^[0-9]*: //; s/ tentative//; s/ dadfailed//' |
			sed -E 's/(valid|preferred)_lft [0-9]+sec/\1_lft N/g'
		ip -"$f" route show table all | sed -E 's/expires [0-9]+sec/expires N/' | sort
		ip -"$f" rule show
		ip -"$f" neigh show nud permanent
	done
	ip nexthop show 2> /dev/null
}

# unchanged NAME: a case, the snapshot as taken before.
unchanged() {
	local now
	now=$(snapshot)
	[ "$now" = "$before" ] || diff <(echo "$before") <(echo "$now") | sed 's/^/# /'
	ktap_result "$1" "$([ "$now" = "$before" ]; echo $?)"
}

# refused NAME PATTERN CMD...: CMD fails, saying PATTERN, nothing changed.
refused() {
	local name=$1 pat=$2 out rc now
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | head -n 6 | sed 's/^/# /'
	now=$(snapshot)
	[ "$now" = "$before" ] || diff <(echo "$before") <(echo "$now") | sed 's/^/# /'
	[ $rc != 0 ] && grep -q -- "$pat" <<< "$out" && [ ! -e /sys/class/net/vrss0 ] &&
		[ "$now" = "$before" ]
	ktap_result "$name" $?
}

# ended PID SECONDS: PID (not a child) ends within SECONDS.
ended() {
	local i st
	for ((i = 0; i < $2 * 10; i++)); do
		{ read -r _ _ st _ < "/proc/$1/stat"; } 2> /dev/null || return 0
		[ "$st" != Z ] || return 0
		sleep 0.1
	done
	return 1
}

# try_pid VAR: VAR gets the pid of the pending --try's undo process
# (from the state file); the cleanup ends it if it is still there.
try_pid() {
	local p=''
	read -r _ p < "$VRSS_STATE_DIR/$nic.try"
	undo_pids+=" $p"
	printf -v "$1" '%s' "$p"
}

# comment TEXT [INDENT]: TEXT's lines as KTAP diagnostics.
comment() {
	local l
	while IFS= read -r l; do echo "# ${2:-}$l"; done <<< "$1"
}

# ms: milliseconds since the epoch.
ms() {
	echo $((${EPOCHREALTIME/[.,]/} / 1000))
}

# The SSH session's stand-in: the guest's echo server, the host's
# client, open from here to the end (stopped there).
setsid "$VRSS_TRAFFIC" tcpecho $GUEST > "$tmp/echo" &
echo_pid=$!
vrss_wait_ready "$tmp/echo" || exit "$KSFT_FAIL"
stream=$("$host" start "$VRSS_TRAFFIC" tcprr $GUEST $stream_secs) || exit "$KSFT_FAIL"
# Under way: a request answered before anything moves.
for ((i = 0; i < 100; i++)); do
	[ "$(ss -Htn state established "( sport = :7000 )" | wc -l)" -ge 1 ] && break
	sleep 0.1
done
# DAD over (the NIC's link-local and 2001:db8::11): its local routes in.
for ((i = 0; i < 100; i++)); do
	[ -z "$(ip -6 addr show dev "$nic" tentative)" ] && break
	sleep 0.1
done
before=$(snapshot)
before_all=$before

refused "refused: no such device" "no such device" "$attach" vrssnone0
refused "refused: not Ethernet (lo)" "not an Ethernet device" "$attach" lo
ip link add vrssv0 type veth peer name vrssv1
ip link add link vrssv0 name vrss0 type vrss
before=$(snapshot)
out=$("$attach" "$nic" 2>&1)
rc=$?
echo "# $out"
[ $rc != 0 ] && grep -q "exists already" <<< "$out" && [ "$(snapshot)" = "$before" ] &&
	[ "$(cat /sys/class/net/vrss0/iflink)" = "$(cat /sys/class/net/vrssv0/ifindex)" ]
ktap_result "refused: vrss0 exists already (it stays on its own lower)" $?
ip link del vrss0
modprobe macvlan 2> /dev/null
if ip link add link vrssv0 name vrssv2 type macvlan 2> /dev/null; then
	refused "refused: a device with an upper (macvlan): its receive handler is taken" \
		"upper device" "$attach" vrssv0
	ip link del vrssv2
else
	ktap_result "refused: a device with an upper (no macvlan module here)" 4
fi
ip addr add 192.0.2.77/24 dev vrssv0 valid_lft 600 preferred_lft 600
before=$(snapshot)
refused "refused: an address from DHCP (finite lifetime)" "DHCP" "$attach" vrssv0
ip link del vrssv0
before=$before_all

# DHCP clients that leave the address's lifetime infinite.
[ -d "$leases" ] || { mkdir -p "$leases" && made_leases=1; }
echo "# vrss test lease" > "$leases/$ifindex"
refused "refused: a systemd-networkd DHCP lease for $nic" "lease file $leases/$ifindex" "$attach" "$nic"
rm -f "$leases/$ifindex"
sleep 600 &
sleeper=$!
echo "$sleeper" > "$dhclient_pid"
refused "refused: a dhclient pid file for $nic, its process running" "$dhclient_pid" "$attach" "$nic"
kill "$sleeper"
sleeper=''
rm -f "$dhclient_pid"

# Multipath routes (ip route show dev does not list them) and nexthop
# objects with a nexthop on the NIC.
ip route add 198.19.1.0/24 nexthop via $HOST dev "$nic" nexthop via 198.18.0.2 dev vrssd0
before=$(snapshot)
refused "refused: an IPv4 multipath route through $nic and another device" "multipath" "$attach" "$nic"
ip route del 198.19.1.0/24
ip -6 route add 2001:db8:8::/64 nexthop via 2001:db8::2 dev "$nic" nexthop via 2001:db8:9::2 dev vrssd0
before=$(snapshot)
refused "refused: an IPv6 multipath route through $nic and another device" "multipath" "$attach" "$nic"
ip -6 route del 2001:db8:8::/64
if ip nexthop add id 4242 via $HOST dev "$nic" 2> /dev/null; then
	before=$(snapshot)
	refused "refused: a nexthop object on $nic" "nexthop objects on $nic" "$attach" "$nic"
	ip nexthop del id 4242
else
	ktap_result "refused: a nexthop object (none here)" 4
fi

# A label of 15 characters on the NIC that vrss0's name would lengthen.
label=$nic:
while [ ${#label} -lt 15 ]; do label+=x; done
if [ ${#nic} -lt 5 ]; then
	ip addr add 198.51.100.10/24 dev "$nic" label "$label"
	before=$(snapshot)
	refused "refused: the label $label, longer than 15 characters as vrss0's" "longer than 15" "$attach" "$nic"
	ip addr del 198.51.100.10/24 dev "$nic"
else
	ktap_result "refused: a label too long for vrss0 (none: $nic's name is not shorter than vrss0)" 4
fi
before=$before_all

if modinfo vrss > /dev/null 2>&1; then
	ktap_result "refused: no module to load (a vrss module is installed here)" 4
else
	vrss_unload
	refused "refused: no vrss module to load" "cannot load the vrss module" "$attach" "$nic"
	# shellcheck disable=SC2119 # no module parameters
vrss_load || exit "$KSFT_FAIL"
fi

# The IPv6 batch fails after the IPv4 one went through: a rule it adds is
# there already (left by a crash, say).  Both undone, vrss0 deleted.
ip -6 rule add pref 1002 oif vrss0 lookup 100
before=$(snapshot)
out=$("$attach" "$nic" 2>&1)
rc=$?
comment "$out"
[ $rc != 0 ] && grep -Eq "undoing the [1-9][0-9]* IPv6 and [1-9][0-9]* IPv4 commands" <<< "$out" &&
	grep -q "undone: $nic's configuration as it was" <<< "$out" && grep -q "vrss0 deleted" <<< "$out" &&
	[ ! -e /sys/class/net/vrss0 ] && [ "$(snapshot)" = "$before" ]
ktap_result "an IPv6 batch failing after the IPv4 one: both undone, vrss0 deleted, nothing changed" $?
ip -6 rule del pref 1002 oif vrss0 lookup 100
before=$before_all

# Attach: everything on vrss0.
t0=$(ms)
out=$("$attach" "$nic" 2>&1)
rc=$?
rx0=$(cat /sys/class/net/vrss0/statistics/rx_packets 2> /dev/null)
echo "# $out"
echo "# $(($(ms) - t0)) ms"
ktap_result "vrss-attach $nic" $rc
conf=$(ip -o addr show dev vrss0; ip route show table 100; ip -6 route show table 100
       ip rule; ip -6 rule; ip neigh show dev vrss0 nud permanent; ip -6 neigh show dev vrss0 nud permanent)
comment "$conf" "  "
for want in "inet $GUEST/24" "inet 198.51.100.9/24 .*vrss0:sec" "inet 198.51.100.33 peer 198.51.100.34/32" \
	    "inet6 2001:db8::1/64" "inet6 2001:db8::11/64 .*valid_lft [0-9]*sec preferred_lft [0-9]*sec" \
	    "203.0.113.0/24 via $HOST dev vrss0" "198.19.0.0/24 via $HOST dev vrss0" \
	    "2001:db8:5::/64 via 2001:db8::2 dev vrss0" "2001:db8:6::/64 via 2001:db8::2 dev vrss0 .*expires [0-9]*sec" \
	    "2001:db8:7::/64 dev vrss0" "1001:.*iif vrss0 lookup 100" "1002:.*oif vrss0 lookup 100" \
	    "$HOST lladdr $host_mac" "2001:db8::2 lladdr $host_mac"; do
	grep -q -- "$want" <<< "$conf" || { echo "# not on vrss0: $want"; rc=1; }
done
left=$(ip -o addr show dev "$nic" scope global; ip neigh show dev "$nic" nud permanent
       ip -6 neigh show dev "$nic" nud permanent)
[ -z "$left" ] || { echo "# left on $nic: $left"; rc=1; }
ktap_result "$nic's addresses, table 100's routes, its rules and neighbours are vrss0's, none left on $nic" $rc
o=$(ip route show table 100; ip -6 route show table 100)
grep -q "198.19.0.0/24 via 198.18.0.2 dev vrssd0" <<< "$o" && grep -q "2001:db8:7::/64 dev vrssd0" <<< "$o"
ktap_result "another device's routes with the same keys are still there" $?
o=$(ip -6 -o addr show dev vrss0 scope global)
t=$(ip -6 addr show dev vrss0 scope global tentative)
[ -z "$t" ] || echo "# tentative on vrss0: $t"
[ -z "$t" ] && grep -q "2001:db8::1/64 .*nodad" <<< "$o" && ! grep -q "2001:db8::11/64 .*nodad" <<< "$o"
ktap_result "IPv6 addresses usable at once on vrss0 (none tentative), with their flags as on $nic" $?
out=$("$host" run "$VRSS_TRAFFIC" tcprr $GUEST 1 2>&1)
echo "# a new connection from the host: $out"
grep -q "lost 0" <<< "$out"
ktap_result "a connection made after the attach works" $?
rx1=$(cat /sys/class/net/vrss0/statistics/rx_packets)
echo "# vrss0 rx_packets $rx0 -> $rx1"
[ -n "$rx0" ] && [ $((rx1 - rx0)) -ge 50 ]
ktap_result "the traffic went through vrss0 (rx_packets rose by $((rx1 - ${rx0:-0})))" $?

t0=$(ms)
out=$("$detach" 2>&1)
rc=$?
echo "# $out"
echo "# $(($(ms) - t0)) ms"
ktap_result "vrss-detach" $rc
ktap_check "... vrss0 gone" test ! -e /sys/class/net/vrss0
unchanged "... addresses, routes in every table, rules, neighbours and nexthops as before the attach"

# --try without a confirmation: undone by its undo process.
t0=$(ms)
out=$("$attach" "$nic" --try 3 < /dev/null 2>&1)
rc=$?
echo "# $out"
try_pid upid
[ $rc = 0 ] && [ -e /sys/class/net/vrss0 ] && [ -n "$upid" ] &&
	tr '\0' ' ' < "/proc/$upid/cmdline" | grep -q -- "--undo-after 3 $nic "
ktap_result "vrss-attach --try 3: attached, its undo process (pid $upid) waiting" $?
ended "$upid" 30
rc=$?
echo "# the undo process ended $(($(ms) - t0)) ms after the attach began"
out=$("$attach" --confirm 2>&1)
echo "# a --confirm now: $out"
[ $rc = 0 ] && [ ! -e /sys/class/net/vrss0 ] && grep -q "too late" <<< "$out"
ktap_result "... unconfirmed, undone when its undo process ended (a --confirm now: too late)" $?
unchanged "... and everything as before"

# An earlier --try's undo process must leave a later --try alone: it
# checks its nonce.  Then --confirm from another process keeps that one.
# The first --try's 8 s outlast a detach and an attach (about 2 s each
# under TCG here): its undo process wakes to the second's state file.
"$attach" "$nic" --try 8 < /dev/null > /dev/null 2>&1
try_pid old
"$detach" > /dev/null 2>&1
"$attach" "$nic" --try 12 < /dev/null > /dev/null 2>&1
try_pid upid
rc=0
[ -d "/proc/$old" ] || { echo "# the first undo process ended before the second attach was done"; rc=1; }
ended "$old" 30 && [ -e /sys/class/net/vrss0 ] && [ -e "$VRSS_STATE_DIR/$nic.try" ] || rc=1
ktap_result "an earlier --try's undo process woke to a later --try's nonce and left it alone" $rc
out=$("$attach" --confirm 2>&1)
rc=$?
echo "# $out"
t0=$(ms)
ended "$upid" 30 || rc=1
echo "# its undo process ended $(($(ms) - t0)) ms after the confirmation"
[ $rc = 0 ] && [ -e /sys/class/net/vrss0 ]
ktap_result "vrss-attach --try 12, then --confirm: still attached after its undo process ended" $?
"$detach" > /dev/null 2>&1
unchanged "... vrss-detach: as before"

# --help on stdout with status 0; options before DEV and after it;
# --dry-run prints the plan and changes nothing.
out=$("$attach" --help 2> /dev/null)
rc=$?
[ $rc = 0 ] && grep -q "^usage: vrss-attach" <<< "$out"
ktap_result "vrss-attach --help: the usage on stdout, status 0" $?
out=$("$attach" --dry-run "$nic" --name vrss0 2>&1)
rc=$?
comment "$(head -n 3 <<< "$out")"
[ $rc = 0 ] && grep -q "^ip link add link $nic name vrss0 up type vrss" <<< "$out" &&
	grep -q "^ip -4 address replace $GUEST/24 .*dev vrss0" <<< "$out" &&
	grep -q "dry run: nothing changed" <<< "$out" && [ ! -e /sys/class/net/vrss0 ] &&
	[ "$(snapshot)" = "$before" ]
ktap_result "vrss-attach --dry-run DEV --name vrss0: the plan printed, nothing changed" $?

# In place: nothing moves; the NIC keeps its configuration, vrss0 none.
out=$("$attach" "$nic" --in-place 2>&1)
rc=$?
echo "# $out"
[ $rc = 0 ] && [ "$(cat /sys/class/net/vrss0/vrss/attach 2> /dev/null)" = inplace ] &&
	[ -z "$(ip -o addr show dev vrss0)" ] && [ "$(snapshot)" = "$before" ]
ktap_result "vrss-attach DEV --in-place: vrss0 in place with no address, $nic's configuration unchanged" $?
rx0=$(cat /sys/class/net/vrss0/statistics/rx_packets 2> /dev/null)
ethtool -K vrss0 rxhash on
out=$("$host" run "$VRSS_TRAFFIC" tcprr $GUEST 1 2>&1)
rx1=$(cat /sys/class/net/vrss0/statistics/rx_packets 2> /dev/null)
echo "# a new connection from the host: $out; vrss0 steered ${rx0:-?} -> ${rx1:-?}"
grep -q "lost 0" <<< "$out" && [ -n "$rx0" ] && [ $((rx1 - rx0)) -ge 50 ]
ktap_result "... a connection to $nic's address works, its frames steered by vrss0" $?
out=$("$detach" 2>&1)
rc=$?
echo "# $out"
[ $rc = 0 ] && [ ! -e /sys/class/net/vrss0 ]
ktap_result "vrss-detach of vrss0 in place: deleted" $?
unchanged "... and everything as before"

# Ended (SIGTERM), it reports.
out=$("$host" kill "$stream" 2>&1)
stream=''
echo "# the connection through all of it: $out"
read -r _ n _ lost _ slow _ max <<< "$out"
[ "${lost:-1}" = 0 ] && [ "${n:-0}" -gt 100 ] && [ -n "${max:-}" ] && [ "${max%.*}" -le $max_ms_bound ]
ktap_result "the open connection carried on: no request unanswered, the slowest ${max:-?} ms (at most $max_ms_bound; ${slow:-?} over 200 ms)" $?
ktap_finish
