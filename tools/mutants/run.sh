#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [--keep] [ID...]: make mutants.  Mutation testing of the
# selftests: each mutant of tools/mutants/mutants.txt breaks one promise
# of Documentation/networking/vrss.rst in the module.  It is applied to a
# scratch copy of the module's sources (/tmp/vrss-mutant-ID), built for
# its kernel, and loaded in a guest that runs the selftests that should
# catch it.  One line per mutant, then a summary:
#
#   KILLED        the tests failed, or the guest crashed, WARNed or hung
#   SURVIVED      the tests passed: they do not hold that promise
#   NOT-APPLIED   its snippet is no longer in the source (update mutants.txt)
#   BUILD-FAILED  it does not build (a harness bug, not a kill)
#   ERROR         no verdict: the guest never ran the tests, did not find
#                 the module, or a test skipped as a whole
#
# Exits 1 if a mutant survived that mutants.txt does not mark accepted,
# or if any mutant got no verdict.  Logs: build/mutants/ID.log (the diff
# and the build) and ID.guest.log (the guest's output), results.tsv.
#
#   run.sh --list [ID...]       the mutants, where they run, their tests
#   run.sh --check [ID...]      apply each to a copy in memory and print the
#                               diff: no build, no guest (cheap)
#   run.sh --baseline [ID...]   the same tests on the unmutated module, once
#                               per configuration the mutants use: a kill
#                               means something only where these pass
#   --keep                      keep the scratch copies
#
# The guest sees this repository (tools/vm/run mounts it at its own path),
# so the mutant's vrss.ko is copied under build/mutants/ and VRSS_KO,
# which tools/vm/run passes into the guest and lib.sh honours, points the
# selftests at it.  The selftests, build/ksft/ and the tools are this
# tree's: make mutants runs make ksft tools and ynl.sh first.  Guests run
# one at a time (the rig's lock), so this must not run beside make check,
# whose make ksft would replace build/ksft/ under it.
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
here=tools/mutants
out=$repo/build/mutants

usage() {
	echo "usage: $0 [--list | --check | --baseline] [--keep] [ID...]" >&2
	exit 2
}

die() {
	echo "mutants: $*" >&2
	exit 2
}

mut() {
	python3 "$here/mutants.py" "$@"
}

mode=run
keep=0
ids=()
while [ $# -gt 0 ]; do
	case $1 in
	--list) mode=list ;;
	--check) mode=check ;;
	--baseline) mode=baseline ;;
	--keep) keep=1 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) ids+=("$1") ;;
	esac
	shift
done

case $mode in
list) exec python3 "$here/mutants.py" list "${ids[@]}" ;;
check) exec python3 "$here/mutants.py" check "${ids[@]}" ;;
esac

# --- before anything builds or boots ------------------------------------------

selected=$(mut ids "${ids[@]}") || exit $?
# Every snippet still where it was: a mutant that rotted fails here, loudly,
# not after half an hour of guests.
# shellcheck disable=SC2086 # ids: words
mut check -q $selected || exit 1
kernels=$(tools/scripts/kernels.sh) || exit 2
ksft=build/ksft/tools/testing/selftests/drivers/net/vrss
if [ ! -x "$ksft/vrss_traffic" ] || [ ! -x build/tools/vrss-insn ]; then
	die "no $ksft/vrss_traffic or build/tools/vrss-insn: run make ksft tools (make mutants does)"
fi
# The guests must load the mutant, not build/<kver>/'s module: were VRSS_KO
# no longer honoured, every mutant would survive.
seen=$(VRSS_KO=/nonexistent/vrss.ko bash -c 'source "$1" > /dev/null 2>&1; echo "$VRSS_KO"' \
	_ selftests/drivers/net/vrss/lib.sh)
[ "$seen" = /nonexistent/vrss.ko ] ||
	die "selftests/drivers/net/vrss/lib.sh does not take the module from \$VRSS_KO (it said '$seen')"
mkdir -p "$out" || exit 2

