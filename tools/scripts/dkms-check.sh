#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest admin's path, in scratch trees under build/dkms: `dkms add`,
# `dkms build` and `dkms install` of this tree for each Debian kernel
# tested (kernels.sh: the newest 6.1 and 6.12 with headers, and their
# cloud flavour), and `make
# install` (INSTALL_MOD_PATH) too; then, in a guest of each, `modprobe
# vrss` from each installed tree, vrss0 created on a veth and rxhash
# switched on (VRSS_DKMS_GUEST=0: not here; make check does it in a guest
# it boots anyway, with dkms-guest.sh --ktap).  Outside build/, only
# DKMS's own side effects: the module signing key it creates once in
# /var/lib/dkms, and a depmod of the host's (unchanged) module index.
# KTAP on stdout.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
# shellcheck source=ktap.sh source-path=SCRIPTDIR
source "$repo/tools/scripts/ktap.sh"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
scratch=$repo/build/dkms
rm -rf "$scratch"
mkdir -p "$scratch/src/vrss-$version" "$scratch/tree" "$scratch/root/lib/modules"
# The source as DKMS gets it from a release: the tree without build output.
tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$scratch/src/vrss-$version"
dkms_opts=(--dkmstree "$scratch/tree" --sourcetree "$scratch/src"
	   --installtree "$scratch/root/lib/modules")

# Debian's generic kernels and their cloud flavour (kernels.sh --cloud).
kernels=$(tools/scripts/kernels.sh) || exit 1
cloud=$(tools/scripts/kernels.sh --cloud) || exit 1
mapfile -t kernels <<< "$kernels
$cloud"
guest=${VRSS_DKMS_GUEST:-1}
echo "TAP version 13"
echo "1..$((1 + (3 + guest) * ${#kernels[@]}))"
out=$(dkms add -m vrss -v "$version" "${dkms_opts[@]}" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
result $rc "dkms add vrss/$version"

for line in "${kernels[@]}"; do
	read -r series kver <<< "$line"
	mkdir -p "$scratch/root/lib/modules/$kver"
	out=$(dkms build -m vrss -v "$version" -k "$kver" "${dkms_opts[@]}" 2>&1 &&
	      dkms install -m vrss -v "$version" -k "$kver" --force "${dkms_opts[@]}" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
	ko=$(find "$scratch/root/lib/modules/$kver" -name 'vrss.ko*' 2>/dev/null | head -n 1)
	[ -n "$ko" ] || rc=1
	result $rc "dkms build and install for $kver"
	# modprobe -d takes a root with lib/modules/<kver>/modules.dep.
	cp /lib/modules/"$kver"/modules.{order,builtin,builtin.modinfo} \
		"$scratch/root/lib/modules/$kver/" 2>/dev/null
	depmod -b "$scratch/root" "$kver" 2>&1 | sed 's/^/# /'
	result "${PIPESTATUS[0]}" "depmod of the DKMS tree for $kver"
	# Clean first: the objects of the kernel before are not rebuilt
	# when the compiler's command line is the same (a flavour of the
	# same version: 6.12's generic and cloud), and would be installed
	# with that kernel's vermagic.
	out=$(make -s -C "$scratch/src/vrss-$version" KDIR="/lib/modules/$kver/build" clean 2>&1 &&
	      make -s -j"$(nproc)" -C "$scratch/src/vrss-$version" KDIR="/lib/modules/$kver/build" \
		INSTALL_MOD_PATH="$scratch/inst" install 2>&1)
	rc=$?
	modinfo -F vermagic "$scratch"/inst/lib/modules/"$kver"/extra/drivers/net/vrss/vrss.ko* 2>/dev/null |
		grep -q "^$kver " || { out+=$'\n'"its vermagic is not $kver"; rc=1; }
	[ -n "$(find "$scratch/inst/lib/modules/$kver/extra" -name 'vrss.ko*' 2>/dev/null)" ] || rc=1
	printf '%s\n' "$out" | grep -Ev 'SSL error|sign-file|System.map|WARNING: could not open' |
		tail -n 5 | sed 's/^/# /'
	result $rc "make install (INSTALL_MOD_PATH) for $kver"
	[ "$guest" = 1 ] || continue
	tools/vm/run --kernel "$series" --timeout 300 -- \
		tools/scripts/dkms-guest.sh "$scratch/root" "$scratch/inst" 2>&1 | sed 's/^/# /'
	result "${PIPESTATUS[0]}" "$series guest: modprobe vrss from DKMS and from make install, vrss0 up, rxhash on"
done
exit $fail
