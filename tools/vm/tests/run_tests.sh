#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tests of tools/vm/run, on the host (each case boots a guest): exit
# codes pass through, stdout and stderr stay apart, the repository is
# writable and the host root is not, and every way a guest can go wrong (a
# panic, a WARN, a hung command) gives a non-zero exit; --nic gives the
# guest a virtio-net NIC whose host end lives in a namespace of the run's
# own, gone afterwards, and --nic-model one whose RSS table the guest's
# ethtool -X steers by; --count-insns counts a loop of known length
# exactly.  KTAP output.
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
run=$repo/tools/vm/run
# The instruction meter and its guest side (make check builds them first).
make -s -C "$repo" build/tools/vrss-insn.so build/tools/vrss-insn || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fail=$((fail + 1))
	fi
}

# expect_rc WANT NAME RUN-ARGS...: tools/vm/run RUN-ARGS exits with WANT.
expect_rc() {
	local want=$1 name=$2 rc
	shift 2
	"$run" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] || { echo "# got exit $rc, want $want"; sed 's/^/# /' "$tmp/err" | tail -n 5; }
	result $(( rc != want )) "$name"
}

# expect_fail NAME RUN-ARGS...: tools/vm/run RUN-ARGS exits non-zero.
expect_fail() {
	local name=$1 rc
	shift
	"$run" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	echo "# exit $rc"
	result $(( rc == 0 )) "$name"
}

echo "TAP version 13"
echo "1..32"

# A guest side that checks its NIC: QUEUES combined channels, the
# documented MAC, then host->guest ping through tools/vm/host, and the
# host end in the namespace it was promised.
nic_check='q=$1
[ "$(ethtool -l "$VRSS_NIC" | awk "/^Combined:/ { v = \$2 } END { print v }")" = "$q" ] || { echo "channels: $(ethtool -l "$VRSS_NIC")"; exit 1; }
[ "$(cat /sys/class/net/$VRSS_NIC/address)" = 52:54:00:12:34:56 ] || exit 2
ip link set "$VRSS_NIC" up && ip addr add 198.51.100.1/24 dev "$VRSS_NIC" || exit 3
tools/vm/host run ping -c 3 -W 5 198.51.100.1 || exit 4
[ "$(tools/vm/host run ip netns identify)" = "$VRSS_NIC_NETNS" ] || exit 5'
# Several properties per boot: a boot is most of a case's time.  6.12,
# with a 2-queue NIC: exit 7 only once the NIC checked out (the check's
# output in a file: stdout and stderr are the test's).
marker=.rig-test-$$
ns=vrss-rig-test-$$-2
"$run" --nic 2 --netns $ns -- bash -c "echo to-stdout; echo to-stderr >&2
	pwd > $marker && nproc >> $marker && ! touch /usr/rig-test-$$ 2>/dev/null || exit 9
	bash -c '$nic_check' _ 2 > $marker-nic.log 2>&1 || exit 10
	! build/tools/vrss-insn mark 2> $marker-insn || exit 11
	kill -0 \$(cat /run/vrss-job/timestamps.pid) || exit 12
	exit 7" > "$tmp/out" 2> "$tmp/err"
rc=$?
echo "# exit $rc"
[ $rc != 10 ] || sed 's/^/# /' "$marker-nic.log"
result $(( rc != 7 )) "6.12: exit 7 passes through"
[ $rc != 12 ]
result $? "the warm-up's socket holds the receive timestamp key on (no text patch under CMD)"
[ "$(cat "$tmp/out")" = to-stdout ] && grep -qx to-stderr "$tmp/err" &&
	! grep -q to-stderr "$tmp/out"
result $? "stdout and stderr are CMD's, kept apart"
[ "$(sed -n 1p "$marker" 2>/dev/null)" = "$PWD" ] && [ "$(sed -n 2p "$marker")" = 2 ]
result $? "runs in the current directory, repo writable, host root read-only, 2 vCPUs"
[ $rc = 7 ]
result $? "--nic 2: 2 queue pairs in the guest, host->guest ping from namespace $ns"
! ip netns list | grep -q "^$ns\b"
result $? "--nic 2: namespace $ns deleted after the run"
[ $rc = 7 ] && grep -q 'is the meter on' "$marker-insn"
result $? "without --count-insns, a mark fails and says why"
rm -f "$marker" "$marker-nic.log" "$marker-insn"

