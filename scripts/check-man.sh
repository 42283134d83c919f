#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-man.sh -- the man pages and the shell completion, as a user meets them.
#
#   scripts/check-man.sh [BUILD_DIR]        (default: build-test; built here if needed)
#
# 1. Every page renders without one warning: man --warnings and groff -ww, in C.UTF-8 at 80
#    columns (a warning is a page some man reader shows wrong).
# 2. Nothing drifted: every command `hpshm --help` lists has its section in hpshm(1), with every
#    option its help lists; every key has its entry in hpshm-config(5); every function of
#    include/hpshm.h is in hpshm(3), and every function hpshm(3) names is in the header.
# 3. bash completion, driven as bash drives it (COMP_WORDS split at '=' as readline splits,
#    COMP_LINE, COMP_POINT): `hpshm ` offers every command, `hpshm check --config huge_pages=`
#    offers off try on; and bash-completion finds the installed script by itself.
# 4. zsh reads _hpshm (zsh -n) and, run as a function with compadd stubbed, adds off try on;
#    cmake --install puts every file where man, bash-completion and zsh look.
#
# Installs what it needs with scripts/deps.sh man (HPSHM_SKIP_DEPS=1: you did).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build-test}
fail=0
bad() {
	printf 'check-man: FAIL: %s\n' "$*" >&2
	fail=1
}

bash scripts/deps.sh man >/dev/null
for tool in man groff bash zsh; do
	command -v "$tool" >/dev/null || { echo "check-man: $tool is missing: run scripts/deps.sh man" >&2; exit 1; }
done
[[ -f /usr/share/bash-completion/bash_completion ]] ||
	{ echo "check-man: bash-completion is missing: run scripts/deps.sh man" >&2; exit 1; }

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DHPSHM_WERROR=ON >/dev/null
build=$(cd "$build" && pwd)
# All of it, not only the pages: cmake --install below installs everything (a no-op after test.sh).
cmake --build "$build" -j"${HPSHM_JOBS:-2}" >/dev/null
hpshm=$build/tools/hpshm
pages=("$build/man/hpshm.1" "$build/man/hpshm-config.5" man/hpshm.3)

# ---- 1. rendering
for page in "${pages[@]}"; do
	[[ -s $page ]] || { bad "$page was not made"; continue; }
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || bad "man -l $page failed"
	[[ -z $w ]] || bad "man --warnings -l $page: $w"
	w=$(groff -ww -z -man -Tutf8 "$page" 2>&1) || bad "groff $page failed"
	[[ -z $w ]] || bad "groff -ww $page: $w"
done

