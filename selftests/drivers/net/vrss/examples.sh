#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The boot integration README tells a guest admin to install
# (tools/examples/), run as shipped on the NIC a KVM guest has, with a
# DHCP server on the host side (busybox udhcpd, in the rig's namespace
# behind the NIC).  Only the interface name is changed: eth0 becomes the
# NIC's name here.  Run under `tools/vm/run --nic QUEUES` (make check
# does).  It checks that:
#  - vrss.conf, put in /etc/modprobe.d, gives modprobe its options;
#  - ifupdown (vrss.interfaces, with ifup/ifdown, no systemd) creates
#    vrss0 on the NIC with `modprobe vrss`, turns rxhash on, leases an
#    address from the host for vrss0 and none for the NIC, the host
#    reaches it through vrss0, and ifdown deletes vrss0 and ends the
#    DHCP client;
#  - vrss@.service passes `systemd-analyze verify`, and its commands
#    (ExecStartPre=, ExecStart=, ExecStop=) create vrss0 with rxhash on
#    and delete it;
#  - systemd-networkd with eth0-lower.network and vrss0.network leases
#    vrss0 an address from the host and leaves the NIC without any (no
#    IPv4, no IPv6 link-local), and the host reaches vrss0;
#  - on a NIC leased by its own DHCP client (ifupdown), vrss-inplace@.service
#    attaches vrss in place with rxhash on, the NIC keeps its lease, a new
#    DHCP request is answered through vrss, the host reaches the NIC; its
#    ExecStop= deletes vrss0; with the module missing, ExecStart= fails
#    and the NIC keeps its lease.
#
# systemd-networkd runs as it does in a container: with /sys read-only
# (in a mount namespace of its own) it does not wait for udev, which the
# guest does not run.  The guest's root is the host's, read-only: the
# module tree modprobe reads (vrss alone, depmod'ed), /etc/modprobe.d
# and dhclient's lease directory are this test's own, mounted over
# theirs for its duration.

source "$(dirname "$0")/lib.sh"
vrss_require_root
vrss_require_module
[ -n "${VRSS_NIC:-}" ] ||
	ktap_skip_all "no virtio-net NIC from the host: run under tools/vm/run --nic QUEUES"
for c in ifup dhclient systemd-analyze systemd-tmpfiles depmod; do
	command -v "$c" > /dev/null ||
		ktap_skip_all "$c missing (ifupdown, isc-dhcp-client, systemd, kmod: make deps)"
done
networkd=/lib/systemd/systemd-networkd
[ -x "$networkd" ] || ktap_skip_all "$networkd missing (systemd: make deps)"

nic=$VRSS_NIC
ex=$VRSS_REPO/tools/examples
host=$VRSS_REPO/tools/vm/host
kver=$(uname -r)
tmp=$(mktemp -d)
# The host's pool: addresses no other test uses.
POOL_START=198.51.100.100
POOL_END=198.51.100.109

ktap_plan 12

