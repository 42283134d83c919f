#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-abi.sh -- hold libhpshm.so to its soname: compare its ABI with the baseline.
#
#   ./scripts/check-abi.sh            build the shared library (build-abi) and compare it with
#                                     abi/libhpshm.abi
#   ./scripts/check-abi.sh --update   the same, then write the library's ABI as the new baseline
#                                     where that is allowed (below)
#
# The soname names the ABI (doc/abi.md): libhpshm.so.0.MINOR while the major version is 0.  The
# baseline is libabigail's description (abidw) of the library of one soname: every exported
# function and the layout of every type of include/hpshm.h and include/hpshm/provider.h that
# they reach.  abidiff compares the library built now with it:
#   - the same ABI, or only functions added: passes (added ones are listed until a new
#     baseline takes them in, which a release does);
#   - anything else (a function removed or changed, a public type that changed size or layout,
#     a type that changed its members; a struct the library reads by its version, struct
#     hpshm_provider, may grow at its tail) with the baseline's soname: fails, with abidiff's report
#     and what to do.  An incompatible change needs a new minor version (HPSHM_VERSION_MINOR in
#     include/hpshm.h, hence a new soname), a CHANGES.md entry and a new baseline.  A change
#     hpshm.h's rule makes compatible (a member carved out of a versioned struct's reserved
#     space, the size unchanged) needs the new baseline alone;
#   - a soname other than the baseline's: fails until the baseline is made for it.
# --update writes the baseline for a new soname whatever changed, and for the same soname only
# when no function is gone and no public type changed size, so a baseline can take in a
# compatible change and never hide an incompatible one.
#
# What is compared is libabigail's view of a gcc build with debug information on x86_64
# (Debian 12's abigail-tools 2.2): the baseline is made and checked on that, and other
# machines skip with the reason.  Private types (hpshm_config's layout, behind its opaque
# typedef) are left out by --headers-dir: only what a program can see counts.
#
# Environment: HPSHM_BUILD_DIR (default build-abi), HPSHM_SKIP_DEPS=1 (no package check).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
update=0
case "${1:-}" in
"") ;;
--update) update=1 ;;
*)
	echo "usage: $0 [--update]" >&2
	exit 2
	;;
esac
build=${HPSHM_BUILD_DIR:-build-abi}
baseline=abi/libhpshm.abi
regen="./scripts/check-abi.sh --update"

if [[ $(uname -s) != Linux || $(uname -m) != x86_64 ]]; then
	echo "check-abi: the baseline describes an x86_64 Linux build; this is $(uname -s) $(uname -m): skipped"
	exit 0
fi

bash scripts/deps.sh abi

# The library alone, with gcc and full debug information.  -ffile-prefix-map keeps this
# checkout's path out of the description, so a baseline made anywhere compares the same.
echo "== check-abi: build the shared library ($build)"
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DHPSHM_WERROR=ON \
	-DHPSHM_BUILD_TESTS=OFF -DHPSHM_BUILD_TOOLS=OFF -DHPSHM_BUILD_EXAMPLES=OFF -DHPSHM_BUILD_DOCS=OFF \
	-DHPSHM_BUILD_PRELOAD=OFF "-DCMAKE_C_FLAGS=-ffile-prefix-map=$root/=" >"$build/configure.log" ||
	{
		cat "$build/configure.log" >&2
		exit 1
	}
cmake --build "$build" --target hpshm --parallel "$(nproc 2>/dev/null || echo 2)" >/dev/null
lib=$(readlink -f "$build/libhpshm.so")

# The description: the public headers decide which types are the library's; no paths, no
# line-bound ids, so it changes only when the ABI does (and the line numbers it records move).
current=$build/libhpshm.abi
abidw --headers-dir include --drop-private-types --no-corpus-path --no-comp-dir-path --short-locs \
	--type-id-style hash --out-file "$current.raw" "$lib"
# The licence line every tracked file carries (scripts/check-spdx.sh), inside the root element:
# abidiff recognises the file by its first bytes.
sed '1a\  <!-- SPDX-License-Identifier: MIT -->' "$current.raw" >"$current"
rm -f "$current.raw"

