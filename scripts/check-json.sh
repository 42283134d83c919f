#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-json.sh -- every `hpshm COMMAND --json` against its JSON Schema (doc/schema/).
#
#   scripts/check-json.sh [BUILD_DIR]        (default: build-test; built here if needed)
#
# Each command with --json runs: as it succeeds, with a bad option (exit 2), with a bad
# configuration (exit 2), and where it can, with huge_pages=on and whatever pool the machine
# has (after CI the pool is 0: exit 1 then, but a machine with pages passes too; either
# verdict must validate).  Every output must be one document that validates against
# doc/schema/envelope.json, its "result" (when not null) against doc/schema/COMMAND.json, with
# "command" the command run, "ok" true exactly when the exit status is 0, and a usage error's
# error HPSHM_EINVAL with the option in "key".  bench and check create segments: run it under
# /tmp/hpshm-machine.lock where the machine is shared.  run has no --json (its stdout is
# CMD's): it must refuse --json with exit 2 and print nothing on stdout.
#
# Installs python3-jsonschema with scripts/deps.sh json (HPSHM_SKIP_DEPS=1: you did).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build-test}
bash scripts/deps.sh json >/dev/null
# Debian's python3-jsonschema is for Debian's python3: prefer it over another python3 in PATH.
py=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import jsonschema' 2>/dev/null; then
		py=$p
		break
	fi
done
[[ -n $py ]] || { echo "check-json: FAIL: no python3 with jsonschema (scripts/deps.sh json)" >&2; exit 1; }
[[ -x $build/tools/hpshm ]] || cmake --build "$build" --target hpshm_tool >/dev/null
hpshm=$build/tools/hpshm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One case: its name, the exit statuses it may end with ("0", "2", "0 1"), the arguments.
n=0
run() {
	local name=$1 want=$2 rc=0
	shift 2
	n=$((n + 1))
	"$hpshm" "$@" >"$tmp/$n.json" 2>"$tmp/$n.err" || rc=$?
	printf '%s\t%s\t%s\t%s\n' "$n" "$name" "$want" "$rc" >>"$tmp/cases"
}

run "providers" 0 providers --json
run "providers bad option" 2 providers --json --bogus
HPSHM_PROVIDER_MODULES=/nonexistent/hpshm-check-json.so run "providers bad module" 1 providers --json
run "probe" 0 probe --json --size 4MiB
run "probe bad option" 2 probe --bogus --json
run "probe bad config" 2 probe --json --config huge_pages=maybe
run "plan" 0 plan 64MiB --json
run "plan bad option" 2 plan 64MiB --json --bogus
run "plan bad config" 2 plan 64MiB --json --config no_such_key=1
run "plan bad size" 2 plan 0 --json
run "check" 0 check --size 4MiB --config huge_pages=off --json
run "check bad option" 2 check --size 4MiB --json --bogus
run "check missing value" 2 check --json --size
run "check bad config" 2 check --size 4MiB --json --config huge_pages=maybe
run "check huge_pages=on" "0 1" check --size 4MiB --json --config huge_pages=on
run "check no such page size" 1 check --size 4MiB --json --config huge_pages=on,huge_page_size=2GiB
run "ls" 0 ls --json
run "ls bad option" 2 ls --json --bogus
run "gc --dry-run" 0 gc --dry-run --json
run "gc bad option" 2 gc --json --all-users
run "bench" 0 bench --size 4MiB --rounds 1 --phase-seconds 0.02 --quiet --json
run "bench bad option" 2 bench --json --csv
if [[ $(uname -s) == Linux ]]; then
	run "exec" 0 exec --json --min-size 64MiB -- true
	run "exec bad option" 2 exec --json --bogus -- true
	run "exec bad config" 2 exec --json --config name=x -- true
	run "exec not found" 127 exec --json -- /nonexistent/hpshm-check-json
	run "exec huge_pages=on largest" "0 1" exec --json --config huge_pages=on,huge_page_size=largest -- true
fi

"$py" - "$tmp" doc/schema <<'PY'
import json, os, sys
import jsonschema

tmp, sd = sys.argv[1], sys.argv[2]
load = lambda p: json.load(open(p))
V = jsonschema.Draft202012Validator
for f in sorted(os.listdir(sd)):
	V.check_schema(load(os.path.join(sd, f)))
envelope = V(load(os.path.join(sd, "envelope.json")))
bad = 0
for line in open(os.path.join(tmp, "cases")):
	n, name, want, rc = line.rstrip("\n").split("\t")
	why = []
	if rc not in want.split():
		why.append("exit %s, expected %s" % (rc, want))
	try:
		doc = load(os.path.join(tmp, n + ".json"))
	except ValueError as e:
		doc = None
		why.append("not one JSON document: %s" % e)
	if doc is not None:
		why += ["envelope: %s at %s" % (e.message, "/".join(map(str, e.path))) for e in envelope.iter_errors(doc)]
		cmd = name.split()[0]
		if doc.get("command") != cmd:
			why.append("command is %r, not %r" % (doc.get("command"), cmd))
		if doc.get("ok") != (rc == "0"):
			why.append("ok is %r with exit %s" % (doc.get("ok"), rc))
		if isinstance(doc.get("result"), dict):
			rs = V(load(os.path.join(sd, cmd + ".json")))
			why += ["result: %s at %s" % (e.message, "/".join(map(str, e.path))) for e in rs.iter_errors(doc["result"])]
		err = doc.get("error") or {}
		if rc == "2" and not (err.get("name", "").startswith("HPSHM_E") and err.get("key")):
			why.append("a usage or configuration error without its code and key: %r" % err)
	verdict = "ok " if not why else "FAIL"
	print("check-json: %s %-28s exit %-3s %s" % (verdict, name, rc, (doc or {}).get("error", {}) and doc["error"]["name"] or ""))
	for w in why:
		print("    " + w)
		bad = 1
	if why:
		print(open(os.path.join(tmp, n + ".err")).read()[:2000], end="")
sys.exit(bad)
PY
rc=0
# run has no --json: its stdout is CMD's, so --json is refused as any unknown option, in text.
out=$("$hpshm" run --json --size 1MiB -- true 2>/dev/null) || rc=$?
if [[ $rc -ne 2 || -n $out ]]; then
	echo "check-json: FAIL: run --json: exit $rc (expected 2), stdout '$out' (expected none)" >&2
	exit 1
fi
echo "check-json: every command's --json validates against doc/schema/ ($n runs)"