dhcpd='' nd_pid='' mounts=()
cleanup() {
	local m
	[ -z "$nd_pid" ] || kill "$nd_pid" 2> /dev/null
	[ -z "$dhcpd" ] || "$host" kill "$dhcpd" > /dev/null 2>&1
	pkill -f "dhclient.*vrss0" 2> /dev/null
	ip link del vrss0 2> /dev/null
	ip addr flush dev "$nic" 2> /dev/null
	ip link set "$nic" addrgenmode eui64 2> /dev/null
	for ((m = ${#mounts[@]} - 1; m >= 0; m--)); do
		umount "${mounts[m]}" 2> /dev/null
	done
	vrss_unload 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# over SRC DST: SRC mounted over DST for the test's duration.
over() {
	mount --bind "$1" "$2" && mounts+=("$2")
}

# addr4 DEV: DEV's IPv4 addresses, one per line.
addr4() {
	ip -4 -o addr show dev "$1" | awk '{ sub("/.*", "", $4); print $4 }'
}

# leased DEV: DEV's one IPv4 address, if it is from the host's pool.
leased() {
	local a
	a=$(addr4 "$1")
	[[ $a =~ ^198\.51\.100\.10[0-9]$ ]] && echo "$a"
}

# wait_leased DEV SECONDS: until DEV holds an address of the pool.
wait_leased() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		leased "$1" > /dev/null && return 0
		sleep 0.1
	done
	echo "$1 has no address of the host's pool after $2 s: $(addr4 "$1" | xargs)"
	return 1
}

# reached ADDR: the host pings ADDR through vrss0: answered, and vrss0
# received the requests.
reached() {
	local before after
	before=$(vrss_rx_packets)
	"$host" run ping -c 3 -i 0.2 -W 2 -q "$1" > "$tmp/ping" 2>&1 || {
		sed 's/^/host: /' "$tmp/ping"
		return 1
	}
	after=$(vrss_rx_packets)
	echo "host pinged $1: $(grep -o '[0-9]* received' "$tmp/ping"), vrss0 rx_packets +$((after - before))"
	[ $((after - before)) -ge 3 ]
}

# vrss0_ready: vrss0 on the NIC, up, rxhash on.
vrss0_ready() {
	ip -d link show vrss0 | grep -q "vrss0@$nic:.*UP" || {
		ip -d link show vrss0
		echo "vrss0 is not up on $nic"
		return 1
	}
	ethtool -k vrss0 | grep -qx 'receive-hashing: on' || {
		echo "rxhash is off on vrss0"
		return 1
	}
}

# no_addr DEV: DEV holds no IPv4 address and no IPv6 one, link-local
# included.
no_addr() {
	local a
	a=$(ip -o addr show dev "$1" | awk '{ print $4 }' | xargs)
	[ -z "$a" ] || { echo "$1 has addresses: $a"; return 1; }
}

# The module tree modprobe reads: vrss alone (it depends on nothing).
mkdir -p "$tmp/root/lib/modules/$kver/extra" "$tmp/modprobe.d" "$tmp/dhcp"
cp "$VRSS_KO" "$tmp/root/lib/modules/$kver/extra/"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ ! -e "/lib/modules/$kver/$f" ] || cp "/lib/modules/$kver/$f" "$tmp/root/lib/modules/$kver/"
done
cp -a /etc/modprobe.d/. "$tmp/modprobe.d/"
cp "$ex/vrss.conf" "$tmp/modprobe.d/vrss.conf"
{
	depmod -b "$tmp/root" "$kver" &&
	over "$tmp/root/lib/modules/$kver" "/lib/modules/$kver" &&
	over "$tmp/modprobe.d" /etc/modprobe.d &&
	over "$tmp/dhcp" /var/lib/dhcp
} || { echo "# cannot set up the module tree, /etc/modprobe.d or /var/lib/dhcp"; exit $KSFT_FAIL; }
mkdir -p /run/network /run/systemd/network

# The host's DHCP server, on its side of the NIC, in the foreground of a
# request the cleanup ends.
dhcpd=$("$host" start bash -c '
	d=$(mktemp -d)
	trap "rm -rf $d" EXIT
	printf "%s\n" "start $1" "end $2" "interface vrsstap0" "lease_file $d/leases" \
		"pidfile $d/pid" "option subnet 255.255.255.0" "option lease 600" > "$d/conf"
	: > "$d/leases"
	busybox udhcpd -f "$d/conf"' _ "$POOL_START" "$POOL_END")
ip link set "$nic" down
ip addr flush dev "$nic"

modprobe_conf() {
	modprobe -c | grep -x 'options vrss threshold=80 hysteresis=20 interval_ms=100'
}
ktap_check "vrss.conf in /etc/modprobe.d: modprobe has its options" modprobe_conf

# --- ifupdown -------------------------------------------------------------

sed "s/\<eth0\>/$nic/g" "$ex/vrss.interfaces" > "$tmp/interfaces"
ifupdown_up() {
	local a
	vrss_unload 2> /dev/null
	ifup -i "$tmp/interfaces" "$nic" vrss0 || { echo "ifup failed"; return 1; }
	grep -q '^vrss ' /proc/modules || { echo "vrss not loaded by pre-up modprobe"; return 1; }
	[ "$(cat /sys/module/vrss/parameters/threshold)" = 80 ] || return 1
	vrss0_ready || return 1
	wait_leased vrss0 30 || return 1
	a=$(leased vrss0)
	[ -z "$(addr4 "$nic")" ] || { echo "$nic has IPv4 addresses: $(addr4 "$nic" | xargs)"; return 1; }
	pgrep -f "dhclient.*vrss0" > /dev/null || { echo "no dhclient for vrss0"; return 1; }
	echo "vrss0@$nic up, rxhash on, leased $a; $nic without IPv4"
	reached "$a"
}
ktap_check "ifupdown: ifup creates vrss0 (pre-up modprobe), rxhash on, a lease for vrss0 alone, the host reaches it" \
	ifupdown_up

ifupdown_down() {
	ifdown -i "$tmp/interfaces" vrss0 "$nic" || { echo "ifdown failed"; return 1; }
	! ip link show vrss0 > /dev/null 2>&1 || { echo "vrss0 still there after ifdown"; return 1; }
	! pgrep -f "dhclient.*vrss0" > /dev/null || { echo "dhclient for vrss0 still running"; return 1; }
	[ -z "$(addr4 "$nic")" ] || { echo "$nic has IPv4 addresses after ifdown"; return 1; }
}
ktap_check "ifupdown: ifdown deletes vrss0 and ends its DHCP client" ifupdown_down

# --- systemd ----------------------------------------------------------------

sed "s/\<eth0\>/$nic/g" "$ex/vrss@.service" > "$tmp/vrss@$nic.service"
unit_verify() {
	systemd-analyze verify "$tmp/vrss@$nic.service"
}
ktap_check "vrss@.service: systemd-analyze verify finds nothing" unit_verify

# unit_cmds KEY...: the unit's command lines for KEY=, %i expanded, in
# order, without systemd's prefixes (-, @, +, !).
unit_cmds() {
	local key
	for key; do
		sed -n "s/^$key=[-@+!]*//p" "$ex/vrss@.service"
	done | sed "s/%i/$nic/g"
}
unit_run() {
	local c
	while IFS= read -r c; do
		echo "+ $c"
		# shellcheck disable=SC2086 # the unit's words, as systemd splits them
		$c || return 1
	done < <(unit_cmds "$@")
}
unit_start() {
	vrss_unload 2> /dev/null
	unit_run ExecStartPre ExecStart || return 1
	grep -q '^vrss ' /proc/modules || { echo "vrss not loaded"; return 1; }
	vrss0_ready
}
ktap_check "vrss@.service: ExecStartPre= and ExecStart= create vrss0 on $nic, up, rxhash on" unit_start

cp "$ex/vrss0.network" /run/systemd/network/20-vrss0.network
sed "s/\<eth0\>/$nic/g" "$ex/eth0-lower.network" > "/run/systemd/network/10-$nic.network"
# What systemd-tmpfiles makes for networkd at boot (its state files).
systemd-tmpfiles --create /usr/lib/tmpfiles.d/systemd-network.conf 2> /dev/null
# As in a container: /sys read-only, so no udev to wait for.  Not a job
# of this shell (whose end would print "Terminated").
nd_pid=$(unshare -m --propagation private sh -c \
	'mount -o remount,bind,ro /sys && exec "$0" > "$1" 2>&1 < /dev/null &
	echo $!' "$networkd" "$tmp/networkd.log")
networkd_lease() {
	local a
	wait_leased vrss0 40 || { sed 's/^/networkd: /' "$tmp/networkd.log"; return 1; }
	a=$(leased vrss0)
	vrss0_ready || return 1
	no_addr "$nic" || return 1
	echo "vrss0 leased $a by systemd-networkd; $nic without addresses"
	reached "$a"
}
ktap_check "systemd-networkd: vrss0 leased from the host, $nic without addresses, the host reaches vrss0" \
	networkd_lease

networkd_alive() {
	kill -0 "$nd_pid" 2> /dev/null || { sed 's/^/networkd: /' "$tmp/networkd.log"; return 1; }
	! grep -Ei "vrss0.*(fail|error)" "$tmp/networkd.log" || return 1
}
ktap_check "systemd-networkd runs on, no error about vrss0" networkd_alive
kill "$nd_pid" 2> /dev/null
for ((i = 0; i < 50; i++)); do
	kill -0 "$nd_pid" 2> /dev/null || break
	sleep 0.1
done
nd_pid=''

unit_stop() {
	unit_run ExecStop || return 1
	! ip link show vrss0 > /dev/null 2>&1 || { echo "vrss0 still there"; return 1; }
}
ktap_check "vrss@.service: ExecStop= deletes vrss0" unit_stop

# --- in place, on a NIC leased by its own DHCP client ----------------------

# The guest's own configuration, untouched by vrss: ifupdown leases the
# NIC itself.  vrss-inplace@.service attaches vrss in place on top of it.
printf '%s\n' "auto $nic" "iface $nic inet dhcp" > "$tmp/nic.interfaces"
sed -e "s/\<eth0\>/$nic/g" -e "s|/usr/sbin/|$VRSS_REPO/tools/|" "$ex/vrss-inplace@.service" \
	> "$tmp/vrss-inplace@$nic.service"
inplace_cmds() {
	local key
	for key; do
		sed -n "s/^$key=[-@+!]*//p" "$tmp/vrss-inplace@$nic.service"
	done | sed "s/%i/$nic/g"
}
inplace_run() {
	local c
	while IFS= read -r c; do
		echo "+ $c"
		# shellcheck disable=SC2086 # the unit's words, as systemd splits them
		$c || return 1
	done < <(inplace_cmds "$@")
}
inplace_start() {
	local a
	systemd-analyze verify "$tmp/vrss-inplace@$nic.service" || return 1
	vrss_unload 2> /dev/null
	ifup -i "$tmp/nic.interfaces" "$nic" || { echo "ifup failed"; return 1; }
	wait_leased "$nic" 30 || return 1
	a=$(leased "$nic")
	inplace_run ExecStart || return 1
	[ "$(cat /sys/class/net/vrss0/vrss/attach)" = inplace ] || { echo "vrss0 not in place"; return 1; }
	ethtool -k vrss0 | grep -qx 'receive-hashing: on' || { echo "rxhash is off on vrss0"; return 1; }
	[ "$(leased "$nic")" = "$a" ] && no_addr vrss0 || return 1
	echo "$nic leased $a by its own dhclient; vrss0 in place, rxhash on, without addresses"
	reached "$a"
}
ktap_check "vrss-inplace@.service on a NIC leased by ifupdown: in place, rxhash on, the NIC's lease kept, the host reaches it" \
	inplace_start

inplace_renew() {
	local a
	a=$(leased "$nic")
	# The lease renewed through vrss in place: a second dhclient run asks
	# the server again on the NIC and gets the same address.
	dhclient -1 -pf "$tmp/renew.pid" -lf "$tmp/dhcp/renew.leases" "$nic" || { echo "no lease"; return 1; }
	[ -f "$tmp/renew.pid" ] && kill "$(cat "$tmp/renew.pid")" 2> /dev/null
	echo "renewed on $nic: $(leased "$nic") (was $a)"
	[ "$(leased "$nic")" = "$a" ] && reached "$a"
}
ktap_check "... a DHCP request on the NIC answered through vrss in place, the same address" inplace_renew

inplace_stop() {
	local a
	a=$(leased "$nic")
	inplace_run ExecStop || return 1
	! ip link show vrss0 > /dev/null 2>&1 || { echo "vrss0 still there"; return 1; }
	[ "$(leased "$nic")" = "$a" ] || { echo "$nic lost its lease $a"; return 1; }
	"$host" run ping -c 2 -i 0.2 -W 2 -q "$a" > /dev/null
}
ktap_check "vrss-inplace@.service: ExecStop= deletes vrss0, the NIC keeps its lease and answers" inplace_stop

# A kernel without its vrss build: the module cannot be found.
inplace_missing() {
	local a rc=0
	a=$(leased "$nic")
	vrss_unload 2> /dev/null
	rm "$tmp/root/lib/modules/$kver/extra/vrss.ko" && depmod -b "$tmp/root" "$kver" || return 1
	if inplace_run ExecStart; then
		echo "ExecStart= succeeded without a module"
		rc=1
	fi
	! ip link show vrss0 > /dev/null 2>&1 || rc=1
	[ "$(leased "$nic")" = "$a" ] || { echo "$nic lost its lease $a"; rc=1; }
	"$host" run ping -c 2 -i 0.2 -W 2 -q "$a" > /dev/null || rc=1
	ifdown -i "$tmp/nic.interfaces" "$nic" > /dev/null 2>&1
	return $rc
}
ktap_check "... with the module missing, ExecStart= fails and the NIC keeps its lease and answers" inplace_missing

ktap_finish
