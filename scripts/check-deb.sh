#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-deb.sh -- build hpshm's Debian packages (debian/) and check them as a user gets them.
#
#   ./scripts/check-deb.sh
#
# 1. `dpkg-buildpackage -us -uc -b` in a temporary copy of the tree: the build writes its
#    .debs and .changes into the parent directory of the tree it builds, and its debian/tmp,
#    obj-* and stamp files into the tree itself, so neither the checkout nor its parent is
#    touched.  The copy holds the files git knows of and the ones it would add (untracked,
#    not ignored), as they are in the work tree.
# 2. lintian on the .changes: any E: or W: fails (they are shown).  An override in
#    debian/*.lintian-overrides says why it is there.
# 3. The packages' files, as the packages install them: every .deb is unpacked (dpkg-deb -x)
#    into one temporary root, and tests/install_client.sh, the check of `cmake --install`,
#    is run on that root: soname, the interposer where `hpshm exec` finds it, bin/hpshm
#    without libapr-1, pkg-config (shared and --static) and find_package(hpshm) (hpshm::hpshm
#    and hpshm::hpshm_static) from a moved copy.  Then what install_client.sh does not know
#    of: the APR library's clients (pkg-config hpshm_apr, find_package(hpshm COMPONENTS apr)),
#    the apr provider loaded from it, httpd's module loaded by `apache2 -t` through its .load
#    file, and `hpshm --version` and `hpshm providers` from the package.
#
# Why unpacked and not installed with dpkg -i: installing puts hpshm into /usr of a machine that
# other builds and tests share while this runs, where a build that should find its own copy
# (tests/install_client.sh checks for exactly that mistake) or an httpd that should not load
# the module (dh_apache2's postinst enables it) would find the system's; undoing it needs
# dpkg -P to succeed even after a failure.  What dpkg -i adds beyond the files is checked
# without installing: the packages' dependencies are satisfiable on this machine
# (apt-get install --simulate), and libhpshm0.2's shlibs and symbols are those of its soname.
#
# With HPSHM_DEB_INSTALL=1, as root (.ci/run sets it), the packages are then installed for
# real with dpkg -i, a client is built with the system's pkg-config against /usr and run, and
# every package is purged again.
#
# The client programs create 1 MiB segments (huge_pages=try): run this under
# `flock /tmp/hpshm-machine.lock` on a shared machine (.ci/run holds that lock already).
#
# Environment: HPSHM_SKIP_DEPS=1 (no package check), HPSHM_DEB_JOBS (parallel build jobs,
# default: the CPUs), HPSHM_DEB_KEEP=DIR (copy the .debs and lintian's output there).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fail() {
	echo "check-deb: FAIL: $*" >&2
	exit 1
}
step() { echo "== check-deb: $*"; }

bash scripts/deps.sh deb

# The package's version is the library's: debian/changelog names the release of
# include/hpshm.h, and the runtime package's name carries the soname (libhpshm0.MINOR in 0.x).
version() { sed -n "s/^#define HPSHM_VERSION_$1 \\([0-9]*\\)$/\\1/p" include/hpshm.h; }
upstream=$(version MAJOR).$(version MINOR).$(version PATCH)
debversion=$(dpkg-parsechangelog -l debian/changelog -S Version)
[[ ${debversion%-*} == "$upstream" ]] ||
	fail "debian/changelog is at $debversion, include/hpshm.h at $upstream: add an entry for $upstream-1 at its top" \
		"(devscripts' dch -v $upstream-1 writes one)"
if (($(version MAJOR) == 0)); then
	abi=0.$(version MINOR)
else
	abi=$(version MAJOR)
fi
grep -qx "Package: libhpshm$abi" debian/control ||
	fail "debian/control has no package libhpshm$abi for the soname libhpshm.so.$abi (doc/abi.md): rename the" \
		"runtime packages and their files in debian/ (.install, .symbols with the new soname, .lintian-overrides)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpshm-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$tmp/build/hpshm-$upstream

step "copy the tree to $src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -xf - -C "$src"

