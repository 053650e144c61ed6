#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build/deb/vrss-dkms_VERSION_all.deb with Debian's dh-dkms
# (debian/), from `git archive HEAD`: the package carries exactly the
# committed source, never build output of the tree (*.o, *.ko, .*.cmd,
# build/).  A tree with uncommitted changes or untracked files still
# builds HEAD, with a warning that names what the package leaves out
# (make check runs this before a commit; CI and releases build from a
# clean checkout).  Installing the package has DKMS build the module for
# the running kernel and, if newer, the newest installed one, where
# headers are (Debian's dkms postinst); `dkms install vrss/VERSION -k
# KVER` for another.  Prints the package's path.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
head=$(git rev-parse --verify -q 'HEAD^{commit}') || {
	echo "deb.sh: $repo is not a git checkout with a commit: the package is built from HEAD" >&2
	exit 1
}
dirty=$(git status --porcelain --untracked-files=normal)
if [ -n "$dirty" ]; then
	{
		echo "deb.sh: warning: building HEAD (${head:0:12}); these uncommitted changes are NOT in the package:"
		printf '%s\n' "$dirty" | sed 's/^/deb.sh:   /'
	} >&2
fi
out=$repo/build/deb
rm -rf "$out"
src=$out/src/vrss
mkdir -p "$src"
git archive --format=tar "$head" | tar -xf - -C "$src"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
changelog=$(cd "$src" && dpkg-parsechangelog -S Version)
if [ "$changelog" != "$version" ]; then
	echo "deb.sh: debian/changelog is at $changelog, dkms.conf at $version (in HEAD)" >&2
	exit 1
fi
mv "$src" "$out/src/vrss-$version"
if ! (cd "$out/src/vrss-$version" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
	exit 1
fi
mv "$out/src/vrss-dkms_${version}_all.deb" "$out/"
rm -rf "$out/src"
echo "$out/vrss-dkms_${version}_all.deb"