# Exit 1 only once the vCPUs and the memory are right (9 if not).  The
# meter: a user loop of 2N instructions between two marks on one vCPU
# reads 2N plus the 5 of the marks' own blocks (the loop's setup and the
# second mark's), whatever the host's load; 3 vCPUs in each mark line.
expect_rc 1 "6.1: exit 1 passes through; --cpus 3 --mem 1G give 3 vCPUs and 1 GiB" \
	--kernel 6.1 --cpus 3 --mem 1G --count-insns -- \
	sh -c '[ "$(nproc)" = 3 ] && [ "$(awk "/MemTotal/ { print \$2 }" /proc/meminfo)" -lt 1100000 ] || exit 9
		for n in 1000 3000000; do build/tools/vrss-insn loop $n; done > '"$marker-insn"' || exit 9
		build/tools/vrss-insn mark >> '"$marker-insn"' || exit 9; exit 1'
sed 's/^/# /' "$marker-insn" 2> /dev/null
awk 'NR <= 2 { n++; if ($2 != 2000 && $2 != 6000000 || $4 < $2 || $4 > $2 + 20) bad = 1 }
     NR == 3 { n++; if (NF != 8 || $3 <= 0) bad = 1 }
     END { exit bad || n != 3 }' "$marker-insn" 2> /dev/null
result $? "--count-insns: a loop of 2N user instructions reads 2N (+ at most 20) on 6.1, for N = 1000 and 3000000"
rm -f "$marker-insn"

# A boot that never reaches CMD (here: a limit no boot can meet) is
# stopped and tried three times, then fails with a message, well before
# --timeout.
start=$(date +%s)
VRSS_VM_BOOT_LIMIT=1 expect_fail "a guest that never starts CMD fails the run" --timeout 300 -- true
[ $(($(date +%s) - start)) -lt 60 ] && grep -q 'hung while booting, three times' "$tmp/err" &&
	[ "$(grep -c 'hung while booting (no CMD after 1 s); booting again' "$tmp/err")" = 2 ]
result $? "... after three boots of about the boot limit each, saying so"

# A kernel that never reaches the initramfs's /init (here: a shell for
# init, waiting on the console) is stopped after half the boot limit.
start=$(date +%s)
VRSS_VM_BOOT_LIMIT=4 VRSS_VM_BOOT_OPTS="mitigations=off rdinit=/bin/busybox -- sh" \
	expect_fail "a guest whose kernel never reaches /init fails the run" --timeout 300 -- true
[ $(($(date +%s) - start)) -lt 40 ] && grep -q 'hung while booting, three times' "$tmp/err" &&
	[ "$(grep -c 'hung while booting (its kernel not at /init after 2 s); booting again' "$tmp/err")" = 2 ]
result $? "... after three boots of about half the boot limit each, saying so"

expect_fail "a panic (sysrq c) fails the run" -- sh -c 'echo c > /proc/sysrq-trigger; sleep 5'
grep -q 'sysrq triggered crash' "$tmp/err"
result $? "the panic is shown on stderr"

