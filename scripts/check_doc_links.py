#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/**/*.md names a file or folder
that exists (Sphinx checks links between its own pages; links into the source tree,
such as ../src/io/summary_writer.cpp, are checked here). Exits 1 listing the broken ones.

    scripts/check_doc_links.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def links(path):
    """(line number, target) of the Markdown links outside code blocks."""
    in_code = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line.strip()):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for target in LINK.findall(line):
            yield number, target


def main():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for path in files:
        for number, target in links(path):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor on the same page
            file = target.split("#", 1)[0]
            if not (path.parent / file).exists():
                broken.append(f"{path.relative_to(ROOT)}:{number}: {target}")
    for line in broken:
        print("broken link:", line)
    print(f"check_doc_links: {len(files)} files, {len(broken)} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
