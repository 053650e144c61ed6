#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The package, as a user gets it: `make deb`, lintian, `apt-get install
# ./build/deb/vrss-dkms_VERSION_all.deb` on this machine (DKMS builds and
# installs the module for every kernel with headers, from the package's
# maintainer scripts), then in a guest of each kernel (its root is this
# machine's) `modprobe vrss` loads the installed module, vrss0 comes up
# and rxhash goes on (dkms-guest.sh); last `apt-get purge vrss-dkms`
# leaves no module behind.  This installs to and removes from the host's
# /lib/modules and /usr/src: it refuses to run if vrss is already in
# DKMS here from elsewhere (make dkms-install).  VRSS_DEB_GUEST=0: no
# guests.  KTAP on stdout.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
kernels=$(tools/scripts/kernels.sh) || exit 1
mapfile -t kernels <<< "$kernels"
guest=${VRSS_DEB_GUEST:-1}
echo "TAP version 13"
echo "1..$((4 + (1 + guest) * ${#kernels[@]}))"
n=0
fail=0
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=1; fi
}
diag() { sed 's/^/# /'; }
installed=0
purge() {
	[ "$installed" = 1 ] || return 0
	apt-get purge -y -q vrss-dkms 2>&1 | tail -n 3 | diag
	installed=0
}
trap purge EXIT

if ! dpkg -s vrss-dkms > /dev/null 2>&1 && [ -n "$(dkms status vrss 2> /dev/null)" ]; then
	echo "# vrss is in DKMS here but not from the package: $(dkms status vrss | head -n 1)"
	echo "# (dkms remove vrss/$version --all first; this check installs and purges the package)"
	echo "Bail out! vrss already in DKMS"
	exit 1
fi

deb=$(tools/scripts/deb.sh 2> >(diag))
result $? "make deb: ${deb##*/}"
[ -f "$deb" ] || { echo "Bail out! no package"; exit 1; }

out=$(lintian --fail-on error,warning -I --pedantic "$deb" 2>&1)
rc=$?
out=$(grep -v 'running with root privileges' <<< "$out")
[ -z "$out" ] || { printf '%s\n' "$out" | diag; rc=1; }
result $rc "lintian: no tag, pedantic and informational included"

out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "$deb" 2>&1)
rc=$?
installed=1
printf '%s\n' "$out" | grep -E 'dkms|Building|Installing|Error|error' | tail -n 12 | diag
result $rc "apt-get install ./${deb##*/}"

for line in "${kernels[@]}"; do
	read -r series kver <<< "$line"
	st=$(dkms status "vrss/$version" -k "$kver" 2>&1)
	echo "# $st"
	ko=$(find "/lib/modules/$kver/updates/dkms" -name 'vrss.ko*' 2> /dev/null | head -n 1)
	echo "# ${ko:-no vrss.ko in /lib/modules/$kver/updates/dkms}"
	[[ $st == *installed* ]] && [ -n "$ko" ] && modinfo -k "$kver" -n vrss 2> /dev/null | grep -q updates/dkms
	result $? "DKMS built and installed vrss $version for $kver from the package"
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
