#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tests of tools/vm/run, on the host (each case boots a guest): exit
# codes pass through, stdout and stderr stay apart, the repository is
# writable and the host root is not, and every way a guest can go wrong (a
# panic, a WARN, a hung command) gives a non-zero exit.  KTAP output.
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
run=$repo/tools/vm/run
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
echo "1..13"

expect_rc 0 "6.12: exit 0 passes through" -- true
expect_rc 0 "6.1: exit 0 passes through" --kernel 6.1 -- true
expect_rc 1 "exit 1 passes through" -- false
expect_rc 7 "exit 7 passes through" -- sh -c 'exit 7'

"$run" -- sh -c 'echo to-stdout; echo to-stderr >&2' > "$tmp/out" 2> "$tmp/err"
[ "$(cat "$tmp/out")" = to-stdout ] && grep -qx to-stderr "$tmp/err" &&
	! grep -q to-stderr "$tmp/out"
result $? "stdout and stderr are CMD's, kept apart"

marker=.rig-test-$$
"$run" -- sh -c "pwd > $marker && nproc >> $marker && ! touch /usr/rig-test-$$ 2>/dev/null"
rc=$?
[ $rc = 0 ] && [ "$(sed -n 1p "$marker" 2>/dev/null)" = "$PWD" ] &&
	[ "$(sed -n 2p "$marker")" = 2 ]
result $? "runs in the current directory, repo writable, host root read-only, 2 vCPUs"
rm -f "$marker"

expect_rc 0 "--cpus 3 --mem 1G give 3 vCPUs" --cpus 3 --mem 1G -- \
	sh -c '[ "$(nproc)" = 3 ] && [ "$(awk "/MemTotal/ { print \$2 }" /proc/meminfo)" -lt 1100000 ]'

expect_fail "a panic (sysrq c) fails the run" -- sh -c 'echo c > /proc/sysrq-trigger; sleep 5'
grep -q 'sysrq triggered crash' "$tmp/err"
result $? "the panic is shown on stderr"

kver=$(ls -1 /boot/vmlinuz-6.12.* | sort -V | tail -n 1)
kver=${kver#/boot/vmlinuz-}
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

start=$(date +%s)
expect_rc 124 "a hung CMD is killed at --timeout" --timeout 20 -- sleep 600
elapsed=$(($(date +%s) - start))
echo "# killed after $elapsed s"
[ $elapsed -lt 45 ]
result $? "the hung guest is gone within the timeout plus 25 s"

echo "# Totals: pass:$((n - fail)) fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
