# SPDX-License-Identifier: MIT
# bash completion for hpshm (installed as share/bash-completion/completions/hpshm).
#
# Everything offered comes from the tool itself, `hpshm __complete PROGRAM WORD... CURRENT`
# (tools/complete.c): commands, each command's options, configuration keys with their values,
# provider names, the ones of HPSHM_PROVIDER_MODULES included.  So this script never goes out
# of date, and completes for whichever hpshm was typed (./build/tools/hpshm too).
#
# bash splits the line at COMP_WORDBREAKS ('=' and ':' among them), so `--config huge_pages=`
# arrives as three words.  The words are rebuilt from the line up to the cursor, split at
# blanks only, so the tool sees what it will be given; the part of the last word before the
# last break character is then cut from each candidate, since bash replaces only what follows.

_hpshm() {
	local line words=() cur prog lead cand breaks
	local -a out

	if [[ -n ${COMP_LINE-} ]]; then
		line=${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}
		read -r -a words <<<"$line"
		[[ $line == *[[:blank:]] || ${#words[@]} -eq 0 ]] && words+=("")
	else
		words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
	fi
	cur=${words[${#words[@]}-1]}
	prog=${words[0]}
	[[ $prog == */* || -z $prog ]] || prog=$(type -P "$prog" 2>/dev/null) || prog=hpshm
	mapfile -t out < <("${prog:-hpshm}" __complete "${words[@]}" 2>/dev/null)

	COMPREPLY=()
	case ${out[0]-} in
	::files)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	::command)
		mapfile -t COMPREPLY < <(compgen -c -- "$cur")
		return 0
		;;
	esac
	# What bash takes as the word being completed: cur after its last break character.
	breaks=${COMP_WORDBREAKS-\"\'><=;|&(:}
	breaks=${breaks//[[:space:]]/}
	lead=${cur%"${cur##*["$breaks"]}"}
	for cand in "${out[@]}"; do
		cand=${cand#"$lead"}
		[[ -n $cand ]] && COMPREPLY+=("$cand") # "bind:" typed whole leaves nothing to add
	done
	# A key= or a stem like bind: wants its value typed next to it.
	if ((${#out[@]} == 1)) && [[ ${out[0]} == *[=:,] ]]; then
		compopt -o nospace 2>/dev/null
	fi
	return 0
}
complete -F _hpshm hpshm