step "dpkg-buildpackage -us -uc -b"
export DEB_BUILD_OPTIONS="parallel=${HPSHM_DEB_JOBS:-$(nproc 2>/dev/null || echo 2)}"
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 ||
	{ tail -n 60 "$tmp/build.log" >&2; fail "dpkg-buildpackage failed (the end of its log is above)"; }
# The symbols files (debian/*.symbols) hold every exported function with the version that
# first had it.  A function gone fails the build (dpkg-gensymbols' default check level); one
# added is shown here, as scripts/check-abi.sh lists it, until a release writes it in with
# the version it arrives in (the new symbols file is in the diff shown).
if grep -q "^dpkg-gensymbols: warning" "$tmp/build.log"; then
	echo "check-deb: note: the exported symbols differ from debian/*.symbols:"
	awk '/^dpkg-gensymbols: warning/ { on = 1 } on && !/^(dpkg-gensymbols|---|\+\+\+|@@|  [^ ]|\+|-)/ { on = 0 }
		on { print "   " $0 }' "$tmp/build.log"
	echo "   (a new function goes into the symbols file with the upstream version that first has it)"
fi
changes=$(find "$tmp/build" -maxdepth 1 -name '*.changes' -print -quit)
mapfile -t debs < <(find "$tmp/build" -maxdepth 1 -name '*.deb' | sort)
[[ -n $changes ]] && ((${#debs[@]})) || fail "dpkg-buildpackage wrote no .changes or .deb"
for d in "${debs[@]}"; do
	echo "   $(basename "$d"): $(dpkg-deb -f "$d" Installed-Size) KiB installed"
done

step "lintian (errors and warnings fail)"
lintian --fail-on error,warning --tag-display-limit 0 "$changes" >"$tmp/lintian.txt" 2>&1 && lint=0 || lint=$?
cat "$tmp/lintian.txt"
if [[ -n ${HPSHM_DEB_KEEP:-} ]]; then
	mkdir -p "$HPSHM_DEB_KEEP"
	cp "${debs[@]}" "$changes" "$tmp/lintian.txt" "$HPSHM_DEB_KEEP"/
fi
((lint == 0)) || fail "lintian reports errors or warnings (above)"

step "what dpkg -i would check: dependencies, shlibs, symbols"
runtime=$(printf '%s\n' "${debs[@]}" | grep "/libhpshm${abi}_") || fail "no libhpshm$abi .deb was built"
apt-get install --simulate -qq "${debs[@]}" >"$tmp/simulate.txt" 2>&1 ||
	{ cat "$tmp/simulate.txt" >&2; fail "the packages' dependencies cannot be met on this machine"; }
mkdir "$tmp/control"
dpkg-deb -e "$runtime" "$tmp/control"
grep -q "^libhpshm $abi libhpshm$abi " "$tmp/control/shlibs" ||
	fail "libhpshm$abi's shlibs does not name libhpshm $abi: $(cat "$tmp/control/shlibs")"
grep -q "^libhpshm.so.$abi libhpshm$abi " "$tmp/control/symbols" ||
	fail "libhpshm$abi has no symbols file for libhpshm.so.$abi"
tool_deb=$(printf '%s\n' "${debs[@]}" | grep '/hpshm-tools_')
dpkg-deb -f "$tool_deb" Depends | grep -q libapr && fail "hpshm-tools depends on APR: $(dpkg-deb -f "$tool_deb" Depends)"

step "unpack every .deb into one root, and check it as tests/install_client.sh checks an install"
pkgroot=$tmp/root
for d in "${debs[@]}"; do
	dpkg-deb -x "$d" "$pkgroot"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=$pkgroot/usr/lib/$multiarch
# install_client.sh installs a build directory with `cmake --install BUILD --prefix P`; this
# "build directory" installs the packages' /usr instead, so every check it makes of an install
# is made of the packages.
mkdir "$tmp/fakebuild"
cat >"$tmp/fakebuild/cmake_install.cmake" <<EOF
file(COPY "$pkgroot/usr/" DESTINATION "\${CMAKE_INSTALL_PREFIX}" USE_SOURCE_PERMISSIONS)
EOF
HPSHM_SONAME=libhpshm.so.$abi HPSHM_EXPECT_TOOL=1 HPSHM_EXPECT_PRELOAD=1 HPSHM_EXPECT_APR=0 \
	bash tests/install_client.sh "$tmp/fakebuild"

step "libhpshm_apr from its packages: pkg-config hpshm_apr and find_package(hpshm COMPONENTS apr)"
mkdir "$tmp/apr"
cat >"$tmp/apr/client.c" <<'EOF'
#include <stdio.h>

#include <hpshm.h>
#include <hpshm/apr.h>

int main(void)
{
	printf("apr client: hpshm %s\n", hpshm_version());
	return 0;
}
EOF
export PKG_CONFIG_PATH=$libdir/pkgconfig
read -r -a apr_flags <<<"$(pkg-config --cflags --libs hpshm_apr)"
[[ $(realpath -m "$(pkg-config --variable=includedir hpshm_apr)") == "$pkgroot/usr/include" ]] ||
	fail "pkg-config hpshm_apr does not point into the packages' root: ${apr_flags[*]}"
cc -o "$tmp/apr/client_pc" "$tmp/apr/client.c" "${apr_flags[@]}" || fail "cc \$(pkg-config --cflags --libs hpshm_apr) failed"
LD_LIBRARY_PATH=$libdir "$tmp/apr/client_pc" || fail "the pkg-config hpshm_apr client did not run"
cat >"$tmp/apr/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(hpshm_apr_client C)
find_package(hpshm 0.2 REQUIRED COMPONENTS apr)
add_executable(client_apr client.c)
target_link_libraries(client_apr PRIVATE hpshm::hpshm_apr)
EOF
cmake -S "$tmp/apr" -B "$tmp/apr/build" -DCMAKE_PREFIX_PATH="$pkgroot/usr" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/apr.log" 2>&1 &&
	cmake --build "$tmp/apr/build" >>"$tmp/apr.log" 2>&1 ||
	{ cat "$tmp/apr.log"; fail "a find_package(hpshm COMPONENTS apr) project did not build"; }
grep -q "^hpshm_DIR:PATH=$pkgroot/usr/" "$tmp/apr/build/CMakeCache.txt" ||
	fail "find_package(hpshm) found $(sed -n 's/^hpshm_DIR:PATH=//p' "$tmp/apr/build/CMakeCache.txt"), not the packages'"
"$tmp/apr/build/client_apr" || fail "the find_package(hpshm COMPONENTS apr) client did not run"

step "httpd's module: its libraries resolve, its .load file names it"
module=$pkgroot/usr/lib/apache2/modules/mod_socache_hpshm.so
load=$pkgroot/etc/apache2/mods-available/socache_hpshm.load
[[ -f $module ]] || fail "no mod_socache_hpshm.so in /usr/lib/apache2/modules"
grep -qx "LoadModule socache_hpshm_module /usr/lib/apache2/modules/mod_socache_hpshm.so" "$load" ||
	fail "$load does not load the module: $(cat "$load" 2>/dev/null)"
readelf -d "$module" | grep -qE 'R(UN)?PATH' && fail "mod_socache_hpshm.so carries an rpath"
deps=$(LD_LIBRARY_PATH=$libdir ldd "$module")
grep -q "not found" <<<"$deps" && fail "mod_socache_hpshm.so: libraries not found: $deps"
grep -qF "$libdir/libhpshm.so.$abi" <<<"$deps" || fail "mod_socache_hpshm.so does not load libhpshm.so.$abi"
# httpd itself loads it through the package's .load file (pointed into the root): `apache2 -t`
# reads the configuration and loads every module, which creates no cache and starts no server.
mkdir "$tmp/httpd"
{
	echo "ServerRoot $tmp/httpd"
	echo "DefaultRuntimeDir $tmp/httpd"
	echo "ErrorLog /dev/stderr"
	echo "ServerName localhost"
	echo "Listen 127.0.0.1:1"
	echo "LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so"
	sed "s#/usr/lib/apache2/#$pkgroot/usr/lib/apache2/#" "$load"
} >"$tmp/httpd/httpd.conf"
LD_LIBRARY_PATH=$libdir apache2 -t -D DUMP_MODULES -f "$tmp/httpd/httpd.conf" >"$tmp/httpd/modules" 2>&1 ||
	{ cat "$tmp/httpd/modules"; fail "apache2 -t cannot load the module through its .load file"; }
grep -q "socache_hpshm_module (shared)" "$tmp/httpd/modules" ||
	{ cat "$tmp/httpd/modules"; fail "apache2 -t does not list socache_hpshm_module"; }

step "the tool from its package"
"$pkgroot/usr/bin/hpshm" --version
"$pkgroot/usr/bin/hpshm" providers >"$tmp/providers.txt" || { cat "$tmp/providers.txt"; fail "hpshm providers failed"; }
head -n 12 "$tmp/providers.txt"
# libhpshm_apr is also the apr provider, a module the tool loads (HPSHM_PROVIDER_MODULES).
LD_LIBRARY_PATH=$libdir HPSHM_PROVIDER_MODULES=$libdir/libhpshm_apr.so.$abi "$pkgroot/usr/bin/hpshm" providers \
	>"$tmp/providers-apr.txt" 2>&1 || { cat "$tmp/providers-apr.txt"; fail "hpshm providers with the apr module failed"; }
grep -q "^apr " "$tmp/providers-apr.txt" ||
	{ cat "$tmp/providers-apr.txt"; fail "hpshm does not list the apr provider of libhpshm_apr.so.$abi"; }
# With HPSHM_DEB_INSTALL=1, as root (.ci/run: a machine the run has to itself, one step at a time), the
# packages are installed for real as well: dpkg -i, a client built with the system's pkg-config
# against /usr and run, the tool from /usr/bin, then every package purged, on a failure too.
if [[ ${HPSHM_DEB_INSTALL:-0} == 1 ]] && ((EUID == 0)); then
	step "CI: dpkg -i the packages, a client against /usr, dpkg -P"
	mapfile -t names < <(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done)
	for n in "${names[@]}"; do
		[[ $(dpkg-query -W -f='${Status}' "$n" 2>/dev/null || true) == "install ok installed" ]] &&
			fail "$n is installed on this machine already: dpkg -i would replace it (dpkg -P $n first)"
	done
	purge() { dpkg -P "${names[@]}" >"$tmp/purge.log" 2>&1 || cat "$tmp/purge.log" >&2; }
	trap 'purge; rm -rf "$tmp"' EXIT
	dpkg -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i of the packages failed"; }
	cat >"$tmp/sys.c" <<'EOF'
#include <stdio.h>

#include <hpshm.h>

int main(void)
{
	hpshm_config *cfg = NULL;
	hpshm_segment *seg = NULL;
	hpshm_error err;

	if (hpshm_config_new(&cfg) != 0 || hpshm_config_parse(cfg, "huge_pages=try", &err) != 0 ||
	    hpshm_segment_create(&seg, 1 << 20, cfg, &err) != 0) {
		fprintf(stderr, "installed client: %s\n", err.message);
		return 1;
	}
	printf("installed client: hpshm %s, provider %s\n", hpshm_version(), hpshm_segment_report(seg)->provider);
	hpshm_segment_destroy(seg);
	hpshm_config_free(cfg);
	return 0;
}
EOF
	read -r -a sys_flags <<<"$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs hpshm)"
	cc -o "$tmp/sys_client" "$tmp/sys.c" "${sys_flags[@]}" || fail "cc \$(pkg-config --cflags --libs hpshm) against /usr failed"
	ldd "$tmp/sys_client" | grep -qF "/lib/$multiarch/libhpshm.so.$abi" ||
		fail "the client does not load /usr/lib/$multiarch/libhpshm.so.$abi: $(ldd "$tmp/sys_client")"
	env -u LD_LIBRARY_PATH "$tmp/sys_client" || fail "the client of the installed packages did not run"
	/usr/bin/hpshm --version || fail "/usr/bin/hpshm from hpshm-tools did not run"
	purge
	trap 'rm -rf "$tmp"' EXIT
	for n in "${names[@]}"; do
		[[ $(dpkg-query -W -f='${Status}' "$n" 2>/dev/null || true) == "install ok installed" ]] &&
			fail "$n is still installed after dpkg -P"
	done
	echo "check-deb: installed with dpkg -i, a client built and run against /usr, purged again"
fi
echo "check-deb: ${#debs[@]} packages of hpshm $debversion build, pass lintian and work as installed"
