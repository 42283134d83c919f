#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-docs.sh -- the documentation site is whole: built clean, no dead link, every
# error code in it, every C sample compiling.
#
#   scripts/check-docs.sh [BUILD_DIR]      (default: build-docs, configured if it is not)
#
# 1. builds the docs target (Doxygen; any warning is an error) into BUILD_DIR/doc/html;
# 2. checks every internal link and anchor of that site, offline
#    (scripts/check-docs-links.py: a link to a file or an id the site lacks is broken);
# 3. checks that the reference shows every code of hpshm.h's HPSHM_ERRORS X-macro as an
#    enumerator of hpshm_errcode with its value and message, and that doc/errors.md's page
#    has a section for each (Doxygen hides an enumerator it has no documentation for, so a
#    code could vanish from the reference without a warning);
# 4. compiles every ```c block of README.md and doc/*.md with the project's warnings
#    (scripts/check-doc-samples.py; CC picks the compiler).
# Needs Doxygen >= 1.9, python3, and APR's and httpd's headers for doc/apr.md's sample
# (scripts/deps.sh docs); no network.  Exit status 0 when all hold, 1 otherwise, 2 on a
# usage error.
set -euo pipefail

if (($# > 1)); then
	echo "usage: scripts/check-docs.sh [BUILD_DIR]" >&2
	exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-docs}
[[ $build == /* ]] || build=$PWD/$build
cd "$root"

if [[ ! -f $build/CMakeCache.txt ]]; then
	# The docs need no test, tool or example built: a configure this small is seconds.
	mkdir -p "$build"
	cmake -S "$root" -B "$build" -DHPSHM_BUILD_TESTS=OFF -DHPSHM_BUILD_TOOLS=OFF \
		-DHPSHM_BUILD_EXAMPLES=OFF >"$build/check-docs-configure.log" 2>&1 || {
		cat "$build/check-docs-configure.log" >&2
		echo "check-docs: configuring $build failed (the log is above)" >&2
		exit 1
	}
fi
targets=$(cmake --build "$build" --target help 2>/dev/null || true)
if ! grep -Eq '(^|[ .])docs($|[: ])' <<<"$targets"; then
	echo "check-docs: $build has no docs target: install Doxygen >= 1.9 and python3" \
		"(scripts/deps.sh docs) and configure again" >&2
	exit 1
fi

fail=0
echo "check-docs: building the docs target in $build"
cmake --build "$build" --target docs || {
	echo "check-docs: the docs target failed: every Doxygen warning is an error; fix the comment or page it names" >&2
	exit 1
}
site=$build/doc/html

python3 scripts/check-docs-links.py "$site" || fail=1

python3 - "$root" "$site" <<'PY' || fail=1
import glob, html, os, re, sys
root, site = sys.argv[1:]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(root, "doc"))
import errcodes  # doc/errcodes.py: the codes as the X-macro defines them

codes = errcodes.codes(os.path.join(root, "include", "hpshm.h"))
text = ""
for page in glob.glob(os.path.join(site, "*.html")):
	text += html.unescape(re.sub(r"<[^>]+>", "", open(page, encoding="utf-8").read()))
errors_page = os.path.join(site, "md_doc_errors.html")
page = html.unescape(re.sub(r"<[^>]+>", "", open(errors_page, encoding="utf-8").read())) \
	if os.path.exists(errors_page) else ""
missing, shown = [], 0
for name, value, msg in codes:
	bad = len(missing)
	if f'HPSHM_{name}\u00a0{value}, "{msg}"' not in text:
		missing.append(f"HPSHM_{name} is not in the reference as an enumerator with its value and message")
	if not re.search(rf'^\s*HPSHM_{name}\s*$\s*{re.escape(value)}, "{re.escape(msg)}"', page, re.M):
		missing.append(f"HPSHM_{name} has no section opening with its value and message in md_doc_errors.html")
	shown += len(missing) == bad
for m in missing:
	print(f"check-docs: {m}", file=sys.stderr)
print(f"check-docs: {shown} of the {len(codes)} error codes of HPSHM_ERRORS shown in the reference "
      "and on the error page, each with its value and message")
sys.exit(1 if missing else 0)
PY

python3 scripts/check-doc-samples.py "${CC:-cc}" || fail=1

if ((fail)); then
	echo "check-docs: FAILED (the lines above say what)" >&2
	exit 1
fi
echo "check-docs: the site in $site is whole"
