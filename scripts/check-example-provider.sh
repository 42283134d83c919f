#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-example-provider.sh -- an out-of-tree provider against the installed package.
#
#   ./scripts/check-example-provider.sh [TEST_BUILD_DIR]
#
# What a third party does with hpshm's provider SDK, start to end (doc/providers.md, "Your own
# provider"):
#   1. hpshm is built (Release, -DHPSHM_WERROR=ON) and installed into a temporary prefix;
#   2. examples/provider/ is configured against that prefix alone (find_package(hpshm)) and
#      built: the module libhpshm_file.so and file_demo;
#   3. file_demo registers the provider itself and keeps a segment in a file it names;
#   4. the INSTALLED `hpshm` loads the module (HPSHM_PROVIDER_MODULES) and lists the provider
#      and its keys (providers, providers --json, probe), refuses a bad value of its key and
#      a module that does not load, naming them;
#   5. the provider conformance suite (tests/test_conformance.c, from TEST_BUILD_DIR, default
#      build-test, configured by scripts/test.sh) runs on it: HPSHM_TEST_PROVIDER=file keeps
#      the cases to it and HPSHM_TEST_REQUIRE=file makes a skip a failure.
# Any part that fails fails the script.  HPSHM_RUN_WRAP (e.g. "flock /tmp/hpshm-machine.lock")
# prefixes the commands that make segments; HPSHM_BUILD_DIR (default build-example) is the
# package's build tree.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${HPSHM_BUILD_DIR:-build-example}
tests=${1:-build-test}
read -r -a wrap <<<"${HPSHM_RUN_WRAP:-}"
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/deps.sh build
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpshm-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() {
	echo "check-example-provider: FAIL: $*" >&2
	exit 1
}

echo "== check-example-provider: build and install hpshm into $prefix"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHPSHM_WERROR=ON -DHPSHM_BUILD_TESTS=OFF \
	-DHPSHM_BUILD_DOCS=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >"$tmp/configure.log" || {
	cat "$tmp/configure.log"
	fail "configure of hpshm"
}
cmake --build "$build" --parallel "$jobs"
cmake --install "$build" >/dev/null

echo "== check-example-provider: build examples/provider against the installed package only"
cmake -S examples/provider -B "$tmp/provider" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >/dev/null
cmake --build "$tmp/provider" --parallel "$jobs"
module=$tmp/provider/libhpshm_file.so
[[ -f $module ]] || fail "no module $module"
hpshm=$prefix/bin/hpshm

echo "== check-example-provider: file_demo registers the provider and uses it"
"${wrap[@]}" "$tmp/provider/file_demo" "$tmp/demo.mem" || fail "file_demo"

echo "== check-example-provider: the installed hpshm lists it (HPSHM_PROVIDER_MODULES)"
HPSHM_PROVIDER_MODULES=$module "$hpshm" providers | tee "$tmp/providers.txt"
grep -q '^file ' "$tmp/providers.txt" || fail "hpshm providers does not list file"
grep -q 'file\.path' "$tmp/providers.txt" || fail "hpshm providers does not list the key file.path"
HPSHM_PROVIDER_MODULES=$module "$hpshm" providers --json >"$tmp/providers.json"
python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["ok"] and doc["command"] == "providers", doc
rows = doc["result"]["providers"]
f = [r for r in rows if r["name"] == "file"]
assert f and {k["name"] for k in f[0]["keys"]} == {"file.path", "file.keep"}, rows' "$tmp/providers.json" ||
	fail "hpshm providers --json does not list file and its keys"
HPSHM_PROVIDER_MODULES=$module "${wrap[@]}" "$hpshm" probe --config "file.path=$tmp/probe.mem" >"$tmp/probe.txt"
grep -Eq '^  file +.* usable' "$tmp/probe.txt" || {
	cat "$tmp/probe.txt"
	fail "hpshm probe does not find file usable with file.path set"
}
grep -q "file.path *= $tmp/probe.mem" "$tmp/probe.txt" || fail "hpshm probe does not show file.path's value"
rc=0
HPSHM_PROVIDER_MODULES=$module "$hpshm" probe --config file.keep=maybe 2>"$tmp/bad.txt" >/dev/null || rc=$?
((rc == 2)) && grep -q 'file\.keep' "$tmp/bad.txt" || fail "a bad value of file.keep was not refused (exit $rc)"
rc=0
HPSHM_PROVIDER_MODULES=$tmp/missing.so "$hpshm" providers 2>"$tmp/missing.txt" >/dev/null || rc=$?
((rc == 1)) && grep -q "$tmp/missing.so" "$tmp/missing.txt" || fail "a missing module was not refused by name (exit $rc)"

echo "== check-example-provider: the provider conformance suite on it ($tests/tests/test_conformance)"
if [[ ! -f $tests/CMakeCache.txt ]]; then
	cmake -S . -B "$tests" -DHPSHM_WERROR=ON -DHPSHM_BUILD_TESTS=ON -DHPSHM_BUILD_TOOLS=ON >/dev/null
fi
cmake --build "$tests" --parallel "$jobs" --target test_conformance
HPSHM_PROVIDER_MODULES=$module HPSHM_TEST_PROVIDER=file HPSHM_TEST_REQUIRE=file HPSHM_FILE_PATH=$tmp/conformance.mem \
	"${wrap[@]}" "$tests/tests/test_conformance" --jobs=1 --verbose 2>&1 | tee "$tmp/conformance.txt" ||
	fail "the conformance suite failed on the file provider"
grep -q 'provider file' "$tmp/conformance.txt" || fail "the conformance suite ran no case of the file provider"
[[ ! -e $tmp/conformance.mem ]] || fail "the conformance run left $tmp/conformance.mem behind"
echo "check-example-provider: examples/provider builds against the installed package, registers, lists and passes the conformance suite ($SECONDS s)"