# A mutant's fields (mutants.py fields ID, eval'd).
m_spec='' m_kernel='' m_cpus='' m_nic='' m_rig='' m_env=''
m_tests='' m_timeout='' m_accepted='' m_where=''
scratch=
cleanup() {
	[ "$keep" = 1 ] || [ -z "$scratch" ] || rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

kver_of() {
	awk -v s="$1" '$1 == s { print $2 }' <<< "$kernels"
}

# build NAME KVER [ID]: the module's sources (the working tree's, as the
# selftests are) copied to /tmp/vrss-mutant-NAME, mutant ID applied (none:
# the module as it is), built for KVER; its vrss.ko copied to $ko.  The
# log is $log.  Returns 0, or 10 (not applied) or 11 (did not build).
build() {
	local name=$1 kver=$2 id=${3:-}
	cleanup
	scratch=/tmp/vrss-mutant-$name
	rm -rf "$scratch" && mkdir -p "$scratch" || return 11
	# Only what build-module.sh links into its output tree, and itself.
	git ls-files -z -co --exclude-standard -- Kbuild drivers include \
		tools/scripts/build-module.sh |
		tar -c --null --ignore-failed-read -T - -f - 2>> "$log" | tar -x -C "$scratch" -f - ||
		return 11
	if [ -n "$id" ]; then
		echo "=== the mutation" >> "$log"
		mut apply "$id" "$scratch" >> "$log" 2>&1 || return 10
	fi
	echo "=== build for $kver" >> "$log"
	# Its own output tree under the scratch copy; KDIR from the
	# environment (make's) would name one kernel for both series.
	env -u KDIR -u VRSS_BUILD_OUT "$scratch/tools/scripts/build-module.sh" "$kver" >> "$log" 2>&1 ||
		return 11
	ko=$out/$name/$kver/vrss.ko
	mkdir -p "${ko%/*}" && cp "$scratch/build/$kver/drivers/net/vrss/vrss.ko" "$ko" || return 11
}

# unit ID: the host unit tests (tests/unit) against the mutant, for a
# pure-C promise no guest can exercise (a vCPU's steal time under TCG);
# "VERDICT reason".
unit() {
	local id=$1 scratch=/tmp/vrss-mutant-unit-$1
	rm -rf "$scratch" && mkdir -p "$scratch" || { echo "ERROR no scratch tree"; return; }
	git ls-files -z -co --exclude-standard -- include tests/unit tools/bench/toeplitz4.h |
		tar -c --null -T - -f - 2>> "$log" | tar -x -C "$scratch" -f - ||
		{ echo "ERROR cannot copy the tree"; return; }
	echo "=== the mutation" >> "$log"
	mut apply "$id" "$scratch" >> "$log" 2>&1 || { echo "NOT-APPLIED its snippet is not in the source: $log"; return; }
	if ! make -s -C "$scratch/tests/unit" all > "$out/$id.unit.log" 2>&1; then
		echo "BUILD-FAILED see $out/$id.unit.log"
	elif make -s -C "$scratch/tests/unit" run >> "$out/$id.unit.log" 2>&1; then
		echo "SURVIVED the unit tests passed"
	else
		echo "KILLED $(grep -m1 -E '\[  FAILED  \]' "$out/$id.unit.log")"
	fi
	rm -rf "$scratch"
}

# guest GLOG: boot the configuration in the m_* fields, the module $ko,
# and run the tests; their output in GLOG; returns the rig's status.
guest() {
	# m_rig and m_env are lists of words, unquoted on purpose.
	# shellcheck disable=SC2086
	VRSS_KO=$ko tools/vm/run --kernel "$m_kernel" --cpus "$m_cpus" ${m_nic:+--nic "$m_nic"} \
		$m_rig --timeout "$m_timeout" -- ${m_env:+env $m_env} \
		tools/scripts/ksft-run.sh $m_tests > "$1" 2>&1
}

# verdict GLOG RC: "VERDICT reason" from the guest's output and status.
verdict() {
	local g=$1 rc=$2 line
	if ! grep -q 'boot to CMD' "$g"; then
		echo "ERROR the guest never started the tests (exit $rc)"
		return
	fi
	if line=$(grep -m1 -E 'not ok: no .*: run make' "$g"); then
		echo "ERROR ${line#*not ok: }"
		return
	fi
	# A test that skipped as a whole tested nothing (a missing NIC, meter).
	if line=$(grep -m1 -E '^ok [0-9]+ selftests: drivers/net/vrss: [^ ]+ # SKIP' "$g"); then
		echo "ERROR skipped as a whole: ${line#*vrss: }"
		return
	fi
	if [ "$rc" = 0 ]; then
		# Cases a test skipped (a part for more vCPUs) tested nothing.
		line=$(grep -c -E '^# ok [0-9]+ .* # SKIP' "$g")
		if [ "$line" = 0 ]; then
			echo "SURVIVED the tests passed"
		else
			echo "SURVIVED the tests passed ($line cases skipped)"
		fi
	elif line=$(grep -m1 -E '^vm: CMD did not finish' "$g"); then
		echo "KILLED ${line#vm: }"
	elif grep -q '^vm: the guest kernel reported a problem' "$g"; then
		line=$(grep -m1 -E 'Kernel panic|BUG:|WARNING:|Oops|general protection fault|UBSAN:' "$g")
		echo "KILLED the guest kernel: ${line:-a crash}"
	elif line=$(grep -m1 -E '^# not ok [0-9]+ ' "$g"); then
		# The first failing case, and the test it is in.
		echo "KILLED $(grep -m1 -E '^not ok [0-9]+ selftests: ' "$g" | sed 's/.*vrss: //; s/ .*//'): ${line#\# }"
	elif line=$(grep -m1 -E '^not ok [0-9]+ selftests: ' "$g"); then
		echo "KILLED ${line#*vrss: }"
	else
		echo "KILLED exit status $rc"
	fi
}

report() {
	printf '%-12s %-30s %-15s %5ss  %s\n' "$1" "$2" "$3" "$4" "$5"
}

# --- baseline: the tests against the module as it is ---------------------------

if [ "$mode" = baseline ]; then
	declare -A done_cfg
	bad=0
	n=0
	declare -A base_ko
	for id in $selected; do
		f=$(mut fields "$id") || exit 2
		eval "$f"
		cfg="$m_kernel $m_cpus ${m_nic:-0} [$m_rig] [$m_env] $m_tests"
		[ -z "${done_cfg[$cfg]:-}" ] || continue
		done_cfg[$cfg]=1
		n=$((n + 1))
		name=baseline-$n
		log=$out/$name.log
		start=$SECONDS
		echo "=== baseline for $cfg (as mutant $id runs)" > "$log"
		kver=$(kver_of "$m_kernel")
		# One build of the module as it is per kernel.
		if [ -n "${base_ko[$kver]:-}" ]; then
			ko=${base_ko[$kver]}
		elif build baseline "$kver"; then
			base_ko[$kver]=$ko
		else
			report BUILD-FAILED "$name" "$m_where" $((SECONDS - start)) "see $log"
			bad=$((bad + 1))
			continue
		fi
		guest "$out/$name.guest.log"
		rc=$?
		read -r v why <<< "$(verdict "$out/$name.guest.log" "$rc")"
		case $v in
		SURVIVED) v=PASS why="$m_tests" ;;
		KILLED) v=FAIL bad=$((bad + 1)) ;;
		*) bad=$((bad + 1)) ;;
		esac
		report "$v" "$name" "$m_where" $((SECONDS - start)) "$why"
	done
	echo "baseline: $n configurations, $((n - bad)) passed, $bad did not; $SECONDS s"
	[ "$bad" = 0 ]
	exit
