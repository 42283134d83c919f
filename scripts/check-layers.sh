#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-layers.sh -- do the folders still obey the layers of doc/architecture.md?
#
#   scripts/check-layers.sh [BUILD_DIR]
#
# .ci/run runs it on every change, with its build directory, so a layer broken by a new
# include or a stray /proc path fails CI with the offending lines.  It checks:
#   1. includes: every #include of base/, ports/, backends/, core/, tools/, bench/ and
#      examples/ against the table below (tests/ may include anything);
#   2. OS paths: no "/proc" or "/sys/" string literal outside ports/linux/ and the Linux
#      backends (comments may name them);
#   3. Linux-only headers (<linux/...>, <sys/statfs.h>, <sys/vfs.h>, <sys/prctl.h>,
#      <sys/sysmacros.h>, <mntent.h>, <sys/capability.h>) only in ports/linux/, the Linux
#      backends and tests/; the Windows SDK's (<windows.h>, <psapi.h>, <bcrypt.h>) only in
#      ports/windows/, the Windows backends, bench/'s Windows half and tests/;
#   4. with BUILD_DIR (configured by CMake, which writes compile_commands.json): every file
#      of ports/posix/ is compiled with
#      -D_POSIX_C_SOURCE=200809L and without _GNU_SOURCE.
# Exit status 0 when all hold, 1 with every offending line on stderr, 2 on a usage error.
set -euo pipefail

if (($# > 1)); then
	echo "usage: scripts/check-layers.sh [BUILD_DIR]" >&2
	exit 2
fi
build=${1:-}
[[ -z $build || $build == /* ]] || build=$PWD/$build
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

fail=0
offend() {
	printf 'check-layers: %s\n' "$*" >&2
	fail=1
}

# The Linux backends and the Linux helpers they share: they may include ports/linux/linux.h
# and name /proc and /sys.  plain_posix.c includes linux.h only under __linux__ (memfd).
# backends/fdseg.{c,h} is the descriptor-backed segment helper several backends share.
linux_backend() {
	case $1 in
	backends/mmap_hugetlb.c | backends/sysv_hugetlb.c | backends/hugetlbfs.c | backends/memfd_hugetlb.c | \
		backends/hugetlb_common.[ch] | backends/plain_posix.c | backends/fdseg.[ch])
		return 0 ;;
	esac
	return 1
}

# The Windows backends and the section helper they share: they may include
# ports/windows/windows.h and sys.h, and the Windows SDK.
windows_backend() {
	case $1 in
	backends/plain_windows.c | backends/windows_large.c | backends/winsection.[ch])
		return 0 ;;
	# The bench's Windows half behind bench/os.h: its raw peer makes the Win32 calls itself,
	# as memory_posix.c makes libc's.
	bench/worker_windows.c | bench/memory_windows.c)
		return 0 ;;
	esac
	return 1
}

# The bench's POSIX half behind bench/os.h and its APR peer: the raw system calls, made with the
# Linux flags of ports/linux/flags.h (only macros: it links nothing of the port).
bench_posix() {
	case $1 in
	bench/worker_posix.c | bench/memory_posix.c | bench/apr.c) return 0 ;;
	esac
	return 1
}

# The folder's layer, as doc/architecture.md names it.
layer_of() {
	case $1 in
	base/*) echo base ;;
	ports/port.h | ports/introspect.h) echo contract ;;
	ports/posix/*) echo posix ;;
	ports/linux/*) echo linux ;;
	ports/windows/*) echo windows ;;
	backends/*) echo backends ;;
	core/*) echo core ;;
	tools/*) echo tools ;;
	bench/*) echo bench ;;
	examples/*) echo examples ;;
	*) echo other ;;
	esac
}

# How messages name a layer.
label_of() {
	case $1 in
	contract) echo "the port contract" ;;
	posix | linux | windows) echo "ports/$1/" ;;
	*) echo "$1/" ;;
	esac
}

# The quoted includes a file may use, as one extended regular expression.
allowed_quoted() {
	local file=$1 base_h='base/[a-z_]+\.h'
	case $(layer_of "$file") in
	base) echo "^(hpshm\.h|hpshm/provider\.h|$base_h)$" ;;
	contract) echo '^(hpshm\.h|base/base\.h)$' ;;
	posix) echo "^(hpshm\.h|$base_h|port\.h|introspect\.h|posix/(sys|posix)\.h)$" ;;
	linux) echo "^(hpshm\.h|$base_h|port\.h|introspect\.h|posix/(sys|posix)\.h|linux/(linux|flags)\.h)$" ;;
	windows) echo "^(hpshm\.h|$base_h|port\.h|introspect\.h|windows/(sys|windows)\.h)$" ;;
	backends)
		if windows_backend "$file"; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|backends/[a-z_]+\.h|windows/(sys|windows)\.h)$"
		elif linux_backend "$file"; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|posix/sys\.h|backends/[a-z_]+\.h|linux/linux\.h)$"
		else
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|posix/sys\.h|backends/[a-z_]+\.h)$"
		fi
		;;
	core) echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|core/internal\.h|core/provider_keys\.h)$" ;;
	tools) echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/introspect\.h|tool\.h|bench\.h)$" ;;
	bench)
		# The raw peer calls the system itself, with the Linux flags its libc may lack.
		if bench_posix "$file"; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/introspect\.h|ports/linux/flags\.h|bench\.h|os\.h)$"
		else
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/introspect\.h|bench\.h|os\.h|run\.h)$"
		fi
		;;
	examples) echo '^(hpshm\.h|hpshm/provider\.h|shared_area\.h|file_provider\.h)$' ;;
	*) echo '.*' ;;
	esac
}

# The C standard library: all that base/, core/ and the port contract may include.
c_std='^(assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype)\.h$'
linux_only='^(linux/.*|sys/statfs\.h|sys/vfs\.h|sys/prctl\.h|sys/sysmacros\.h|mntent\.h|sys/capability\.h)$'
windows_only='^(windows|psapi|bcrypt)\.h$'

mapfile -t files < <(git ls-files -- 'base/*.[ch]' 'ports/*.[ch]' 'backends/*.[ch]' 'core/*.[ch]' \
	'tools/*.[ch]' 'bench/*.[ch]' 'examples/*.[ch]' | sort)
# Files added but not yet committed count too.
mapfile -t -O "${#files[@]}" files < <(git ls-files --others --exclude-standard -- 'base/*.[ch]' 'ports/*.[ch]' \
	'backends/*.[ch]' 'core/*.[ch]' 'tools/*.[ch]' 'bench/*.[ch]' 'examples/*.[ch]' | sort)

# ---- 1 and 3: includes ----------------------------------------------------------------------
for f in "${files[@]}"; do
	layer=$(layer_of "$f")
	label=$(label_of "$layer")
	quoted=$(allowed_quoted "$f")
	while IFS=: read -r line text; do
		if [[ $text =~ \#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
			inc=${BASH_REMATCH[1]}
			[[ $inc =~ $quoted ]] ||
				offend "$f:$line: $label may not include \"$inc\": $text"
		elif [[ $text =~ \#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
			inc=${BASH_REMATCH[1]}
			case $layer in
			base | contract | core)
				[[ $inc =~ $c_std ]] ||
					offend "$f:$line: $label includes only the C standard library, not <$inc>: $text"
				;;
			linux) ;;
			windows)
				[[ $inc =~ $linux_only ]] &&
					offend "$f:$line: <$inc> is Linux-only: only ports/linux/ and the Linux backends include it: $text"
				;;
			*)
				if [[ $inc =~ $linux_only ]] && ! linux_backend "$f"; then
					offend "$f:$line: <$inc> is Linux-only: only ports/linux/ and the Linux backends include it: $text"
				fi
				if [[ $inc =~ $windows_only ]] && ! windows_backend "$f"; then
					offend "$f:$line: <$inc> is the Windows SDK: only ports/windows/ and the Windows backends include it: $text"
				fi
				;;
			esac
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$f" || true)
done

# ---- 2: /proc and /sys/ string literals -----------------------------------------------------
# Comments are blanked first (line numbers kept), so only code and strings are searched.
strip_comments() {
	awk '
	FNR == 1 { block = 0 }
	{
		line = $0; out = ""; n = length(line); i = 1; quote = ""
		while (i <= n) {
			c = substr(line, i, 1); two = substr(line, i, 2)
			if (block) {
				if (two == "*/") { block = 0; out = out "  "; i += 2 } else { out = out " "; i++ }
				continue
			}
			if (quote != "") {
				out = out c
				if (c == "\\") { out = out substr(line, i + 1, 1); i += 2; continue }
				if (c == quote) quote = ""
				i++
				continue
			}
			if (two == "/*") { block = 1; out = out "  "; i += 2; continue }
			if (two == "//") break
			if (c == "\"" || c == "'\''") quote = c
			out = out c
			i++
		}
		print FILENAME ":" FNR ":" out
	}' "$@"
}
searched=()
for f in "${files[@]}"; do
	[[ $(layer_of "$f") == linux ]] && continue
	linux_backend "$f" && continue
	searched+=("$f")
