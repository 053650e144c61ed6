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
#    receive handler taken), a DHCP address, no module to load;
#  - vrss-attach moves the NIC's IPv4 and IPv6 addresses, its routes in a
#    second table, the policy rules that name it and its permanent
#    neighbour to vrss0, and a new connection from the host works;
#  - vrss-detach puts all of it back: `ip address`, `ip route show table
#    all`, `ip rule` and `ip neigh` (both families) as before;
#  - --try SECONDS undoes itself unless confirmed, and vrss-attach
#    --confirm from another process keeps it;
#  - the connection lived through all of that, no request unanswered.

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
v6=$(sysctl -n net.ipv6.conf."$nic".disable_ipv6)

ktap_plan 18

echo_pid='' stream=''
cleanup() {
	[ -z "$stream" ] || "$host" kill "$stream" > /dev/null 2>&1
	[ -z "$echo_pid" ] || kill -- -"$echo_pid" 2> /dev/null
	ip link del vrss0 2> /dev/null
	ip link del vrssv0 2> /dev/null
	ip link del vrssv2 2> /dev/null
	ip rule del pref 1000 2> /dev/null
	ip rule del pref 1001 2> /dev/null
	ip -6 rule del pref 1002 2> /dev/null
	ip route flush table 100 2> /dev/null
	ip -6 route flush table 100 2> /dev/null
	ip addr flush dev "$nic"
	vrss_unload 2> /dev/null
	sysctl -qw net.ipv6.conf."$nic".disable_ipv6="$v6" 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
vrss_load || exit $KSFT_FAIL

# The configuration a guest admin would have on eth0, both families.
sysctl -qw net.ipv6.conf."$nic".disable_ipv6=0
host_mac=$("$host" run cat /sys/class/net/vrsstap0/address)
ip -b - <<EOF
link set $nic up
addr add $GUEST/24 dev $nic
addr add 198.51.100.9/24 dev $nic label $nic:sec
addr add 2001:db8::1/64 dev $nic nodad
neigh replace $HOST lladdr $host_mac nud permanent dev $nic
route add 203.0.113.0/24 via $HOST dev $nic table 100
route add 2001:db8:5::/64 via 2001:db8::2 dev $nic table 100
rule add pref 1000 from $GUEST lookup 100
rule add pref 1001 iif $nic lookup 100
EOF
ip -6 rule add pref 1002 oif "$nic" lookup 100

# snapshot: what vrss-detach must restore (DAD's transient flags aside).
snapshot() {
	local f
	for f in 4 6; do
		ip -"$f" -o addr show dev "$nic" | sed 's/^[0-9]*: //; s/ tentative//; s/ dadfailed//' |
			sed -E 's/(valid|preferred)_lft [0-9]+sec/\1_lft N/g'
		ip -"$f" route show table all | sort
		ip -"$f" rule show
		ip -"$f" neigh show nud permanent
	done
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
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	echo "# $out" | head -n 3
	[ $rc != 0 ] && grep -q -- "$pat" <<< "$out" && [ ! -e /sys/class/net/vrss0 ] &&
		[ "$(snapshot)" = "$before" ]
	ktap_result "$name" $?
}

# The SSH session's stand-in: the guest's echo server, the host's
# client, open from here to the end (stopped there).
setsid "$VRSS_TRAFFIC" tcpecho $GUEST > "$tmp/echo" &
echo_pid=$!
vrss_wait_ready "$tmp/echo" || exit $KSFT_FAIL
stream=$("$host" start "$VRSS_TRAFFIC" tcprr $GUEST $stream_secs) || exit $KSFT_FAIL
# Under way: a request answered before anything moves.
for ((i = 0; i < 100; i++)); do
	[ "$(ss -Htn state established "( sport = :7000 )" | wc -l)" -ge 1 ] && break
	sleep 0.1
done
before=$(snapshot)

refused "refused: no such device" "no such device" "$attach" vrssnone0
refused "refused: not Ethernet (lo)" "not an Ethernet device" "$attach" lo
ip link add vrssv0 type veth peer name vrssv1
ip link add link vrssv0 name vrss0 type vrss
before_vrss=$before
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
before=$before_vrss
if modinfo vrss > /dev/null 2>&1; then
	ktap_result "refused: no module to load (a vrss module is installed here)" 4
else
	vrss_unload
	refused "refused: no vrss module to load" "no vrss module" "$attach" "$nic"
	vrss_load || exit $KSFT_FAIL
fi

# Attach: everything on vrss0.
out=$("$attach" "$nic" 2>&1)
rc=$?
echo "# $out"
ktap_result "vrss-attach $nic" $rc
a=$(ip -o addr show dev vrss0; ip route show table 100; ip -6 route show table 100
    ip rule; ip -6 rule; ip neigh show dev vrss0 nud permanent)
printf '%s\n' "$a" | sed 's/^/#   /'
for want in "inet $GUEST/24" "inet 198.51.100.9/24 .*vrss0:sec" "inet6 2001:db8::1/64" \
	    "203.0.113.0/24 via $HOST dev vrss0" "2001:db8:5::/64 via 2001:db8::2 dev vrss0" \
	    "1001:.*iif vrss0 lookup 100" "1002:.*oif vrss0 lookup 100" "$HOST lladdr $host_mac"; do
	grep -q -- "$want" <<< "$a" || { echo "# not on vrss0: $want"; rc=1; }
done
left=$(ip -o addr show dev "$nic" scope global)
[ -z "$left" ] || { echo "# left on $nic: $left"; rc=1; }
ktap_result "$nic's addresses, table 100's routes, its rules and neighbour are vrss0's, none left on $nic" $rc
out=$("$host" run "$VRSS_TRAFFIC" tcprr $GUEST 1 2>&1)
echo "# a new connection from the host: $out"
grep -q "lost 0" <<< "$out"
ktap_result "a connection made after the attach works" $?

out=$("$detach" 2>&1)
rc=$?
echo "# $out"
ktap_result "vrss-detach" $rc
ktap_check "... vrss0 gone" test ! -e /sys/class/net/vrss0
unchanged "... addresses, routes in every table, rules and neighbours as before the attach"

# --try without a confirmation: undone.
out=$("$attach" "$nic" --try 3 < /dev/null 2>&1)
rc=$?
echo "# $out"
[ $rc = 0 ] && [ -e /sys/class/net/vrss0 ]
ktap_result "vrss-attach --try 3: attached" $?
for ((i = 0; i < 100; i++)); do
	[ -e /sys/class/net/vrss0 ] || break
	sleep 0.1
done
ktap_check "... undone after 3 s, unconfirmed" test ! -e /sys/class/net/vrss0
unchanged "... and everything as before"

# --try, then confirmed from another process: kept.
"$attach" "$nic" --try 3 < /dev/null > /dev/null 2>&1
out=$("$attach" --confirm 2>&1)
rc=$?
echo "# $out"
sleep 4
[ $rc = 0 ] && [ -e /sys/class/net/vrss0 ]
ktap_result "vrss-attach --try 3, then --confirm: still attached after 4 s" $?
"$detach" > /dev/null 2>&1
unchanged "... vrss-detach: as before"

# Ended (SIGTERM), it reports.
out=$("$host" kill "$stream" 2>&1)
stream=''
echo "# the connection through all of it: $out"
read -r _ n _ lost _ slow _ max <<< "$out"
[ "${lost:-1}" = 0 ] && [ "${n:-0}" -gt 100 ]
ktap_result "the open connection carried on: no request unanswered (${slow:-?} over 200 ms, max ${max:-?} ms)" $?
ktap_finish
