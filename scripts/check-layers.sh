#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-layers.sh -- do the folders still obey the layers of doc/architecture.md?
#
#   scripts/check-layers.sh [BUILD_DIR]
#
# .ci/run runs it on every change, with its build directory, so a layer broken by a new
# include or a stray /proc path fails CI with the offending lines.  It checks:
#   1. includes: every #include of base/, ports/, backends/, core/, tools/, bench/, preload/,
#      examples/, apr/ and httpd/ against the table below (apr/: the public API and APR's headers
#      only; httpd/: the public API, libhpshm_apr, its store and httpd's and APR's headers) (tests/ may include anything); ports/admin.h, which
#      changes the machine (pool sizes, THP), only in tools/plan.c, bench/ and tests/;
#   2. OS paths: no "/proc" or "/sys/" string literal outside ports/linux/ and the Linux
#      backends (comments may name them);
#   3. Linux-only headers (<linux/...>, <sys/statfs.h>, <sys/vfs.h>, <sys/prctl.h>,
#      <sys/sysmacros.h>, <mntent.h>, <sys/capability.h>) only in ports/linux/, the Linux
#      backends and tests/; the Windows SDK's (<windows.h>, <psapi.h>, <bcrypt.h>) only in
#      ports/windows/, the Windows backends, bench/'s Windows half and tests/;
#   4. with BUILD_DIR (configured by CMake, which writes compile_commands.json): every file
#      of ports/posix/ is compiled with
#      -D_POSIX_C_SOURCE=200809L and without _GNU_SOURCE;
#   5. with BUILD_DIR: the build itself enforces the layers: every library source is compiled
#      with its HPSHM_LAYER_*, and a backend that includes core/internal.h fails to compile.
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

# The Linux backends (backends/list.h's linux rows) and the Linux helpers they share: they may
# include ports/linux/linux.h and name /proc and /sys.  plain_posix.c includes linux.h only under __linux__ (memfd).
# backends/fixmap.{c,h} (mapping at an address) and backends/named*.{c,h} (named objects) are
# the helpers several backends share.
# A row of backends/list.h whose OS tag is $1 names its source file: those are that OS's
# backends without a line here.
listed_backend() { # listed_backend OS FILE
	local src
	for src in $(sed -n "s/^HPSHM_BACKEND([a-z0-9_]*, *[A-Z0-9_]*, *$1, *[a-z]*, *\([a-z0-9_]*\),.*/\1/p" backends/list.h); do
		[[ $2 == "backends/$src.c" ]] && return 0
	done
	return 1
}
linux_backend() {
	listed_backend linux "$1" && return 0
	case $1 in
	backends/hugetlb_common.[ch] | backends/plain_posix.c | backends/fixmap.[ch] | \
		backends/named.[ch] | backends/named_create.c | backends/named_remove.c | backends/named_internal.h | \
		backends/classify.c)
		return 0 ;;
	backends/sysv_named.c | backends/sysv_named.h) # the SysV provider's name space, and what its files share
		return 0 ;;
	esac
	return 1
}

# The Windows backends and the section helper they share: they may include
# ports/windows/windows.h and sys.h, and the Windows SDK.
windows_backend() {
	listed_backend windows "$1" && return 0
	case $1 in
	backends/winsection.h)
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
	bench/worker_posix.c | bench/memory_posix.c | bench/resize_posix.c | bench/apr.c) return 0 ;;
	esac
	return 1
}

