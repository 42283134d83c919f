#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-size.sh -- one idea per file, short functions: are the sources still small?
#
#   scripts/check-size.sh [--all]
#
# .ci/run runs it on every change.  It fails when a C file (.c, .h) under core/, backends/,
# ports/, tools/, bench/, preload/, apr/ or httpd/ has more than 700 lines, or a function there more than 100
# (from the line with its name to its closing brace), unless scripts/check-size.exceptions
# names it with a reason.  A file that grows past 700 lines usually holds two ideas, and a
# function past 100 two phases (doc/architecture.md); the exceptions list says where that is
# known and not yet done, and only shrinks: an entry that no longer exceeds fails the check
# too, so it is removed when its split lands.
#
# Tables do not count: a static const array or a struct initializer is data, however long,
# and Universal Ctags reports only function definitions.  Ctags finds each definition, its
# name and first line; where its end is not a closing brace in column 0 (a macro that opens
# braces, as tools/bench.c's option macros do, misleads it) the end is taken from the house
# style instead: the first line after the name that starts with '}'.
#
# --all also lists what exceeds but is excepted, with its reason.  Exit status 0 when all
# hold, 1 with every offender on stderr, 2 on a usage error or a malformed exceptions list.
# It reads Universal Ctags from Debian's universal-ctags (scripts/deps.sh check installs it;
# HPSHM_SKIP_DEPS=1 skips that step).
set -euo pipefail

file_max=700
func_max=100
all=0
case ${1:-} in
'') ;;
--all) all=1 ;;
*)
	echo "usage: scripts/check-size.sh [--all]" >&2
	exit 2
	;;
esac
(($# <= 1)) || {
	echo "usage: scripts/check-size.sh [--all]" >&2
	exit 2
}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
exceptions=scripts/check-size.exceptions

bash scripts/deps.sh check >/dev/null
ctags=
for c in ctags-universal universal-ctags ctags; do
	if command -v "$c" >/dev/null 2>&1 && "$c" --version 2>/dev/null | grep -q '^Universal Ctags'; then
		ctags=$c
		break
	fi
done
if [[ -z $ctags ]]; then
	echo "check-size: no Universal Ctags found: install Debian's universal-ctags (scripts/deps.sh check)" >&2
	exit 2
fi

dirs=('core/*.[ch]' 'backends/*.[ch]' 'ports/*.[ch]' 'tools/*.[ch]' 'bench/*.[ch]' 'preload/*.[ch]' 'apr/*.[ch]' 'httpd/*.[ch]')
# Files added but not yet committed count too; files deleted but not yet committed do not.
mapfile -t files < <({
	git ls-files -- "${dirs[@]}"
	git ls-files --others --exclude-standard -- "${dirs[@]}"
} | sort -u | while read -r f; do [[ -f $f ]] && printf '%s\n' "$f"; done)

# ---- the exceptions: "path[:function] -- why" ------------------------------------------------
declare -A why_of=() used=() # an empty list is the goal: declared empty, so set -u takes it
bad=0
if [[ -f $exceptions ]]; then
	n=0
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		if [[ $line =~ ^([A-Za-z0-9_./-]+)(:([A-Za-z_][A-Za-z0-9_]*))?[[:space:]]+--[[:space:]]+([^[:space:]].*)$ ]]; then
			key=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
			if [[ -n ${why_of[$key]+set} ]]; then
				printf 'check-size: %s:%d: %s is listed twice\n' "$exceptions" "$n" "$key" >&2
				bad=1
			fi
			why_of[$key]=${BASH_REMATCH[4]}
		else
			printf 'check-size: %s:%d: not "path[:function] -- why" (the why is mandatory): %s\n' \
				"$exceptions" "$n" "$line" >&2
			bad=1
		fi
	done <"$exceptions"
fi
((bad == 0)) || exit 2

fail=0
report() { # key, what
	local key=$1 what=$2
	if [[ -n ${why_of[$key]+set} ]]; then
		used[$key]=1
		((all)) && printf 'check-size: %s (excepted: %s)\n' "$what" "${why_of[$key]}"
	else
		printf 'check-size: %s\n' "$what" >&2
		fail=1
	fi
	return 0
}

# ---- files -----------------------------------------------------------------------------------
while read -r lines f; do
	((lines > file_max)) &&
		report "$f" "$f: $lines lines, more than $file_max: split it by idea, or add '$f -- why' to $exceptions"
done < <(((${#files[@]})) && wc -l -- "${files[@]}" | awk '$2 != "total"')

# ---- functions -------------------------------------------------------------------------------
# One line per definition: "file<TAB>name<TAB>first<TAB>last".  .h files are C here, not C++.
measure() {
	printf '%s\n' "${files[@]}" |
		"$ctags" -L - --language-force=C --kinds-C=f --fields=ne --excmd=number --sort=no -f - |
		awk -F'\t' '
		{
			start = end = ""
			for (i = 4; i <= NF; i++) {
				if ($i ~ /^line:/) start = substr($i, 6) + 0
				if ($i ~ /^end:/) end = substr($i, 5) + 0
			}
			if (start == "") next
			if (!($2 in text)) {
				n = 0
				while ((getline l < $2) > 0) text[$2, ++n] = l
				close($2)
				text[$2] = n
			}
			if (end == "" || (end != start && substr(text[$2, end], 1, 1) != "}")) {
				for (end = start + 1; end <= text[$2] && substr(text[$2, end], 1, 1) != "}"; end++)
					;
			}
			printf "%s\t%s\t%d\t%d\n", $2, $1, start, end
		}' | sort -t $'\t' -k1,1 -k3,3n
}
while IFS=$'\t' read -r f name first last; do
	len=$((last - first + 1))
	((len > func_max)) &&
		report "$f:$name" "$f:$first: $name() has $len lines, more than $func_max: make its phases functions, or add '$f:$name -- why' to $exceptions"
done < <(((${#files[@]})) && measure)

# ---- exceptions that no longer except anything ------------------------------------------------
for key in $(printf '%s\n' "${!why_of[@]}" | sort); do
	if [[ -z ${used[$key]+set} ]]; then
		printf 'check-size: %s lists %s, which is within the limits now (or gone): remove the line\n' \
			"$exceptions" "$key" >&2
		fail=1
	fi
done

if ((fail)); then
	echo "check-size: files over $file_max lines or functions over $func_max (doc/architecture.md: one idea per file)" >&2
	exit 1
fi
echo "check-size: ok (${#files[@]} files, ${#why_of[@]} exceptions)"
