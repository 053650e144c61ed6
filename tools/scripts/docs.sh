#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make docs: every .rst under Documentation/ renders with docutils, any
# warning failing (--strict); HTML in build/docs/.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$repo/build/docs"
rc=0
for f in "$repo"/Documentation/networking/*.rst; do
	out=$repo/build/docs/$(basename "$f" .rst).html
	if rst2html --strict --halt=warning "$f" "$out"; then
		echo "  RST     ${f#"$repo"/} -> ${out#"$repo"/}"
	else
		echo "  RST     ${f#"$repo"/}: FAILED" >&2
		rc=1
	fi
done
exit $rc
