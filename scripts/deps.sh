#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/deps.sh -- install what hpshm needs from Debian's package registry.
#
#   scripts/deps.sh [build|test|docs|cross|windows|coverage|abi|check|postgres|nginx|httpd|man|json|deb]     (default: test)
#
#   build  compiler, CMake, pkg-config: enough for the library and the hpshm tool
#   test   build + Criterion, APR, httpd's apxs (apache2-dev), Doxygen/graphviz, clang with its sanitizer runtime, python3
#   docs   build + Doxygen, graphviz and python3: the docs target and scripts/check-docs.sh
#          (its link check is a python3 script, so no link checker package is needed), and
#          APR's and httpd's headers, which doc/apr.md's C sample is compiled against
#   cross  build + what scripts/test-cross.sh needs: the i686, aarch64 and s390x cross
#          compilers with their C libraries, qemu-user, musl-gcc.  Never gcc-multilib: it
#          conflicts with the cross compilers and apt would remove them
#   coverage test + gcovr, which scripts/coverage.sh reads gcc's --coverage data with
#   abi    build + abigail-tools (libabigail's abidw and abidiff), for scripts/check-abi.sh
#   check  universal-ctags, which scripts/check-size.sh finds function definitions with
#   postgres PostgreSQL 15, the server scripts/pg-exec.sh and scripts/busy-machine.sh run; any
#          cluster the package starts is stopped again, so it takes no huge pages from the pool
#   nginx  Debian's nginx, which scripts/nginx-exec.sh runs under `hpshm exec` (its binary
#          upgrade above all)
#   httpd  Apache httpd 2.4 with its development files (apxs, ap_socache.h) and ab: the
#          mod_socache_hpshm module is built against them and scripts/httpd-socache.sh runs
#          it; a server the package started is stopped again
#   man    man-db and groff, which scripts/check-man.sh renders the man pages with (warnings
#          fail), bash-completion and zsh, which it loads the completion scripts in
#   json   python3-jsonschema, which scripts/check-json.sh validates every command's --json
#          output with against doc/schema/
#   deb    build + debian/control's Build-Depends (debhelper, APR's and httpd's development
#          files), lintian, and httpd's binary (no service): scripts/check-deb.sh builds the
#          .debs, checks them, and has httpd load the module
#
# Only missing packages are installed, so a second run costs one dpkg query per package and no
# network.  Uses sudo when not run as root.  Set HPSHM_SKIP_DEPS=1 to skip this step entirely
# (for example on a machine that is not Debian, where you install the equivalents yourself).
set -euo pipefail

what=${1:-test}
build_pkgs=(build-essential cmake pkg-config)
test_pkgs=(libcriterion-dev libapr1-dev apache2-dev doxygen graphviz clang libclang-rt-14-dev python3 python3-yaml)
cross_pkgs=(gcc-i686-linux-gnu libc6-dev-i386-cross gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user musl-tools)
docs_pkgs=(doxygen graphviz python3 libapr1-dev apache2-dev)
coverage_pkgs=(gcovr)
abi_pkgs=(abigail-tools)
check_pkgs=(universal-ctags)
postgres_pkgs=(postgresql-15)
nginx_pkgs=(nginx)
httpd_pkgs=(apache2 apache2-dev apache2-utils curl)
man_pkgs=(man-db groff-base bash-completion zsh)
json_pkgs=(python3 python3-jsonschema)
deb_pkgs=(debhelper dpkg-dev lintian libapr1-dev apache2-dev apache2-bin)
windows_pkgs=(mingw-w64 wine wine64 cmake)

case "$what" in
build) pkgs=("${build_pkgs[@]}") ;;
test) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
docs) pkgs=("${build_pkgs[@]}" "${docs_pkgs[@]}") ;;
cross) pkgs=("${build_pkgs[@]}" "${cross_pkgs[@]}") ;;
windows) pkgs=("${windows_pkgs[@]}") ;;
coverage) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" "${coverage_pkgs[@]}") ;;
abi) pkgs=("${build_pkgs[@]}" "${abi_pkgs[@]}") ;;
check) pkgs=("${check_pkgs[@]}") ;;
postgres) pkgs=("${postgres_pkgs[@]}") ;;
nginx) pkgs=("${nginx_pkgs[@]}") ;;
httpd) pkgs=("${build_pkgs[@]}" "${httpd_pkgs[@]}") ;;
man) pkgs=("${build_pkgs[@]}" "${man_pkgs[@]}") ;;
json) pkgs=("${build_pkgs[@]}" "${json_pkgs[@]}") ;;
deb) pkgs=("${build_pkgs[@]}" "${deb_pkgs[@]}") ;;
*)
	echo "usage: $0 [build|test|docs|cross|windows|coverage|abi|check|postgres|nginx|httpd|man|json|deb]" >&2
	exit 2
	;;
esac

if [[ ${HPSHM_SKIP_DEPS:-0} == 1 ]]; then
	echo "deps: HPSHM_SKIP_DEPS=1, not checking packages"
	exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: this is not a Debian-like system; install the equivalents of:" >&2
	echo "      ${pkgs[*]}" >&2
	echo "      then re-run with HPSHM_SKIP_DEPS=1" >&2
	exit 1
fi

# dpkg -s also succeeds for a removed package whose config files remain, so ask for the
# exact status instead.
missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
	echo "deps: all ${#pkgs[@]} packages ($what) already installed"
	exit 0
fi

sudo=()
if ((EUID != 0)); then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "deps: missing packages: ${missing[*]}" >&2
		echo "      not root and no sudo: install them as root, then re-run" >&2
		exit 1
	fi
	sudo=(sudo)
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends "${missing[@]}"

# The package starts a "main" cluster (huge_pages=try) that would take pages from the pool
# under the scripts that reserve them: stop every cluster the install started.
if [[ $what == postgres ]] && command -v pg_lsclusters >/dev/null 2>&1; then
	pg_lsclusters --no-header 2>/dev/null | awk '$4 == "online" { print $1, $2 }' |
		while read -r ver name; do
			echo "deps: stopping the cluster $ver/$name the package started"
			"${sudo[@]}" pg_ctlcluster "$ver" "$name" stop || true
		done
fi

# The package starts Debian's own server (port 80, its configuration) where an init system runs
# services: it is not ours and would hold ports, so it is stopped.
if [[ $what == httpd ]] && [[ -s /run/apache2/apache2.pid ]] &&
	kill -0 "$(cat /run/apache2/apache2.pid)" 2>/dev/null; then
	echo "deps: stopping the apache2 service the package started"
	"${sudo[@]}" apache2ctl -k stop 2>/dev/null || "${sudo[@]}" kill -TERM "$(cat /run/apache2/apache2.pid)" || true
fi
