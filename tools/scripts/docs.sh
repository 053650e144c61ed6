#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make docs: every .rst under Documentation/, in every subdirectory,
# renders with docutils, any warning failing (--strict); HTML in
# build/docs/, at the same relative path (Documentation/dev/rig.rst ->
# build/docs/dev/rig.html).  The images beside them are copied along, so
# that a page's relative image paths hold in build/docs/ too.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
doc=$repo/Documentation
out=$repo/build/docs
mkdir -p "$out"
rc=0
n=0
while IFS= read -r -d '' f; do
	rel=${f#"$doc"/}
	html=$out/${rel%.rst}.html
	mkdir -p "$(dirname "$html")"
	n=$((n + 1))
	if rst2html --strict --halt=warning "$f" "$html"; then
		echo "  RST     ${f#"$repo"/} -> ${html#"$repo"/}"
	else
		echo "  RST     ${f#"$repo"/}: FAILED" >&2
		rc=1
	fi
done < <(find "$doc" -name '*.rst' -type f -print0 | sort -z)
[ "$n" -gt 0 ] || { echo "  RST     no .rst under Documentation/" >&2; exit 1; }
while IFS= read -r -d '' f; do
	rel=${f#"$doc"/}
	mkdir -p "$(dirname "$out/$rel")"
	cp "$f" "$out/$rel"
done < <(find "$doc" \( -name '*.png' -o -name '*.svg' \) -type f -print0)
exit $rc
