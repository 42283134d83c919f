#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-spdx.sh -- every tracked source, header, script and CMake file says its licence.
#
#   ./scripts/check-spdx.sh
#
# hpshm is MIT-licensed (LICENSE).  A file that a packager or a server's legal review reads
# alone must say so itself: the line "SPDX-License-Identifier: MIT" within its first five
# lines.  Prose (*.md), .gitignore and the fuzzers' seed inputs (tests/fuzz/corpus/) are not
# sources and are left out, and so are three files of debian/ whose format has no comments:
# changelog, source/format, and copyright, which is itself the licence statement (Expat).  Prints every file without the line and fails if there is one.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -f LICENSE ]] || {
	echo "check-spdx: LICENSE is missing" >&2
	exit 1
}
missing=0 checked=0
while IFS= read -r -d '' f; do
	case "$f" in
	*.md | .gitignore | LICENSE | tests/fuzz/corpus/*) continue ;;
	debian/changelog | debian/source/format | debian/copyright) continue ;;
	esac
	[[ -f $f ]] || continue
	checked=$((checked + 1))
	if ! head -n 5 -- "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
		echo "check-spdx: $f: no \"SPDX-License-Identifier: MIT\" in its first five lines" >&2
		missing=$((missing + 1))
	fi
done < <(git ls-files -z)
if ((missing)); then
	echo "check-spdx: $missing of $checked files lack the licence line; add it as the first line" \
		"(after #! in a script): /* SPDX-License-Identifier: MIT */ or # SPDX-License-Identifier: MIT" >&2
	exit 1
fi
echo "check-spdx: all $checked source, header, script and CMake files carry SPDX-License-Identifier: MIT"
