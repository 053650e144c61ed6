#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The package, as a user gets it: `make deb`, lintian, `apt-get install
# ./build/deb/vrss-dkms_VERSION_all.deb` on this machine, then for each
# kernel tested (kernels.sh: the newest 6.1 and 6.12 with headers) vrss
# in DKMS, installed, and in a guest of that kernel (its root is this
# machine's) `modprobe vrss` loads the installed module, vrss0 comes up
# and rxhash goes on (dkms-guest.sh); last `apt-get purge vrss-dkms`
# leaves no module behind.
#
# Debian's dkms postinst (/usr/lib/dkms/common.postinst) does not build
# for every kernel: it builds for the running kernel and the newest
# installed one if that is newer (by /boot/config-*), or, on a first
# install whose running kernel is not in /lib/modules (a container's, a
# build VM's), for every kernel there.  It names its choice ("Building
# for ..."): each kernel of it with headers must have vrss from the
# postinst.  A tested kernel it did not choose gets `dkms install
# vrss/VERSION -k KVER` here, and the output says so.
#
# This installs to and removes from the host's /lib/modules and
# /usr/src.  It touches no installation of the user's: with vrss-dkms
# already installed (in any state but not-installed), or vrss in DKMS
# from elsewhere (make dkms-install), it skips (KTAP "1..0 # SKIP",
# exit 4).  Once apt-get install starts, an exit, INT or TERM purges the
# package.  VRSS_DEB_GUEST=0: no guests.  KTAP on stdout.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
# shellcheck source=ktap.sh source-path=SCRIPTDIR
source "$repo/tools/scripts/ktap.sh"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
kernels=$(tools/scripts/kernels.sh) || exit 1
mapfile -t kernels <<< "$kernels"
guest=${VRSS_DEB_GUEST:-1}
echo "TAP version 13"

state=$(dpkg-query -W -f '${db:Status-Status}' vrss-dkms 2> /dev/null)
if [ -n "$state" ] && [ "$state" != not-installed ]; then
	echo "# vrss-dkms is on this machine already (dpkg status: $state):"
	echo "# this check purges the package it installs, and will not remove yours."
	echo "# To run it: apt-get purge vrss-dkms (a deb-check.sh killed with SIGKILL"
	echo "# could have left it; an interrupted one purges it)."
	skip_all "vrss-dkms already installed ($state)"
fi
if [ -n "$(dkms status vrss 2> /dev/null)" ]; then
	echo "# vrss is in DKMS here but not from the package: $(dkms status vrss | head -n 1)"
	echo "# (the package's postinst would replace it; dkms remove vrss/$version --all first)"
	skip_all "vrss already in DKMS, not from the package"
fi

echo "1..$((4 + (1 + guest) * ${#kernels[@]}))"
# Another apt or dpkg at work on this machine: wait for it, up to 5 min.
apt_lock=(-o DPkg::Lock::Timeout=300)
installed=0
purge() {
	[ "$installed" = 1 ] || return 0
	trap '' INT TERM
	DEBIAN_FRONTEND=noninteractive apt-get "${apt_lock[@]}" purge -y -q vrss-dkms 2>&1 |
		tail -n 3 | diag
	installed=0
	trap - INT TERM
}
trap purge EXIT
trap 'echo "# interrupted"; exit 130' INT
trap 'echo "# terminated"; exit 143' TERM

# deb.sh prints the package's path last, warnings and errors before it.
out=$(tools/scripts/deb.sh 2>&1)
rc=$?
deb=
[ "$rc" != 0 ] || { deb=$(tail -n 1 <<< "$out"); out=$(sed '$d' <<< "$out"); }
[ -z "$out" ] || printf '%s\n' "$out" | diag
result $rc "make deb: ${deb##*/}"
[ -f "$deb" ] || { echo "Bail out! no package"; exit 1; }
version=$(dpkg-deb -f "$deb" Version)

