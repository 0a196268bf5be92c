#!/usr/bin/env python3
"""Every relative link and image in README.md and docs/*.md points at an existing file, and
every #anchor at a heading of the page it names (GitHub's anchors: lowercase, punctuation
dropped, spaces as hyphens); every repository path quoted as code (`engine/io/urdf.h`) exists.
Fails naming the file, the line and the link or path.

usage: check_links.py REPO_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
# a repository path quoted as code: `engine/io/urdf.h`, `assets/scenes/`
code_path = re.compile(r"`((?:engine|app|render|shaders|tests|scripts|assets|docs|third_party)/[\w./-]*)`")
link = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def anchors(page):
    out, fence = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        m = re.match(r"^#+\s+(.*)$", line)
        if m and not fence:
            a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = 1
            base = a
            while a in out:
                a = f"{base}-{n}"
                n += 1
            out.add(a)
    return out


bad, count = [], 0
for page in pages:
    # blank the fenced blocks (keeping their lines), then find links across line breaks:
    # an image's alt text may span lines
    lines, fence = [], False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
            line = ""
        lines.append("" if fence else line)
    text = "\n".join(lines)
    for m in link.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        count += 1
        n = text.count("\n", 0, m.start(1)) + 1
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        where = f"{page.relative_to(root)}:{n}: {target}"
        if not dest.exists():
            bad.append(f"{where}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
    for m in code_path.finditer(text):
        count += 1
        if not (root / m.group(1)).exists():
            n = text.count("\n", 0, m.start(1)) + 1
            bad.append(f"{page.relative_to(root)}:{n}: `{m.group(1)}`: no such file or folder")
if bad:
    print("links that do not resolve:")
    for b in bad:
        print("  " + b)
    sys.exit(1)
print(f"all {count} relative links and quoted paths in {len(pages)} pages resolve")
