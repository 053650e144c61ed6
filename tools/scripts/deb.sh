#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build/deb/vrss-dkms_VERSION_all.deb with Debian's dh-dkms
# (debian/), from a copy of this tree without build output.  Installing it
# (apt install ./build/deb/vrss-dkms_*.deb) has DKMS build the module for
# every installed kernel with headers.  Prints the package's path.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
changelog=$(dpkg-parsechangelog -S Version)
if [ "$changelog" != "$version" ]; then
	echo "deb.sh: debian/changelog is at $changelog, dkms.conf at $version" >&2
	exit 1
fi
out=$repo/build/deb
rm -rf "$out"
mkdir -p "$out/src/vrss-$version"
tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$out/src/vrss-$version"
if ! (cd "$out/src/vrss-$version" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
	exit 1
fi
mv "$out/src/vrss-dkms_${version}_all.deb" "$out/"
rm -rf "$out/src"
echo "$out/vrss-dkms_${version}_all.deb"
