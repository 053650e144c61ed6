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

VRSS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)
# The module built for the running kernel by `make modules-all`.
VRSS_KO=${VRSS_KO:-$VRSS_REPO/build/$(uname -r)/drivers/net/vrss/vrss.ko}

_ktap_n=0
_ktap_fail=0
_ktap_pass=0
_ktap_skip=0

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
	local name=$1 rc=$2
	_ktap_n=$((_ktap_n + 1))
	case $rc in
	0) echo "ok $_ktap_n $name"; _ktap_pass=$((_ktap_pass + 1)) ;;
	4) echo "ok $_ktap_n $name # SKIP"; _ktap_skip=$((_ktap_skip + 1)) ;;
	*) echo "not ok $_ktap_n $name"; _ktap_fail=$((_ktap_fail + 1)) ;;
	esac
}

# ktap_check NAME CMD...: run CMD as one case, its output as diagnostics.
ktap_check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
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
	echo $(($(cat /proc/sys/kernel/tainted) & ~(1 << 12 | 1 << 13)))
}

vrss_require_root() {
	[ "$(id -u)" = 0 ] || ktap_skip_all "must run as root (tools/vm/run does)"
}

vrss_require_module() {
	[ -f "$VRSS_KO" ] || ktap_skip_all "no $VRSS_KO: run make modules-all"
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
