#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deps: install the Debian packages vrss needs, only those missing.
# Everything comes from the Debian archive.
set -eu

pkgs=(
	# building the module for both Debian kernels, and lint
	gcc make bc kmod libelf-dev sparse perl
	linux-headers-amd64 linux-headers-6.12-amd64
	linux-source-6.12
	# the guest rig: both kernels, a static busybox initramfs (QEMU: below)
	linux-image-amd64 linux-image-6.12-amd64
	busybox-static cpio xz-utils zstd lz4 procps
	# Debian's cloud kernels (no 9p: the rig shares over virtio-fs; what
	# QEMU 7.2's virtiofsd, below, links)
	libseccomp2 libcap-ng0 libglib2.0-0 libnuma1
	linux-image-cloud-amd64 linux-image-6.12-cloud-amd64
	linux-headers-cloud-amd64 linux-headers-6.12-cloud-amd64
	# what the selftests and benchmarks drive inside the guest
	iproute2 iputils-ping ethtool iperf3 python3
	# the kernel's drivers/net/ping.py (its TCP case), in the guest
	socat
	# examples.sh: the boot examples as a guest runs them (ifupdown with
	# dhclient, systemd-networkd and systemd-analyze)
	ifupdown isc-dhcp-client systemd
	# make bench and make demo: the receive-bound guest's firewall, and
	# request/response latency
	nftables sockperf
	# host unit tests
	libcmocka-dev pkg-config
	# docs (rst2html), DKMS packaging check, netlink statistics (YNL)
	python3-docutils dkms openssl python3-yaml
	# make deb: the Debian package (dh-dkms) and its lint
	debhelper dh-dkms lintian fakeroot
	# Toeplitz instruction counts (make bench)
	valgrind
	# charts
	gnuplot-nox
	# the debug kernel (make debug-kernel) and the fuzz target (make fuzz)
	flex bison libssl-dev clang libclang-rt-dev
)

# From Debian 12's backports suite: QEMU 10 (virtio-net's RSS table, igb,
# the plugin API with per-vCPU counters, exec in the guest 1.7x as fast as
# 7.2's).
backports=(qemu-system-x86)
qemu_min=1:10
# QEMU 10 has no virtiofsd (the rig's share for the cloud kernels, which
# have no 9p) and Debian 12 packages none: QEMU 7.2's C virtiofsd, from
# Debian 12's own qemu-system-common, serves QEMU 10's vhost-user-fs.
virtiofsd=/usr/local/libexec/vrss/virtiofsd

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
bp_missing=()
for p in "${backports[@]}"; do
	installed "$p" || bp_missing+=("$p")
done
if installed qemu-system-x86 &&
   ! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' qemu-system-x86)" ge "$qemu_min"; then
	bp_missing+=(qemu-system-x86)
fi
[ ${#missing[@]} -gt 0 ] || [ ${#bp_missing[@]} -gt 0 ] || [ ! -x "$virtiofsd" ] || exit 0

echo "deps: installing ${missing[*]} ${bp_missing[*]} $virtiofsd"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to apt-get install these (or install them yourself)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive

# backports_source: an apt source for CODENAME-backports, from the Debian
# archive this machine's own sources use for CODENAME (its address and
# keyring, deb822 or one-line), unless one is configured already.
backports_source() {
	local codename suite list=/etc/apt/sources.list.d/vrss-backports.sources
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	suite=$codename-backports
	if apt-get indextargets --format '$(RELEASE)' 2> /dev/null | grep -qx "$suite" ||
	   grep -rqs -- "$suite" /etc/apt/sources.list /etc/apt/sources.list.d; then
		return 0
	fi
	# One "URI KEYRING" line: the first source of CODENAME itself.
	local found
	found=$(cat /etc/apt/sources.list.d/*.sources 2> /dev/null | awk -v s="$codename" '
		function flush() {
			if (deb && hit && uri != "" && !done) { print uri, (key == "" ? "-" : key); done = 1 }
			deb = hit = 0; uri = key = ""
		}
		/^[ \t]*$/ { flush(); next }
		/^Types:/ { deb = $0 ~ /[ \t]deb([ \t]|$)/ }
		/^URIs:/ { uri = $2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) hit = 1 }
		/^Signed-By:/ { key = $2 }
		END { flush() }')
	[ -n "$found" ] || found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2> /dev/null |
		awk -v s="$codename" '$1 == "deb" {
			key = "-"; i = 2
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
					if ($i ~ /\]$/) break
				}
				i++
			}
			if ($(i + 1) == s) { print $i, key; exit }
		}')
	[ -n "$found" ] || {
		echo "deps: no apt source for $codename to take the archive's address from" >&2
		return 1
	}
	local uri key
	read -r uri key <<< "$found"
	{
		echo "Types: deb"
		echo "URIs: $uri"
		echo "Suites: $suite"
		echo "Components: main"
		[ "$key" = - ] || echo "Signed-By: $key"
	} > "$list"
	echo "deps: added $suite from $uri ($list)"
}

if [ ${#bp_missing[@]} -gt 0 ]; then
	backports_source
	bp_suite=$(. /etc/os-release && echo "$VERSION_CODENAME")-backports
fi
apt-get update -q
[ ${#missing[@]} = 0 ] ||
	apt-get install -y -q --no-install-recommends "${missing[@]}"
[ ${#bp_missing[@]} = 0 ] ||
	apt-get install -y -q --no-install-recommends -t "$bp_suite" "${bp_missing[@]}"
if [ ! -x "$virtiofsd" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	chmod 0755 "$tmp"	# apt downloads as _apt
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	(cd "$tmp" && apt-get download -q "qemu-system-common/$codename") &&
		dpkg-deb -x "$tmp"/qemu-system-common_*.deb "$tmp/x" &&
		install -D -m 0755 "$tmp/x/usr/lib/qemu/virtiofsd" "$virtiofsd" || {
		echo "deps: could not take virtiofsd from $codename's qemu-system-common" >&2
		exit 1
	}
	echo "deps: $virtiofsd from $codename's qemu-system-common"
fi