# ---- 2. drift
render() { LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$1" 2>/dev/null | col -b; }
man1=$(render "$build/man/hpshm.1")
man5=$(render "$build/man/hpshm-config.5")
mapfile -t cmds < <("$hpshm" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
((${#cmds[@]} >= 9)) || bad "hpshm --help lists only ${#cmds[@]} commands: ${cmds[*]}"
for c in "${cmds[@]}"; do
	section=$(awk -v h="   hpshm $c" '$0 == h { on = 1; next } on && /^   hpshm / { exit } on && /^[A-Z]/ { exit } on' <<<"$man1")
	[[ -n $section ]] || { bad "hpshm(1) has no section for the command '$c'"; continue; }
	[[ $c == help ]] && continue
	while read -r opt; do
		grep -qF -- "$opt" <<<"$section" || bad "hpshm(1), section $c: no $opt, which \`hpshm help $c\` lists"
	done < <("$hpshm" __complete hpshm "$c" - | grep -vx -- --help)
done
while read -r key; do
	grep -qE "^       ${key%=}\$|^       ${key%=} " <<<"$man5" || bad "hpshm-config(5) has no entry for the key ${key%=}"
done < <("$hpshm" __complete hpshm probe --config '')
mapfile -t api < <(sed -n 's/^HPSHM_API[^(]*[ *]\(hpshm_[a-z0-9_]*\)(.*/\1/p' include/hpshm.h)
((${#api[@]} > 40)) || bad "found only ${#api[@]} functions in include/hpshm.h"
for f in "${api[@]}"; do
	grep -qw -- "$f" man/hpshm.3 || bad "hpshm(3) does not list $f (include/hpshm.h)"
done
# The tags of the lists (.TP or .TQ, then the line naming the functions): types in the prose are not functions.
while read -r f; do
	[[ " ${api[*]} " == *" $f "* ]] || bad "hpshm(3) lists $f, which include/hpshm.h does not declare"
done < <(awk 'prev == ".TP" || prev == ".TQ" { print } { prev = $0 }' man/hpshm.3 | grep -oE 'hpshm_[a-z0-9_]+' | sort -u)

# ---- 3. bash completion, as bash calls it
complete_case() {
	# $1: the line up to the cursor; $2...: COMP_WORDS as readline splits it.  Prints COMPREPLY.
	PATH=$build/tools:$PATH bash -c '
		source "$0"
		COMP_LINE=$1 COMP_POINT=${#1}
		shift
		COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
		_hpshm
		printf "%s\n" "${COMPREPLY[@]}"' tools/completion/hpshm.bash "$@"
}
got=$(complete_case "hpshm " hpshm "" | sort | tr '\n' ' ')
for c in "${cmds[@]}"; do
	[[ " $got" == *" $c "* ]] || bad "bash: 'hpshm <TAB>' does not offer the command $c (offers: $got)"
done
got=$(complete_case "hpshm check --config huge_pages=" hpshm check --config huge_pages = "" | tr '\n' ' ')
[[ $got == "off try on " ]] || bad "bash: 'hpshm check --config huge_pages=<TAB>' offers '$got', not 'off try on'"
got=$(complete_case "hpshm check --config=huge_pages=o" hpshm check --config = huge_pages = o | tr '\n' ' ')
[[ $got == "off on " ]] || bad "bash: 'hpshm check --config=huge_pages=o<TAB>' offers '$got', not 'off on'"
got=$(complete_case "hpshm check --config provider=" hpshm check --config provider = "" | tr '\n' ' ')
for p in auto $("$hpshm" providers | awk '{ print $1 }'); do
	[[ " $got" == *" $p "* ]] || bad "bash: 'hpshm check --config provider=<TAB>' does not offer $p (offers: $got)"
done

# ---- 4. zsh, and the installed files where their readers look
zsh -n tools/completion/_hpshm || bad "zsh -n tools/completion/_hpshm"
# The completion system is interactive; its one call the script makes, compadd, is stubbed to
# print what it is given, and the script runs as the function compinit would autoload.
got=$(PATH=$build/tools:$PATH zsh -fc '
	compadd() { local i=${@[(i)--]}; print -rl -- "${@[i+1,-1]}"; }
	eval "_hpshm() { $(<tools/completion/_hpshm) }"
	words=(hpshm check --config huge_pages=) CURRENT=4
	_hpshm' 2>&1 | tr '\n' ' ')
[[ $got == "huge_pages=off huge_pages=try huge_pages=on " ]] ||
	bad "zsh: 'hpshm check --config huge_pages=<TAB>' adds '$got', not huge_pages=off, =try, =on"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in share/man/man1/hpshm.1 share/man/man5/hpshm-config.5 share/man/man3/hpshm.3 \
	share/bash-completion/completions/hpshm share/zsh/site-functions/_hpshm; do
	[[ -s $prefix/$f ]] || bad "cmake --install did not install $f"
done
MANPATH=$prefix/share/man man -w hpshm-config >/dev/null 2>&1 || bad "man does not find hpshm-config(5) under the prefix"
# bash-completion loads a command's script on first use from XDG_DATA_DIRS: the installed one.
got=$(PATH=$prefix/bin:$PATH XDG_DATA_DIRS=$prefix/share bash -c '
	source /usr/share/bash-completion/bash_completion
	_completion_loader hpshm 2>/dev/null || __load_completion hpshm
	complete -p hpshm' 2>&1) || true
[[ $got == *"-F _hpshm"* ]] || bad "bash-completion does not load the installed script: $got"

if ((fail)); then
	echo "check-man: FAILED" >&2
	exit 1
fi
echo "check-man: ${#pages[@]} pages render without warnings, ${#cmds[@]} commands, ${#api[@]} functions; completion ok"