fi

# --- the mutants --------------------------------------------------------------

killed=0 survived=0 accepted=0 broken=0 total=0
results=$out/results.tsv
: > "$results"
for id in $selected; do
	f=$(mut fields "$id") || exit 2
	eval "$f"
	total=$((total + 1))
	log=$out/$id.log
	glog=$out/$id.guest.log
	rm -f "$glog"
	echo "=== mutant $id: $m_spec" > "$log"
	start=$SECONDS
	kver=$(kver_of "$m_kernel")
	if [ "$m_tests" = unit ]; then
		read -r v why <<< "$(unit "$id")"
	else
		build "$id" "$kver" "$id"
		case $? in
		0)
			guest "$glog"
			rc=$?
			read -r v why <<< "$(verdict "$glog" "$rc")"
			;;
		10) v=NOT-APPLIED why="its snippet is not in the source: $log" ;;
		*) v=BUILD-FAILED why="see $log" ;;
		esac
	fi
	case $v in
	KILLED) killed=$((killed + 1)) ;;
	SURVIVED)
		survived=$((survived + 1))
		if [ -n "$m_accepted" ]; then
			accepted=$((accepted + 1))
			why="accepted: $m_accepted"
		else
			why="$m_tests passed: $m_spec"
		fi
		;;
	*) broken=$((broken + 1)) ;;
	esac
	secs=$((SECONDS - start))
	report "$v" "$id" "$m_where" "$secs" "$why"
	printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$v" "$m_where" "$secs" "$why" >> "$results"
done
echo "mutants: $total run, $killed killed, $survived survived ($accepted accepted)," \
     "$broken without a verdict; $SECONDS s"
[ $((survived - accepted)) = 0 ] && [ "$broken" = 0 ]
