#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# scripts/check-docs-links.py -- every internal link of a generated HTML site leads somewhere.
#
#   python3 scripts/check-docs-links.py SITE_DIR
#
# Reads every *.html under SITE_DIR and resolves each href, src and (object) data that stays
# within the site: the file must exist inside SITE_DIR and, when the link has a #fragment,
# that file must hold an element with that id (or an <a name=...>).  External links (http:, https:, mailto:, ...)
# are counted but not followed: the check runs offline and judges only what the build made.
# A link to a file of the source tree (README's "examples/attach_child.c") is broken here
# even though it works on GitHub, since the installed HTML has no source tree beside it.
# Prints every broken link as "page: href (why)" and fails if there is one.
import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
	"""Collects one page's anchors (id, a name) and its outgoing links."""

	def __init__(self):
		super().__init__(convert_charrefs=True)
		self.anchors = set()
		self.links = []

	def handle_starttag(self, tag, attrs):
		a = dict(attrs)
		if a.get("id"):
			self.anchors.add(a["id"])
		if tag == "a" and a.get("name"):
			self.anchors.add(a["name"])
		for attr in ("href", "src", "data"):  # data: Doxygen embeds an SVG as <object data=...>
			if a.get(attr):
				self.links.append(a[attr])

	handle_startendtag = handle_starttag


def parse(path):
	p = Page()
	with open(path, encoding="utf-8", errors="replace") as f:
		p.feed(f.read())
	p.close()
	return p


def main():
	if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
		sys.exit("usage: check-docs-links.py SITE_DIR (the directory holding index.html)")
	site = os.path.realpath(sys.argv[1])
	pages = {}
	for d, _, files in os.walk(site):
		for f in files:
			if f.endswith(".html"):
				path = os.path.join(d, f)
				pages[path] = parse(path)

	broken, internal, external = [], 0, 0
	for path, page in sorted(pages.items()):
		rel = os.path.relpath(path, site)
		for href in page.links:
			url = urllib.parse.urlsplit(href)
			if url.scheme or url.netloc:
				external += 1  # http:, https:, mailto:, javascript: -- not ours to follow offline
				continue
			if not url.path and not url.fragment:
				continue  # href="" or "?query": the page itself
			internal += 1
			target = path if not url.path else os.path.realpath(
				os.path.join(os.path.dirname(path), urllib.parse.unquote(url.path)))
			if os.path.commonpath([site, target]) != site:
				broken.append(f"{rel}: {href} (leaves the site)")
				continue
			if not os.path.exists(target):
				broken.append(f"{rel}: {href} (no file {os.path.relpath(target, site)})")
				continue
			if url.fragment:
				if target not in pages:
					broken.append(f"{rel}: {href} (a #fragment into a file that is not HTML)")
				elif urllib.parse.unquote(url.fragment) not in pages[target].anchors:
					broken.append(f"{rel}: {href} (no id \"{url.fragment}\" in {os.path.relpath(target, site)})")

	for b in broken:
		print(f"check-docs-links: broken: {b}", file=sys.stderr)
	print(f"check-docs-links: {len(pages)} pages, {internal} internal links and anchors checked, "
	      f"{external} external not followed, {len(broken)} broken")
	if broken:
		print("check-docs-links: fix the link in the page's source (README.md, doc/*.md, the headers): "
		      "a heading's anchor there is the {#label} Doxygen gives it", file=sys.stderr)
		sys.exit(1)


if __name__ == "__main__":
	main()