# The folder's layer, as doc/architecture.md names it.
layer_of() {
	case $1 in
	base/*) echo base ;;
	ports/port.h | ports/facts.h | ports/admin.h | ports/process.h) echo contract ;;
	ports/posix/*) echo posix ;;
	ports/linux/*) echo linux ;;
	ports/windows/*) echo windows ;;
	backends/*) echo backends ;;
	core/*) echo core ;;
	tools/*) echo tools ;;
	bench/*) echo bench ;;
	preload/*) echo preload ;;
	examples/*) echo examples ;;
	apr/*) echo apr ;;
	httpd/*) echo httpd ;;
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
	local file=$1 base_h='base/[a-z_]+\.h' tool_h='(facts|admin|process)\.h'
	case $(layer_of "$file") in
	base) echo "^(hpshm\.h|hpshm/provider\.h|$base_h)$" ;;
	contract) echo '^(hpshm\.h|base/base\.h|port\.h)$' ;;
	posix) echo "^(hpshm\.h|$base_h|port\.h|$tool_h|posix/(sys|posix)\.h)$" ;;
	linux) echo "^(hpshm\.h|$base_h|port\.h|$tool_h|posix/(sys|posix)\.h|linux/(linux|flags)\.h)$" ;;
	windows) echo "^(hpshm\.h|$base_h|port\.h|$tool_h|windows/(sys|windows)\.h)$" ;;
	backends)
		if windows_backend "$file"; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|backends/[a-z_]+\.h|windows/(sys|windows)\.h)$"
		elif linux_backend "$file"; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|posix/sys\.h|backends/[a-z_]+\.h|linux/linux\.h)$"
		else
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|posix/sys\.h|backends/[a-z_]+\.h)$"
		fi
		;;
	# backends/list.h is data (the built-in rows, no include): core/registry.c makes its table from it.
	core) echo "^(hpshm\.h|hpshm/provider\.h|$base_h|port\.h|core/internal\.h|core/provider_keys\.h|core/walk\.h|backends/list\.h)$" ;;
	tools)
		# ports/admin.h changes the machine: of the tool, only `hpshm plan` may.
		if [[ $file == tools/plan.c ]]; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/(facts|process|admin)\.h|tool\.h|bench\.h)$"
		else
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/(facts|process)\.h|tool\.h|bench\.h)$"
		fi
		;;
	bench)
		# The raw peer calls the system itself, with the Linux flags its libc may lack.
		if bench_posix "$file"; then
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/(facts|process|admin)\.h|ports/linux/flags\.h|bench\.h|os\.h)$"
		else
			echo "^(hpshm\.h|hpshm/provider\.h|$base_h|ports/(facts|process|admin)\.h|bench\.h|os\.h|run\.h)$"
		fi
		;;
	# The interposer is a client like the tool; it makes the raw calls it takes over itself, with
	# the Linux flags its libc may lack.
	preload) echo "^(hpshm\.h|$base_h|ports/facts\.h|ports/linux/flags\.h|preload\.h)$" ;;
	examples) echo '^(hpshm\.h|hpshm/provider\.h|shared_area\.h|file_provider\.h)$' ;;
	# libhpshm_apr is a client of the public API, as an application is: no core/, ports/ or backends/.
	apr) echo '^(hpshm\.h|hpshm/provider\.h|hpshm/apr\.h)$' ;;
	# The httpd module: the public API, libhpshm_apr (hpshm/apr.h) and its own store; httpd's and APR's headers come in <>.
	httpd) echo '^(hpshm\.h|hpshm/apr\.h|store\.h)$' ;;
	*) echo '.*' ;;
	esac
}

# The C standard library: all that base/, core/ and the port contract may include.
c_std='^(assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype)\.h$'
linux_only='^(linux/.*|sys/statfs\.h|sys/vfs\.h|sys/prctl\.h|sys/sysmacros\.h|mntent\.h|sys/capability\.h)$'
windows_only='^(windows|psapi|bcrypt)\.h$'

mapfile -t files < <(git ls-files -- 'base/*.[ch]' 'ports/*.[ch]' 'backends/*.[ch]' 'core/*.[ch]' \
	'tools/*.[ch]' 'bench/*.[ch]' 'preload/*.[ch]' 'examples/*.[ch]' 'apr/*.[ch]' 'httpd/*.[ch]' | sort)
# Files added but not yet committed count too.
mapfile -t -O "${#files[@]}" files < <(git ls-files --others --exclude-standard -- 'base/*.[ch]' 'ports/*.[ch]' \
	'backends/*.[ch]' 'core/*.[ch]' 'tools/*.[ch]' 'bench/*.[ch]' 'preload/*.[ch]' 'examples/*.[ch]' 'apr/*.[ch]' \
	'httpd/*.[ch]' | sort)

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
			apr)
				[[ $inc =~ $c_std || $inc =~ ^apr(_[a-z_]+)?\.h$ ]] ||
					offend "$f:$line: apr/ includes only the C standard library and APR's headers, not <$inc>: $text"
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

# ---- 5: the build itself refuses a layer-private header ---------------------------------------
# Every library source is compiled with its layer's HPSHM_LAYER_* (cmake/layers.cmake) and
# core/internal.h refuses any layer but core/ and tests/.  Proof on a real backend: its own
# compile command, syntax only, passes as it is and fails with core/internal.h forced in.
if [[ -n $build && -r $build/compile_commands.json ]]; then
	layer_cmd() { # FILE -> its compile command, as one shell line, syntax only, no output file
		python3 - "$build/compile_commands.json" "$root/$1" <<'PY'
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if e["file"] == sys.argv[2]:
        argv = e.get("arguments") or shlex.split(e["command"])
        out, skip = [], False
        for a in argv:
            if skip: skip = False; continue
            if a == "-o": skip = True; continue
            if a == "-c": continue
            out.append(a)
        print(e["directory"]); print(shlex.join(out + ["-fsyntax-only"])); break
PY
	}
	probe=backends/plain_posix.c
	[[ -e $probe ]] || probe=$(ls backends/*.c | head -n 1)
	mapfile -t entry < <(layer_cmd "$probe")
	if ((${#entry[@]} != 2)); then
		offend "$probe: not in $build/compile_commands.json: cannot prove the build enforces the layers"
	elif [[ ${entry[1]} != *-DHPSHM_LAYER_BACKENDS* ]]; then
		offend "$probe: compiled without -DHPSHM_LAYER_BACKENDS: cmake/layers.cmake did not mark it"
	elif ! (cd "${entry[0]}" && eval "${entry[1]}") >/dev/null 2>&1; then
		offend "$probe: its own compile command fails in $build: rebuild before checking the layers"
	elif err=$(cd "${entry[0]}" && eval "${entry[1]} -include $root/core/internal.h" 2>&1); then
		offend "$probe: compiles with core/internal.h included: the build no longer refuses the core's header to a backend"
	elif [[ $err != *"private to core/"* ]]; then
		offend "$probe: with core/internal.h included it fails, but not on the layer guard: $err"
	fi
	while IFS= read -r f; do
		offend "$f: compiled without its HPSHM_LAYER_* (cmake/layers.cmake)"
	done < <(python3 - "$build/compile_commands.json" "$root" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    rel = e["file"][len(sys.argv[2]) + 1:] if e["file"].startswith(sys.argv[2] + "/") else ""
    if rel.split("/")[0] in ("base", "ports", "backends", "core") and "-DHPSHM_LAYER_" not in str(e.get("arguments") or e["command"]):
        print(rel)
PY
	)
fi

if ((fail)); then
	echo "check-layers: the layers are broken (doc/architecture.md says what each folder may use)" >&2
	exit 1
fi
echo "check-layers: ok (${#files[@]} files)"
