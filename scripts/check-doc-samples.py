#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# scripts/check-doc-samples.py -- every ```c block of README.md and doc/*.md compiles.
#
#   python3 scripts/check-doc-samples.py [CC]        (CC: the compiler, default $CC or cc)
#
# Readers copy these blocks into their programs, so they are held to the project's own
# warnings (hpshm_warnings in CMakeLists.txt, read from there, with -std=c11 and -Werror),
# compiled with -fsyntax-only against include/.  A block is one of three kinds, said by an
# HTML comment on the line before its fence (invisible on GitHub and in Doxygen's pages):
#
#   (no comment)                      a whole translation unit, compiled as it stands;
#   <!-- sample: top-level ... -->    declarations and definitions at file scope;
#   <!-- sample: body ... -->         statements, wrapped in a function.
#
# A top-level or body block gets hpshm.h (and stddef.h) included first, and its options after
# the kind, separated by "|":
#
#   include: hpshm/apr.h http_log.h   more headers (hpshm/apr.h adds APR's include directory,
#                                     an httpd header httpd's, both as system headers)
#   given: hpshm_config *cfg; ...     what the text around the block has already declared,
#                                     declared extern ahead of it (functions as prototypes)
#
# and a line holding only "..." stands for code left out, and is dropped.  Such a block is a
# part of a program, whose other parts use what it declares: -Wno-unused is its only
# allowance.  Nothing is skipped: the script prints how many blocks it compiled, of which
# kinds, and fails on any error, naming the page and line.
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MARKER = re.compile(r"^\s*<!--\s*sample:\s*(.*?)\s*-->\s*$")
FENCE_C = re.compile(r"^\s*```c\s*$")
FENCE_END = re.compile(r"^\s*```\s*$")


def project_warnings():
	"""The GNU/Clang warning list of hpshm_warnings, from CMakeLists.txt: one definition."""
	text = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
	m = re.search(r"target_compile_options\(hpshm_warnings INTERFACE\s+(-W[^)]*)\)", text)
	if not m:
		sys.exit("check-doc-samples: no target_compile_options(hpshm_warnings INTERFACE -W...) in CMakeLists.txt")
	return m.group(1).split()


def blocks():
	"""Each ```c block: (page, line of its fence, kind, options, code lines)."""
	pages = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "doc", "*.md")))
	for page in pages:
		lines = open(page, encoding="utf-8").read().split("\n")
		i = 0
		while i < len(lines):
			if not FENCE_C.match(lines[i]):
				i += 1
				continue
			prev = next((l for l in reversed(lines[:i]) if l.strip()), "")
			m = MARKER.match(prev)
			kind, opts = "whole", {}
			if m:
				kind, *rest = [p.strip() for p in m.group(1).split("|")]
				for r in rest:
					name, _, value = r.partition(":")
					opts[name.strip()] = value.strip()
			end = i + 1
			while end < len(lines) and not FENCE_END.match(lines[end]):
				end += 1
			yield os.path.relpath(page, ROOT), i + 1, kind, opts, lines[i + 1:end]
			i = end + 1


def system_includes(headers):
	"""-isystem flags for APR's and httpd's headers, asked of their own tools."""
	httpd = any(h in ("httpd.h", "ap_config.h") or h.startswith(("http_", "ap_")) for h in headers)
	apr = httpd or any(h == "hpshm/apr.h" or h.startswith("apr") for h in headers)
	flags = []
	if apr:
		out = subprocess.run(["pkg-config", "--cflags", "apr-1"], capture_output=True, text=True)
		if out.returncode != 0:
			raise RuntimeError("APR's headers are needed and pkg-config knows no apr-1 (Debian: libapr1-dev)")
		flags += ["-isystem" + f[2:] if f.startswith("-I") else f for f in shlex.split(out.stdout)]
	if httpd:
		if not shutil.which("apxs"):
			raise RuntimeError("httpd's headers are needed and there is no apxs (Debian: apache2-dev)")
		out = subprocess.run(["apxs", "-q", "INCLUDEDIR"], capture_output=True, text=True)
		flags += ["-isystem" + out.stdout.strip()]
	return flags


def source(page, line, kind, opts, code):
	"""The translation unit a block is compiled as; #line makes the compiler name the page."""
	at = f'#line {line + 1} "{page}"'
	if kind == "whole":
		return "\n".join([at] + code) + "\n"
	code = ["" if l.strip() == "..." else l for l in code]  # blank, so line numbers still match
	out = ["#include <stddef.h>", "#include <hpshm.h>"]
	out += [f"#include <{h}>" for h in opts.get("include", "").split()]
	for decl in filter(None, (d.strip() for d in opts.get("given", "").split(";"))):
		out.append(f"extern {decl};")
	if kind == "top-level":
		out += [at] + code
	else:
		out += ["void hpshm_doc_sample(void);", "void hpshm_doc_sample(void)", "{", at] + code + ["}"]
	return "\n".join(out) + "\n"


def main():
	cc = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CC", "cc")
	warnings = project_warnings()
	counts, failed = {"whole": 0, "top-level": 0, "body": 0}, []
	with tempfile.TemporaryDirectory(prefix="hpshm-doc-samples.") as tmp:
		for page, line, kind, opts, code in blocks():
			where = f"{page}:{line}"
			if kind not in counts:
				failed.append(f"{where}: unknown sample kind \"{kind}\" (whole, top-level or body)")
				continue
			headers = opts.get("include", "").split()
			headers += re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)', "\n".join(code), re.M)
			try:
				extra = system_includes(headers)
			except RuntimeError as e:
				failed.append(f"{where}: {e}")
				continue
			path = os.path.join(tmp, f"{page.replace('/', '_')}_{line}.c")
			with open(path, "w", encoding="utf-8") as f:
				f.write(source(page, line, kind, opts, code))
			cmd = [cc, "-std=c11", *warnings, "-Werror", "-fsyntax-only", "-I", os.path.join(ROOT, "include"),
			       *extra, *(["-Wno-unused"] if kind != "whole" else []), path]
			r = subprocess.run(cmd, capture_output=True, text=True)
			counts[kind] += 1
			if r.returncode != 0:
				failed.append(f"{where} ({kind}): does not compile:\n" + r.stderr)
	total = sum(counts.values())
	print(f"check-doc-samples: compiled {total} ```c blocks of README.md and doc/*.md with {cc}: "
	      f"{counts['whole']} whole, {counts['top-level']} top-level, {counts['body']} body; {len(failed)} failed")
	for f in failed:
		print(f"check-doc-samples: {f}", file=sys.stderr)
	if failed:
		print("check-doc-samples: fix the block, or say what it is and what it is given with a "
		      "<!-- sample: ... --> line before it (this script's header lists the kinds)", file=sys.stderr)
		sys.exit(1)
	if total == 0:
		sys.exit("check-doc-samples: found no ```c block at all: the pages moved, or the fences changed")


if __name__ == "__main__":
	main()