done
while IFS=: read -r f line text; do
	text=${text#"${text%%[![:space:]]*}"}
	offend "$f:$line: names a Linux path; only ports/linux/ and the Linux backends may: ${text%"${text##*[![:space:]]}"}"
done < <(strip_comments "${searched[@]}" | grep -E '^[^:]+:[0-9]+:.*(/proc[/"]|/sys/)' || true)

# ---- 4: ports/posix/ compiled as POSIX ------------------------------------------------------
if [[ -n $build ]]; then
	db=$build/compile_commands.json
	if [[ ! -r $db ]]; then
		offend "$db: missing: configure $build with CMake (it writes compile_commands.json)"
	else
		for f in ports/posix/*.c; do
			cmd=$(awk -v want="$root/$f" '
				/"command":/ { cmd = $0 }
				/"file":/ { if (index($0, "\"" want "\"")) { print cmd; exit } }' "$db")
			if [[ -z $cmd ]]; then
				offend "$f: not compiled in $build: every file of ports/posix/ is built, generic ones into a check-only object library"
			elif [[ $cmd != *-D_POSIX_C_SOURCE=200809L* ]]; then
				offend "$f: compiled without -D_POSIX_C_SOURCE=200809L in $build"
			elif [[ $cmd == *-D_GNU_SOURCE* && $cmd != *-U_GNU_SOURCE* ]]; then
				offend "$f: compiled with _GNU_SOURCE in $build: ports/posix/ must build as plain POSIX"
			fi
		done
	fi
fi

if ((fail)); then
	echo "check-layers: the layers are broken (doc/architecture.md says what each folder may use)" >&2
	exit 1
fi
echo "check-layers: ok (${#files[@]} files)"
