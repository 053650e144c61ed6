#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's YNL netlink CLI (tools/net/ynl) and the netdev family spec,
# from Debian's linux-source-6.12, for the selftests that read per-queue
# statistics over netdev netlink (qstats-get, queue-get).  Extracted once
# into a cache outside the repository, then copied to build/ynl/, which
# the guest sees.  Needs python3-yaml.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VRSS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vrss}/ynl
tarball=$(ls -1 /usr/src/linux-source-6.12.tar.xz 2>/dev/null | tail -n 1)
[ -n "$tarball" ] || { echo "ynl: no linux-source-6.12 (run: make deps)" >&2; exit 1; }
stamp=$(stat -c '%n %Y' "$tarball")
if [ "$(cat "$cache/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$cache" && mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 \
		linux-source-6.12/tools/net/ynl/cli.py linux-source-6.12/tools/net/ynl/lib \
		linux-source-6.12/Documentation/netlink/specs/netdev.yaml
	echo "$stamp" > "$cache/stamp"
fi
rm -rf "$repo/build/ynl"
mkdir -p "$repo/build/ynl"
cp -r "$cache/tools/net/ynl/cli.py" "$cache/tools/net/ynl/lib" \
	"$cache/Documentation/netlink/specs/netdev.yaml" "$repo/build/ynl/"