soname_of() { sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$1"; }
# Each public struct, union and enum with its size: "name bits", from hpshm.h and provider.h.
public_sizes() {
	grep -oE "<(class|union|enum)-decl name='[A-Za-z0-9_]+' size-in-bits='[0-9]+'[^>]*filepath='(hpshm|provider)\.h'" "$1" |
		sed -E "s/^<[a-z]+-decl name='([^']+)' size-in-bits='([0-9]+)'.*/\1 \2/" | sort -u
}
soname=$(soname_of "$current")
echo "check-abi: $lib: soname $soname, $(grep -c "<elf-symbol " "$current") exported functions and variables"

write_baseline() {
	mkdir -p abi
	cp "$current" "$baseline"
	echo "check-abi: wrote $baseline for $soname: commit it (git add $baseline)"
}

if [[ ! -f $baseline ]]; then
	if ((update)); then
		write_baseline
		exit 0
	fi
	echo "check-abi: no baseline ($baseline): make it with $regen and commit it" >&2
	exit 1
fi
was=$(soname_of "$baseline")

if [[ $was != "$soname" ]]; then
	if ((update)); then
		echo "check-abi: the soname changed from $was to $soname: a new baseline for it"
		write_baseline
		exit 0
	fi
	echo "check-abi: the library's soname is $soname and the baseline describes $was." >&2
	echo "check-abi: a new soname starts a new ABI: record it in CHANGES.md, then make its baseline with" >&2
	echo "    $regen" >&2
	echo "and commit $baseline." >&2
	exit 1
fi

# abidiff's status is a bit set: 1 error, 2 usage, 4 the ABIs differ, 8 an incompatible change
# (a function gone).  Added functions alone make 4, and vanish with --no-added-syms.
diff_out=$build/abidiff.txt
set +e
abidiff --headers-dir1 include --headers-dir2 include "$baseline" "$current" >"$diff_out" 2>&1
rc=$?
abidiff --no-added-syms --headers-dir1 include --headers-dir2 include "$baseline" "$current" >/dev/null 2>&1
rc_changed=$?
set -e
if ((rc & 3)); then
	cat "$diff_out" >&2
	echo "check-abi: abidiff failed (status $rc)" >&2
	exit 1
fi

# A type the baseline has whose size changed.  A new type breaks nothing, and a struct the
# library reads by its version may grow at its tail: struct hpshm_provider is the
# application's, handed to the library, which reads a member appended after
# HPSHM_PROVIDER_ABI_MIN only when the provider's abi_version has it (provider.h,
# HPSHM_PROVIDER_HAS), so a provider built against an older header still works.
grows_by_version="hpshm_provider"
sizes_changed=$(awk -v grows=" $grows_by_version " '
	NR == FNR { was[$1] = $2; next }
	($1 in was) && was[$1] != $2 && !(index(grows, " " $1 " ") && $2 + 0 > was[$1] + 0) {
		printf "  was %s %s\n  now %s %s\n", $1, was[$1], $1, $2
	}' <(public_sizes "$baseline") <(public_sizes "$current"))
gone=$(comm -23 <(public_sizes "$baseline" | cut -d' ' -f1) <(public_sizes "$current" | cut -d' ' -f1) | sed 's/^/  gone /')
[[ -z $gone ]] || sizes_changed=$(printf '%s\n%s' "$sizes_changed" "$gone" | sed '/^$/d')

if ((rc == 0)); then
	echo "check-abi: the ABI is the baseline's ($soname): nothing added, nothing changed"
	exit 0
fi
if ((rc_changed == 0)); then
	echo "check-abi: compatible: the ABI of $soname gained functions the baseline does not list yet:"
	sed -n "s/^ *\[A\] /  /p" "$diff_out"
	echo "check-abi: a release takes them into the baseline: $regen"
	((update)) && write_baseline
	exit 0
fi

cat "$diff_out"
if ((update)); then
	if ((rc & 8)) || [[ -n $sizes_changed ]]; then
		echo "check-abi: not writing a baseline for $soname over an incompatible change (above):" >&2
		[[ -z $sizes_changed ]] || printf '%s\n' "check-abi: public types whose size changed:" "$sizes_changed" >&2
		echo "check-abi: raise HPSHM_VERSION_MINOR in include/hpshm.h (a new soname), record it in CHANGES.md, then $regen" >&2
		exit 1
	fi
	echo "check-abi: no function is gone and no public type changed size: taken as compatible"
	write_baseline
	exit 0
fi
echo "check-abi: FAILED: the ABI of $soname is not the baseline's (abidiff above, status $rc)." >&2
[[ -z $sizes_changed ]] || printf '%s\n' "check-abi: public types whose size changed:" "$sizes_changed" >&2
echo "check-abi: a program built against $soname would break.  Either undo the change, or:" >&2
echo "  - if it is incompatible (a function removed or changed, a struct grown or rearranged):" >&2
echo "    raise HPSHM_VERSION_MINOR in include/hpshm.h, so the soname changes, record it in CHANGES.md," >&2
echo "    and make the new soname's baseline with:  $regen" >&2
echo "  - if hpshm.h's rule makes it compatible (a member carved out of reserved space, no size changed):" >&2
echo "    $regen   (it refuses when a function is gone or a public type changed size)" >&2
echo "then commit $baseline (doc/abi.md)." >&2
exit 1