out=$(lintian --fail-on error,warning -I --pedantic "$deb" 2>&1)
rc=$?
out=$(grep -v 'running with root privileges' <<< "$out")
[ -z "$out" ] || { printf '%s\n' "$out" | diag; rc=1; }
result $rc "lintian: no tag, pedantic and informational included"

# Armed before apt-get starts: an interruption within it purges too.
installed=1
out=$(DEBIAN_FRONTEND=noninteractive apt-get "${apt_lock[@]}" install -y -q "$deb" 2>&1)
rc=$?
# apt runs dpkg on a pty: the postinst's lines end in \r\n.
out=$(tr -d '\r' <<< "$out")
printf '%s\n' "$out" |
	grep -E '^(Setting up|Building for|Building initial|It is likely|Module build|Done|Skipped)|Installing to|[Ee]rror' |
	tail -n 16 | diag
# The kernels the postinst chose, as it names them ("Building for A, B
# and C", or "Building for A B"): each with headers must have vrss.
postinst=$(sed -n '/^Building for architecture/d; s/^Building for //p' <<< "$out" | head -n 1 |
	   sed 's/, / /g; s/ and / /')
[ -n "$postinst" ] || { echo "# the postinst named no kernel to build for"; rc=1; }
for k in $postinst; do
	[ -e "/lib/modules/$k/build/include" ] || { echo "# $k: no headers, the postinst skipped it"; continue; }
	[[ $(dkms status "vrss/$version" -k "$k" 2> /dev/null) == *installed* ]] ||
		{ echo "# the postinst named $k and did not install vrss for it"; rc=1; }
done
result $rc "apt-get install ./${deb##*/}: the postinst installed vrss for the kernels it chose"

for line in "${kernels[@]}"; do
	read -r series kver <<< "$line"
	st=$(dkms status "vrss/$version" -k "$kver" 2> /dev/null)
	by="by the package's postinst"
	if [[ $st != *installed* ]]; then
		# Debian's postinst builds for the running kernel and the newest
		# one newer than it, not for every kernel.
		echo "# the postinst did not build for $kver (it chose: ${postinst:-none}; running: $(uname -r)):"
		echo "# dkms install vrss/$version -k $kver"
		by="by dkms install -k here, not by the postinst"
		dkms install "vrss/$version" -k "$kver" 2>&1 | grep -v "^readelf: Warning" | tail -n 5 | diag
		st=$(dkms status "vrss/$version" -k "$kver" 2> /dev/null)
	fi
	echo "# ${st:-vrss/$version: not in DKMS for $kver}"
	ko=$(find "/lib/modules/$kver/updates/dkms" -name 'vrss.ko*' 2> /dev/null | head -n 1)
	echo "# ${ko:-no vrss.ko in /lib/modules/$kver/updates/dkms}"
	[[ $st == *installed* ]] && [ -n "$ko" ] &&
		modinfo -k "$kver" -n vrss 2> /dev/null | grep -q updates/dkms
	result $? "DKMS built and installed vrss $version for $kver from the package, $by"
	[ "$guest" = 1 ] || continue
	out=$(tools/vm/run --kernel "$series" --timeout 300 -- tools/scripts/dkms-guest.sh / 2>&1)
	rc=$?
	printf '%s\n' "$out" | diag
	[ "$rc" = 0 ] || echo "# the guest's status: $rc"
	# modinfo -b / prints //lib/...; the kernel's version has a "+".
	sed -n 's|^loaded //*|/|p' <<< "$out" | grep -qF "/lib/modules/$kver/updates/dkms/vrss.ko" || rc=1
	result $rc "$series guest: modprobe vrss loads the package's module, vrss0 up, rxhash on"
done

purge
left=$(find /lib/modules/*/updates/dkms -name 'vrss.ko*' 2> /dev/null; dkms status vrss 2> /dev/null;
       [ ! -e "/usr/src/vrss-$version" ] || echo "/usr/src/vrss-$version")
[ -z "$left" ] || printf '%s\n' "$left" | diag
result "$([ -z "$left" ]; echo $?)" "apt-get purge vrss-dkms: no module, DKMS entry or source left"
exit $fail
