#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# doc/md-filter.py -- Doxygen's input filter for README.md and doc/*.md (FILTER_PATTERNS):
#
#   python3 doc/md-filter.py FILE.md      (Doxygen runs it; the page comes out on stdout)
#
# The pages are written for GitHub, where a heading's anchor is its text as a slug
# ("## plain (Windows)" is #plain-windows) and a link to another page is its path
# ("providers.md#plain-windows").  Doxygen gives headings anchors of its own (autotoc_md42)
# and turns "providers.md" into its page but leaves "providers.md#plain-windows" as it
# stands, a link to a file the HTML site does not have.  So that one source serves both, this
# filter hands Doxygen each heading with a {#label} made of its page and its GitHub slug, and
# rewrites links with a #fragment into @ref to that label; links to the examples become links
# to their pages in the site (doc/examples.dox).  The files themselves are not changed.
# Headings and links inside ``` blocks are left alone, and so is a page's title (its label
# would rename the page).
import os
import re
import sys

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
LINK = re.compile(r"\]\(([^()\s]+)\)")
FENCE = re.compile(r"^[ \t]*(```|~~~)")


def page_key(path):
	"""doc/providers.md -> doc_providers_md: unique across the site, as labels must be."""
	return re.sub(r"[^A-Za-z0-9]", "_", os.path.relpath(path, ROOT))


def slug(text):
	"""GitHub's anchor of a heading: lower case, markup and punctuation gone, spaces to hyphens."""
	text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
	text = text.strip().lower()
	text = re.sub(r"[^\w\- ]", "", text)
	return text.replace(" ", "-")


def headings(path):
	"""The slug of every heading of a page, in order, made unique as GitHub does (-1, -2)."""
	seen, out, fenced = {}, [], False
	with open(path, encoding="utf-8") as f:
		for line in f:
			if FENCE.match(line):
				fenced = not fenced
				continue
			m = None if fenced else HEADING.match(line)
			if not m:
				continue
			s = slug(m.group(2))
			n = seen.get(s, 0)
			seen[s] = n + 1
			out.append((len(m.group(1)), s if n == 0 else f"{s}-{n}"))
	return out


def title_slug(path):
	"""The slug of a page's level-1 title: a link to it is a link to the page."""
	for level, s in headings(path):
		if level == 1:
			return s
	return None


def rewrite_link(target, here):
	if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("@ref"):
		return target  # http:, mailto:, or Doxygen's own already
	path, _, frag = target.partition("#")
	dest = os.path.realpath(os.path.join(os.path.dirname(here), path)) if path else here
	if dest.endswith(".md") and frag and os.path.exists(dest):
		if frag == title_slug(dest):
			return path or target
		return f"@ref {page_key(dest)}-{frag}"
	rel = os.path.relpath(dest, ROOT)
	if re.match(r"^examples/[^/]+\.[ch]$", rel) and not frag:
		name = os.path.basename(rel)
		return name.replace(".", "_8") + "-example.html"
	return target


def main():
	here = os.path.realpath(sys.argv[1])
	key = page_key(here)
	labels = iter(headings(here))
	fenced = False
	with open(here, encoding="utf-8") as f:
		for line in f:
			if FENCE.match(line):
				fenced = not fenced
				sys.stdout.write(line)
				continue
			if fenced:
				sys.stdout.write(line)
				continue
			m = HEADING.match(line)
			if m:
				level, s = next(labels)
				if level > 1:
					line = f"{m.group(1)} {m.group(2)} {{#{key}-{s}}}\n"
			line = LINK.sub(lambda l: "](" + rewrite_link(l.group(1), here) + ")", line)
			sys.stdout.write(line)


if __name__ == "__main__":
	main()