kver=$("$repo"/tools/scripts/kernels.sh | sed -n "s/^6.12 //p")
# Built inside the repository: the guest sees it there (not the host's /tmp).
wdir=$repo/build/rig-warn-$kver
mkdir -p "$wdir"
cp "$here"/warn/* "$wdir/"
if make -s -C "/lib/modules/$kver/build" M="$wdir" modules > "$tmp/build.log" 2>&1; then
	expect_fail "a WARN fails the run even though CMD exits 0" -- \
		sh -c "insmod $wdir/vrss_warn_test.ko && rmmod vrss_warn_test; exit 0"
	grep -q 'deliberate WARN' "$tmp/err"
	result $? "the WARN is shown on stderr"
else
	sed 's/^/# /' "$tmp/build.log"
	result 1 "a WARN fails the run even though CMD exits 0 (test module did not build)"
fi

# A hung CMD, with a host-side command running (--nic): killed at
# --timeout, and nothing left behind.  The markers: CMD did start (a boot
# is about 5 of the 18 s, more on a loaded host), and the host-side
# command ran (the request's id).
ns=vrss-rig-test-$$-hung
start=$(date +%s)
expect_rc 124 "a hung CMD (a host-side command running) is killed at --timeout" \
	--nic 1 --netns $ns --timeout 18 -- \
	sh -c "touch $marker-hung && id=\$(tools/vm/host start sleep 600) &&
		while [ ! -s /run/vrss-job/host/\$id.pid ]; do sleep 0.1; done &&
		echo \$id > $marker-nic && exec sleep 600"
elapsed=$(($(date +%s) - start))
echo "# killed after $elapsed s"
[ -e "$marker-hung" ] && [ $elapsed -lt 43 ]
result $? "the hung guest (CMD started) is gone within the timeout plus 25 s"
[ -s "$marker-nic" ] && ! ip netns list | grep -q "^$ns\b" && ! pgrep -f "sleep 600" > /dev/null
result $? "--nic: namespace and host-side command gone after a timeout"
rm -f "$marker-hung" "$marker-nic"

# --- --nic ---------------------------------------------------------------

# One queue pair on 6.1, whose exit 0 passes through (no boot of its own
# for that).
ns=vrss-rig-test-$$-1
expect_rc 0 "6.1: exit 0 passes through; --nic 1: 1 queue pairs in the guest, host->guest ping from namespace $ns" \
	--kernel 6.1 --nic 1 --netns $ns --timeout 120 -- bash -c "$nic_check" _ 1
! ip netns list | grep -q "^$ns\b"
result $? "--nic 1: namespace $ns deleted after the run"

rc=0
for bad in 0 17 x 1x -1; do
	start=$(date +%s%N)
	"$run" --nic "$bad" -- true > /dev/null 2> "$tmp/err"
	r=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	echo "# --nic '$bad': exit $r in $ms ms: $(cat "$tmp/err")"
	[ "$r" = 2 ] && [ "$ms" -lt 2000 ] && grep -q 'QUEUES must be' "$tmp/err" || rc=1
done
result $rc "--nic: bad QUEUES refused with a message before anything boots"

ns=vrss-rig-test-$$-taken
ip netns add $ns
"$run" --nic 1 --netns $ns -- true > /dev/null 2> "$tmp/err"
r=$?
echo "# exit $r: $(cat "$tmp/err")"
ip netns list | grep -q "^$ns\b" && [ "$r" = 2 ] && grep -q 'exists already' "$tmp/err"
result $? "--netns: a namespace that exists is refused, and left alone"
ip netns del $ns

# Without a series' headers nothing that builds or boots per kernel may
# pass as if there were no kernels to do it for (else make check could
# pass with no guest suite run).
empty=$tmp/modules
mkdir -p "$empty/6.12.1-amd64/build"
out=$(VRSS_MODULES_ROOT=$empty "$repo/tools/scripts/kernels.sh" 2> "$tmp/err")
r=$?
echo "# kernels.sh, 6.12 headers only: exit $r, '$out': $(cat "$tmp/err")"
[ "$r" = 1 ] && [ -z "$out" ] && grep -q 'no 6.1 kernel headers' "$tmp/err"
result $? "kernels.sh: a series without headers fails, and lists no kernel"
VRSS_MODULES_ROOT=$empty make -s -C "$repo" modules-all > "$tmp/out" 2>&1
r=$?
echo "# make modules-all with it: exit $r"
[ "$r" != 0 ] && ! grep -q BUILD "$tmp/out"
result $? "make modules-all fails then, building nothing"

# Another flavour of a series (cloud, rt) is not that series' kernel.
mkdir -p "$tmp/flav/6.1.0-57-amd64/build" "$tmp/flav/6.1.0-57-cloud-amd64/build" \
	"$tmp/flav/6.1.0-58-rt-amd64/build" "$tmp/flav/6.12.1+deb12-amd64/build" \
	"$tmp/flav/6.12.1+deb12-cloud-amd64/build" "$tmp/flav/6.12.2+deb12-rt-amd64/build"
gen=$(VRSS_MODULES_ROOT=$tmp/flav "$repo/tools/scripts/kernels.sh" | xargs)
cld=$(VRSS_MODULES_ROOT=$tmp/flav "$repo/tools/scripts/kernels.sh" --cloud | xargs)
echo "# kernels.sh: '$gen'; --cloud: '$cld'"
[ "$gen" = "6.1 6.1.0-57-amd64 6.12 6.12.1+deb12-amd64" ] &&
	[ "$cld" = "6.1-cloud 6.1.0-57-cloud-amd64 6.12-cloud 6.12.1+deb12-cloud-amd64" ]
result $? "kernels.sh lists the generic flavour, --cloud the cloud one, never rt"

# A cloud kernel (no 9p): its shares over virtio-fs, the host root
# read-only from the host's side too (a remount rw in the guest cannot
# write it), the repository writable.
"$run" --kernel 6.12-cloud --nic 1 -- bash -c "
	case \$(uname -r) in *-cloud-amd64) ;; *) exit 9 ;; esac
	[ \"\$(findmnt -n -o FSTYPE /)\" = virtiofs ] || exit 10
	[ \"\$(findmnt -n -o FSTYPE '$repo')\" = virtiofs ] || exit 11
	mount -o remount,rw / || exit 12
	! touch /usr/rig-test-$$ 2> /dev/null || exit 13
	echo ok > $marker || exit 14
	tools/vm/host run true || exit 15
	exit 7" > "$tmp/out" 2> "$tmp/err"
rc=$?
echo "# exit $rc: $(tail -n 3 "$tmp/err" | xargs)"
[ $rc = 7 ] && [ "$(cat "$marker" 2> /dev/null)" = ok ] && [ ! -e /usr/rig-test-$$ ]
result $? "6.12-cloud: boots with virtio-fs shares, host root read-only even remounted rw, repo writable, --nic"
rm -f "$marker" /usr/rig-test-$$
expect_rc 3 "6.1-cloud: boots (virtio-fs), exit 3 passes through" --kernel 6.1-cloud -- \
	sh -c 'case $(uname -r) in *-cloud-amd64) exit 3 ;; esac; exit 9'

# --nic-model: a NIC with an RSS table the guest writes, steering the
# host's frames exactly: with every entry on one queue, the 400 datagrams
# of many flows (a socket, so a source port, each; paced, so that a TCG
# guest's ring keeps up) reach that queue and none the other (at most 3
# strays: ARP).  virtio-net's table on 6.1
# (per-queue packets in ethtool -S), igb's on 6.12.
rss_check='q() { ethtool -S "$VRSS_NIC" | awk -v k="rx_queue_$1_packets:" "\$1 == k { print \$2 }"; }
ip link set "$VRSS_NIC" up && ip addr add 198.51.100.1/24 dev "$VRSS_NIC" || exit 3
[ "$(ethtool -x "$VRSS_NIC" | grep -cE "^ +[0-9]+: ")" = 16 ] || { ethtool -x "$VRSS_NIC"; exit 4; }
for w in 0 1; do
	o=$((1 - w))
	if [ $w = 0 ]; then ethtool -X "$VRSS_NIC" weight 1 0; else ethtool -X "$VRSS_NIC" weight 0 1; fi || exit 5
	a=$(q $w) b=$(q $o)
	tools/vm/host run bash -c "for i in \$(seq 400); do echo x > /dev/udp/198.51.100.1/\$((7000 + i % 16)); [ \$((i % 20)) != 0 ] || sleep 0.05; done" || exit 6
	sleep 0.5
	a=$(($(q $w) - a)) b=$(($(q $o) - b))
	echo "every entry on queue $w: queue $w +$a, queue $o +$b"
	[ $a -ge 400 ] && [ $b -le 3 ] || exit 7
done
exit 8'
for m in "6.1 virtio-rss" "6.12 igb"; do
	read -r k model <<< "$m"
	"$run" --kernel "$k" --nic 2 --nic-model "$model" -- bash -c "
		[ \"\$VRSS_NIC_MODEL\" = $model ] || exit 2
		bash -c '$rss_check'" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	sed 's/^/# /' "$tmp/out"
	echo "# exit $rc: $(tail -n 2 "$tmp/err" | xargs)"
	[ $rc = 8 ]
	result $? "--nic 2 --nic-model $model ($k): ethtool -X on the guest's NIC steers the host's frames exactly"
done
"$run" --nic 1 --nic-model e1000 -- true > /dev/null 2> "$tmp/err"
r=$?
[ $r = 2 ] && grep -q 'nic-model: virtio, virtio-rss' "$tmp/err"
result $? "--nic-model: an unknown model is refused with a message"

echo "# Totals: pass:$((n - fail)) fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
